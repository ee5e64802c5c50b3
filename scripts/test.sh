#!/usr/bin/env bash
# Builds one preset and runs every test: unit tests (GoogleTest), FileCheck tests (lit), and
# the ONNX node-test conformance run (the node tests are generated into the build tree).
#   scripts/test.sh [release|debug|asan] [CTEST ARGS...]       (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
built=$(date +%s)
./scripts/build.sh "$preset"
echo "-- $preset built in $(( $(date +%s) - built )) s"
jobs="$(nproc 2>/dev/null || echo 2)"
ctest --preset "$preset" -j "$jobs" "$@"
