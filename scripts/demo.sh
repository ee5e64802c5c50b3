#!/usr/bin/env bash
# The main job on a bundled model: set up, build, inspect the model, run the optimisation
# pipeline over it printing the IR after each pass, then run it on random inputs (on the CPU
# reference backend; the GPU backend comes later) and print its outputs.
#   scripts/demo.sh [MODEL [NAME=SIZE ...]]    (default: models/tiny_cnn.onnx N=1)
# NAME=SIZE give the sizes of the model's symbolic input dims.
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-models/tiny_cnn.onnx}"
shift || true
dims=("$@")
[ ${#dims[@]} -gt 0 ] || dims=(N=1)
./scripts/build.sh release
dlc=build/release/tools/dlc/dlc
echo "== dlc inspect $model"
"$dlc" inspect "$model"
echo
echo "== dlc opt $model -p infer-shapes,fold-constants,simplify,cse,dce --print-ir-after-all"
"$dlc" opt "$model" -p 'infer-shapes,fold-constants,simplify,cse,dce' --print-ir-after-all
echo
echo "== dlc run $model --random ${dims[*]/#/--dim } --output-dir build/demo-out"
dim_args=()
for d in "${dims[@]}"; do dim_args+=(--dim "$d"); done
"$dlc" run "$model" --random "${dim_args[@]}" --output-dir build/demo-out
