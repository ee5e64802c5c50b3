#!/usr/bin/env bash
# ResNet-50 (batch 1, fp32, random weights) on dlc's CPU reference backend: load + first run,
# then the median of N more runs. A benchmark, not a test: it prints figures and checks nothing
# but that the run succeeds.
#
#   tools/bench/cpu_resnet50.sh [BUILD_DIR=build/release] [RUNS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
runs=${2:-3}
model=${TMPDIR:-/tmp}/dlc-bench-resnet50.onnx
[[ -f $model ]] || /usr/bin/python3 "$root/tools/bench/make_resnet50.py" "$model"
start=$(date +%s.%N)
"$build/tools/dlc/dlc" run "$model" --device cpu --random --benchmark "$runs"
end=$(date +%s.%N)
echo "cpu_resnet50: $(nproc) cores; whole command (load, first run, $runs more) took $(echo "$end - $start" | bc) s"
