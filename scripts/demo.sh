#!/usr/bin/env bash
# The main job on a bundled model: set up, build, inspect the model, run the optimisation
# pipeline over it printing the IR after each pass, run it on random inputs (on the GPU when
# there is one, else on the CPU reference backend), then ship it: compile it to a model library
# (`dlc compile -o model.so`), install dlc into a prefix, build the host app (tools/host_app)
# against the installed package, run the library from it and compare with `dlc run`. Then the
# same for the bundled TensorFlow GraphDef, models/tiny_cnn_tf.pb.
#   scripts/demo.sh [MODEL [NAME=SIZE ...]]    (default: models/tiny_cnn.onnx N=1)
# NAME=SIZE give the sizes of the model's symbolic input dims. Everything goes to build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-models/tiny_cnn.onnx}"
shift || true
dims=("$@")
[ ${#dims[@]} -gt 0 ] || dims=(N=1)
# Only what the demo runs: the dlc tool and libdlc (which `dlc compile -o` links and the host
# app uses). scripts/test.sh builds the tests.
./scripts/build.sh release dlc dlc_shared dlc_static
dlc=build/release/tools/dlc/dlc
demo=build/demo
rm -rf "$demo"
dim_args=()
for d in "${dims[@]}"; do dim_args+=(--dim "$d"); done
echo "== dlc inspect $model"
"$dlc" inspect "$model"
echo
echo "== dlc opt $model -p infer-shapes,fold-constants,simplify,cse,dce --print-ir-after-all"
"$dlc" opt "$model" -p 'infer-shapes,fold-constants,simplify,cse,dce' --print-ir-after-all
echo
echo "== dlc run $model --random ${dim_args[*]} --save-inputs $demo/inputs --output-dir $demo/out"
"$dlc" run "$model" --random "${dim_args[@]}" --save-inputs "$demo/inputs" --output-dir "$demo/out"
echo
echo "== dlc compile $model ${dim_args[*]} -o $demo/model.so"
"$dlc" compile "$model" "${dim_args[@]}" -o "$demo/model.so"
echo
echo "== install dlc into $demo/prefix; build tools/host_app against the installed package"
cmake --install build/release --prefix "$demo/prefix" >/dev/null
cmake -S tools/host_app -B "$demo/host_app" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PWD/$demo/prefix" >/dev/null
cmake --build "$demo/host_app" >/dev/null
input_args=()
for f in "$demo"/inputs/*.npy; do
  name=$(basename "$f" .npy)
  input_args+=(--input "$name=$f")
done
echo "== host_app $demo/model.so ${input_args[*]} --output-dir $demo/host-out"
"$demo/host_app/host_app" "$demo/model.so" "${input_args[@]}" --output-dir "$demo/host-out"
echo
compare_args=()
for f in "$demo"/host-out/*.npy; do
  compare_args+=(--compare "$(basename "$f" .npy)=$f")
done
echo "== dlc run $model (same inputs) ${compare_args[*]}: the library against dlc run"
"$dlc" run "$model" "${input_args[@]}" "${compare_args[@]}" --rtol 1e-3 --atol 1e-5
echo
# The same job on the bundled TensorFlow model: a frozen NHWC GraphDef, `.pb` told from ONNX
# by its content, Placeholder 'image' with a -1 batch dim (the symbol image_d0).
tf=models/tiny_cnn_tf.pb
echo "== dlc inspect $tf (a TensorFlow frozen GraphDef)"
"$dlc" inspect "$tf"
echo
echo "== dlc run $tf --random --dim image_d0=1 --save-inputs $demo/tf-inputs --output-dir $demo/tf-out"
"$dlc" run "$tf" --random --dim image_d0=1 --save-inputs "$demo/tf-inputs" --output-dir "$demo/tf-out"
echo
echo "== dlc compile $tf --dim image_d0=1 -o $demo/model_tf.so"
"$dlc" compile "$tf" --dim image_d0=1 -o "$demo/model_tf.so"
echo
echo "== host_app $demo/model_tf.so --input image=$demo/tf-inputs/image.npy --output-dir $demo/tf-host-out"
"$demo/host_app/host_app" "$demo/model_tf.so" --input image="$demo/tf-inputs/image.npy" \
  --output-dir "$demo/tf-host-out"
echo
echo "== dlc run $tf (same input) --compare probs=$demo/tf-host-out/probs.npy: the library against dlc run"
"$dlc" run "$tf" --input image="$demo/tf-inputs/image.npy" \
  --compare probs="$demo/tf-host-out/probs.npy" --rtol 1e-3 --atol 1e-5
