#!/usr/bin/env bash
# Installs dependencies (idempotent), configures and builds one CMake preset.
#   scripts/build.sh [release|debug|asan]        (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
./scripts/install-deps.sh
jobs="$(nproc 2>/dev/null || echo 2)"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
