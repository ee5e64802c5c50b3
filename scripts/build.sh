#!/usr/bin/env bash
# Installs dependencies (idempotent), configures and builds one CMake preset: every target, or
# only the ones named (the demo builds dlc and libdlc, not the tests).
#   scripts/build.sh [release|debug|asan] [TARGET...]        (default: release, all targets)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
targets=()
for t in "$@"; do targets+=(--target "$t"); done
./scripts/install-deps.sh
jobs="$(nproc 2>/dev/null || echo 2)"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake --preset "$preset" "${launcher[@]}" >/dev/null
cmake --build --preset "$preset" -j "$jobs" "${targets[@]}"
