#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU, from a build made elsewhere and carried
# there (nothing is built here; see ../shared/GPU.md; scripts/gpu-carry.sh gathers the build).
#
#   scripts/gpu-check.sh BUILD_DIR NODE_TESTS_DIR OUT_DIR [PART...]
#
# PARTs (default: all but bench):
#   unit        the GPU unit tests (dlc_gpu_tests; device tests skip without a GPU)
#   conformance the ONNX node tests on the GPU backend, no CPU fallback, arena poisoned,
#               checked against tests/conformance/gpu_known_failures.txt when it exists
#   conformance-update  the same run writing OUT_DIR/gpu_known_failures.txt (to check in)
#   sanitizer   compute-sanitizer memcheck and racecheck on the GPU unit tests
#   models      the bundled models with `dlc run --verify` (GPU against the reference backend)
#   library     the bundled models compiled to model libraries (`dlc compile -o`), run from the
#               host app (tests/dlc_host_app) on the GPU and compared with `dlc run`
#   tf          the TensorFlow frontend on the GPU: the NumPy-checked op graphs, the 54 real
#               TensorFlow graphs and the GraphDef/ONNX twins (tests/tf/; gpu-carry.sh carries
#               the encoded graphs, the generated protobuf module and the twins to BUILD_DIR/tf)
#   bench       tools/bench/gpu_bench.py: exported torchvision/transformers models, dlc against
#               PyTorch, microbenchmarks, compile times (needs PyTorch)
#   harness     tools/bench/harness.py: the same models as model libraries in the PyTorch
#               process, every side timed by one function (DLC_HARNESS_MODELS=resnet50,... to
#               keep some; DLC_HARNESS_VARIANT=NAME=FLAGS also times a build with those flags)
#   gemms       the same harness on single fp16 GEMMs against cuBLAS (8192^3, transformer shapes;
#               DLC_HARNESS_VARIANT too)
#   int8        the harness with --int8 on ResNet-50 (b1, b32) and BERT-base b8: each float16 row
#               also quantized by `dlc quantize` and timed int8 beside dlc fp16 and PyTorch by the
#               same function (issue 12's benchmark)
#   int8-variants  tools/bench/int8_variants.py: int8 ResNet-50 b32 and b1 under the flag sets
#               left open (--int8-pointwise-plain, --hopper-conv), with the fp16 model's
#               profile, lined up kernel by kernel (tools/bench/profile_compare.py)
#   attention   the harness on BERT and ViT compiled with --no-fused-attention (the unfused
#               path, to compare with the harness part; no torch.compile)
#   kbench      tools/kbench/kbench on $DLC_KBENCH_FILE (default tools/kbench/sm90.txt)
#   python      pytest over python/tests with the machine's python3 (test_dlc_gpu.py: torch
#               tensors in and out without a copy, the caller's stream, a GPU by number, 10,000
#               runs); the extension is rebuilt against the carried libdlc.so when the carried
#               one is for another Python
#   points      shape points: models/tiny_detector.onnx on the GPU alone against the CPU, its
#               profile (the shape point's host time) and the whole-run benchmark
# Logs and results go to OUT_DIR; a short table is printed last. Exit status 1 if a part failed.
set -uo pipefail
build=$(cd "$1" && pwd); nodes=$2; out=$3; shift 3
parts=("$@"); [[ ${#parts[@]} -gt 0 ]] || parts=(unit conformance sanitizer models library tf)
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export DLC_CACHE_DIR=${DLC_CACHE_DIR:-$out/../dlc-cache}
# A carried build (scripts/gpu-carry.sh) comes with its big parts compressed.
[[ -f $build/runtime/libdlc.a.xz && ! -f $build/runtime/libdlc.a ]] &&
  xz -dc "$build/runtime/libdlc.a.xz" > "$build/runtime/libdlc.a"
[[ -f $build/onnx-node-tests.tar.xz && ! -d $build/onnx-node-tests ]] &&
  tar xJf "$build/onnx-node-tests.tar.xz" -C "$build"
# A carried build keeps libdlc beside it: the host app loads libdlc.so
# from there and `dlc compile -o` links libdlc.a from there (with the machine's g++).
export LD_LIBRARY_PATH=$build/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export DLC_RUNTIME_ARCHIVE=${DLC_RUNTIME_ARCHIVE:-$build/runtime/libdlc.a}
declare -A status
run_part() { # name, command...
  local name=$1; shift
  echo "=== $name: $*"
  local start=$SECONDS
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$out/$name.log"
  status[$name]="rc=$rc, $((SECONDS - start)) s"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
for part in "${parts[@]}"; do
  case $part in
    unit) run_part unit "$build/tests/dlc_gpu_tests" --gtest_color=no ;;
    conformance)
      # Against the checked-in GPU-strict list when there is one: a test that passed and now
      # fails (or the reverse) fails the part.
      known=()
      [[ -f $root/tests/conformance/gpu_known_failures.txt ]] &&
        known=(--known "$root/tests/conformance/gpu_known_failures.txt")
      run_part conformance "$build/tests/dlc_conformance_run" --backend gpu --tests "$nodes" \
        --jobs "${DLC_JOBS:-12}" --report "$out/gpu_conformance.md" "${known[@]}" ;;
    conformance-update)
      # Writes OUT_DIR/gpu_known_failures.txt, the list to check in as
      # tests/conformance/gpu_known_failures.txt (then regenerate run_report.md on the CPU).
      run_part conformance-update "$build/tests/dlc_conformance_run" --backend gpu \
        --tests "$nodes" --jobs "${DLC_JOBS:-12}" --report "$out/gpu_conformance.md" \
        --known "$out/gpu_known_failures.txt" --update ;;
    sanitizer)
      # API errors are not memory errors (one test allocates too much on purpose).
      run_part memcheck compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
        "$build/tests/dlc_gpu_tests" --gtest_filter='-*Death*' --gtest_color=no
      run_part racecheck compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$build/tests/dlc_gpu_tests" --gtest_filter='-*Death*' --gtest_color=no ;;
    models)
      run_part models bash -c "
        set -e
        '$build/tools/dlc/dlc' run '$root/models/tiny_cnn.onnx' --random --dim N=4 --device gpu --verify
        '$build/tools/dlc/dlc' run '$root/models/mlp.onnx' --random --dim N=8 --device gpu --verify
        '$build/tools/dlc/dlc' run '$root/models/tiny_bert.onnx' --random --dim B=2 --dim S=16 --device gpu --verify
        # Issue 14's segmentation-style model on the GPU alone: --verify, then a CUDA-graph run
        # against the reference backend's output.
        u='$out'/tiny_unet
        '$build/tools/dlc/dlc' run '$root/models/tiny_unet.onnx' --random --dim N=2 --dim H=37 --dim W=29 --device gpu --no-cpu-fallback --verify
        '$build/tools/dlc/dlc' run '$root/models/tiny_unet.onnx' --random --dim N=2 --dim H=37 --dim W=29 --device cpu --save-inputs \$u-in -o \$u-cpu >/dev/null
        '$build/tools/dlc/dlc' run '$root/models/tiny_unet.onnx' --input x=\$u-in/x.npy --device gpu --no-cpu-fallback --compare logits=\$u-cpu/logits.npy | grep compare" ;;
    library)
      run_part library bash -c "
        set -e
        for spec in 'tiny_cnn N=1..8 N=4 x' 'mlp N=1..16 N=8 x' 'tiny_bert B=1..4 B=2 x S=16'; do
          set -- \$spec
          m=\$1; range=\$2; size=\$3; input=\$4; extra=\${5:-}
          lib='$out'/\$m.so
          '$build/tools/dlc/dlc' compile '$root'/models/\$m.onnx --dim \$range \${extra:+--dim \$extra} -o \$lib
          ls -l \$lib
          '$build/tools/dlc/dlc' run '$root'/models/\$m.onnx --random --dim \$size \${extra:+--dim \$extra} --device cpu --save-inputs '$out'/\$m-in >/dev/null
          '$build/tests/dlc_host_app' \$lib --input \$input='$out'/\$m-in/\$input.npy --device gpu --output-dir '$out'/\$m-out --threads 2
          for f in '$out'/\$m-out/*.npy; do
            '$build/tools/dlc/dlc' run '$root'/models/\$m.onnx --device cpu --input \$input='$out'/\$m-in/\$input.npy --compare \$(basename \$f .npy)=\$f --rtol 1e-3 --atol 1e-4 | grep compare
          done
        done
        # Arches: a library for sm_80 alone runs here from its PTX (driver JIT); one for a newer
        # arch alone is refused with both arches named.
        x='$out'/mlp-in/x.npy
        '$build/tools/dlc/dlc' compile '$root'/models/mlp.onnx --dim N=8 --gpu-arch sm_80 -o '$out'/mlp80.so
        '$build/tests/dlc_host_app' '$out'/mlp80.so --input x=\$x --device gpu --output-dir '$out'/mlp80-out
        '$build/tools/dlc/dlc' run '$root'/models/mlp.onnx --device cpu --input x=\$x --compare probs='$out'/mlp80-out/probs.npy --rtol 1e-3 --atol 1e-4 | grep compare
        '$build/tools/dlc/dlc' compile '$root'/models/mlp.onnx --dim N=8 --gpu-arch sm_100 -o '$out'/mlp100.so
        if '$build/tests/dlc_host_app' '$out'/mlp100.so --input x=\$x --device gpu --output-dir '$out'/mlp100-out; then
          echo 'UNEXPECTED: an sm_100-only library ran on this GPU'; exit 1
        else echo 'refused as expected (above)'; fi" ;;
    tf)
      run_part tf bash -c "
        set -e
        python3 '$root/tests/tf/check_ops.py' --dlc '$build/tools/dlc/dlc' --graphs '$build/tf/graphs' --device gpu
        python3 '$root/tests/tf/check_nnfusion.py' --dlc '$build/tools/dlc/dlc' --pymod '$build/tf/py' --device gpu
        python3 '$root/tests/tf/check_twins.py' --dlc '$build/tools/dlc/dlc' --workdir '$build/tf/twins' --no-generate --device gpu
        '$build/tools/dlc/dlc' run '$root/models/tiny_cnn_tf.pb' --random --dim image_d0=4 --device gpu --verify
        '$build/tools/dlc/dlc' run '$build/tf/twins/twin_bert.pb' --random --device gpu --verify
        # The bundled TensorFlow model as a model library, run from the host app on the GPU.
        '$build/tools/dlc/dlc' compile '$root/models/tiny_cnn_tf.pb' --dim image_d0=1..8 -o '$out/tiny_cnn_tf.so'
        '$build/tools/dlc/dlc' run '$root/models/tiny_cnn_tf.pb' --random --dim image_d0=4 --device cpu --save-inputs '$out/tf-in' >/dev/null
        '$build/tests/dlc_host_app' '$out/tiny_cnn_tf.so' --input image='$out/tf-in/image.npy' --device gpu --output-dir '$out/tf-out'
        '$build/tools/dlc/dlc' run '$root/models/tiny_cnn_tf.pb' --device cpu --input image='$out/tf-in/image.npy' --compare probs='$out/tf-out/probs.npy' --rtol 1e-3 --atol 1e-4 | grep compare" ;;
    bench) run_part bench python3 "$root/tools/bench/gpu_bench.py" --dlc "$build/tools/dlc/dlc" \
             --host-app "$build/tests/dlc_host_app" --out "$out" ;;
    harness) run_part harness python3 "$root/tools/bench/harness.py" --dlc "$build/tools/dlc/dlc" \
               --out "$out" ${DLC_HARNESS_MODELS:+--models "$DLC_HARNESS_MODELS"} \
               ${DLC_HARNESS_VARIANT:+--variant "$DLC_HARNESS_VARIANT"} ;;
    gemms) run_part gemms python3 "$root/tools/bench/harness.py" --dlc "$build/tools/dlc/dlc" \
             --out "$out" --gemms ${DLC_HARNESS_VARIANT:+--variant "$DLC_HARNESS_VARIANT"} ;;
    int8) run_part int8 python3 "$root/tools/bench/harness.py" --dlc "$build/tools/dlc/dlc" \
            --out "$out/int8" --models resnet50:1:float16,resnet50:32:float16,bert_base --int8 ;;
    int8-variants) run_part int8-variants python3 "$root/tools/bench/int8_variants.py" \
                     --dlc "$build/tools/dlc/dlc" --out "$out/int8-variants" \
                     --variant plain=--int8-pointwise-plain --variant hc=--hopper-conv \
                     --variant plainhc="--int8-pointwise-plain --hopper-conv" ;;
    attention) run_part attention python3 "$root/tools/bench/harness.py" --dlc "$build/tools/dlc/dlc" \
                 --out "$out/attention" --models bert_base,vit_b_16 --no-fused-attention --no-compile ;;
    python)
      run_part python bash -c "
        set -e
        pkg='$out'/pydlc/dlc; mkdir -p \$pkg
        cp '$root'/python/dlc/__init__.py '$root'/python/dlc/__main__.py \$pkg/
        suffix=\$(python3 -c 'import sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))')
        inc=\$(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"include\"])')
        if [[ -f '$build'/python/dlc/_dlc\$suffix ]]; then cp '$build'/python/dlc/_dlc\$suffix \$pkg/
        else g++ -O2 -shared -fPIC -std=c++20 -I\$inc -I'$build'/include -I'$root'/runtime \\
               '$root'/python/dlc_python.cc -L'$build'/runtime -l:libdlc.so.0 \\
               -Wl,-rpath,'$build'/runtime -o \$pkg/_dlc\$suffix; fi
        DLC_CLI='$build'/tools/dlc/dlc DLC_SOURCE_DIR='$root' PYTHONPATH='$out'/pydlc \\
          python3 -m pytest -q -p no:cacheprovider -rs '$root'/python/tests" ;;
    points)
      run_part points bash -c "
        set -e
        d='$out'/detector; m='$root'/models/tiny_detector.onnx
        '$build/tools/dlc/dlc' run \$m --random --dim N=2 --dim H=64 --dim W=96 --device cpu --save-inputs \$d-in -o \$d-cpu >/dev/null
        for o in selected det.boxes det.scores; do cmp=\"\$cmp --compare \$o=\$d-cpu/\$o.npy\"; done
        '$build/tools/dlc/dlc' run \$m --input x=\$d-in/x.npy --device gpu --no-cpu-fallback \$cmp | grep compare
        '$build/tools/dlc/dlc' run \$m --input x=\$d-in/x.npy --device gpu --no-cpu-fallback --profile --profile-runs 50 | tail -n 40
        '$build/tools/dlc/dlc' run \$m --input x=\$d-in/x.npy --device gpu --no-cpu-fallback --benchmark 200 | grep -E 'benchmark|median'" ;;
    kbench) run_part kbench "$build/tools/kbench/kbench" \
              --file "$root/${DLC_KBENCH_FILE:-tools/kbench/sm90.txt}" --runs 30 ;;
    *) echo "unknown part '$part'"; exit 2 ;;
  esac
done
echo
echo "| part | result |"
echo "|---|---|"
fail=0
for k in "${!status[@]}"; do
  echo "| $k | ${status[$k]} |"
  [[ ${status[$k]} == rc=0,* ]] || fail=1
done
exit $fail
