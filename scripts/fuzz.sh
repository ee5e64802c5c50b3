#!/usr/bin/env bash
# Fuzzes dlc's input surfaces with the libFuzzer executables of the `fuzz` preset
# (tests/fuzz/README.md), each target for SECONDS, two at a time, and prints per target the
# executions, the coverage (libFuzzer's `cov:` edges and `ft:` features) and what was found.
# Seeds: the checked-in corpus, the past findings and the same seed folders as the replay tests
# (the bundled models, the ONNX node tests of build/release, the TensorFlow graphs, the lit tests).
#   scripts/fuzz.sh SECONDS [TARGET...]          (default: every target)
# Working corpora, logs and crash inputs go to build/fuzz-runs/<target>/.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(onnx_import tf_import text_ir npy tensor_proto package pipeline)
bin=build/fuzz/tests/fuzz
nodes=build/release/onnx-node-tests/node
out=build/fuzz-runs
seeds() {
  case $1 in
    onnx_import | pipeline) echo "models $nodes" ;;
    tensor_proto) echo "$nodes" ;;
    tf_import) echo "tests/tf/nnfusion tests/tf/graphs" ;;
    text_ir) echo "tests/lit" ;;
  esac
}
dict() {
  case $1 in
    onnx_import) echo tests/fuzz/dict/onnx.dict ;;
    tf_import) echo tests/fuzz/dict/tf.dict ;;
    *) echo "tests/fuzz/dict/$1.dict" ;;
  esac
}
fuzz_one() {
  local t=$1 dir=$out/$1
  mkdir -p "$dir/corpus" "$dir/crashes"
  local d
  d=$(dict "$t")
  # shellcheck disable=SC2046
  "$bin/dlc_fuzz_$t" "$dir/corpus" "tests/fuzz/corpus/$t" "tests/fuzz/findings/$t" $(seeds "$t") \
    ${d:+-dict=$d} -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/" > "$dir/log" 2>&1
  echo "$?" > "$dir/rc"
}
for t in "${targets[@]}"; do
  [[ -x $bin/dlc_fuzz_$t ]] || { echo "no $bin/dlc_fuzz_$t: cmake --preset fuzz && cmake --build --preset fuzz"; exit 2; }
done
running=0
for t in "${targets[@]}"; do
  if ((running == 2)); then wait -n; running=1; fi
  echo "fuzzing $t for $secs s"
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
printf '%-14s %5s %12s %8s %8s %9s %s\n' target rc execs cov ft corpus findings
for t in "${targets[@]}"; do
  log=$out/$t/log
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$')
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' <<< "$last" | grep -o '[0-9]*$')
  ft=$(grep -o 'ft: [0-9]*' <<< "$last" | grep -o '[0-9]*$')
  corp=$(grep -o 'corp: [0-9]*' <<< "$last" | grep -o '[0-9]*$')
  found=$(find "$out/$t/crashes" -type f | wc -l)
  printf '%-14s %5s %12s %8s %8s %9s %s\n' "$t" "$(cat "$out/$t/rc")" "${execs:-?}" "${cov:-?}" \
    "${ft:-?}" "${corp:-?}" "$found"
done
