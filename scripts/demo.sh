#!/usr/bin/env bash
# The main job on a bundled model: set up, build, then inspect the model and run the
# optimisation pipeline over it, printing the IR after each pass.
#   scripts/demo.sh [MODEL]        (default: models/tiny_cnn.onnx)
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-models/tiny_cnn.onnx}"
./scripts/build.sh release
dlc=build/release/tools/dlc/dlc
echo "== dlc inspect $model"
"$dlc" inspect "$model"
echo
echo "== dlc opt $model -p infer-shapes,fold-constants,simplify,cse,dce --print-ir-after-all"
"$dlc" opt "$model" -p 'infer-shapes,fold-constants,simplify,cse,dce' --print-ir-after-all
