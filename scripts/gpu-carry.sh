#!/usr/bin/env bash
# Gathers what scripts/gpu-check.sh needs from a build into a small directory to carry to the GPU
# machine (see ../shared/GPU.md): the dlc tool, the GPU and conformance test runners, the host
# app, libdlc (shared, for the host app; static, for `dlc compile -o` there), the ONNX node
# tests and the TensorFlow test material. Stripped, the big parts xz-compressed (scripts/gpu-check.sh unpacks them), laid out
# like the build tree, so `scripts/gpu-check.sh DEST DEST/onnx-node-tests/node OUT` runs.
#   scripts/gpu-carry.sh [BUILD_DIR [DEST]]      (default: build/release .devbin)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
dest=${2:-.devbin}
rm -rf "$dest"
mkdir -p "$dest/tools/dlc" "$dest/tests" "$dest/runtime"
cp "$build/tools/dlc/dlc" "$dest/tools/dlc/"
mkdir -p "$dest/tools/kbench" && cp "$build/tools/kbench/kbench" "$dest/tools/kbench/"
cp "$build/tests/dlc_gpu_tests" "$build/tests/dlc_conformance_run" "$build/tests/dlc_host_app" \
  "$dest/tests/"
cp -L "$build/runtime/libdlc.so.0" "$dest/runtime/" # by its soname, a file (no links)
strip "$dest/tools/dlc/dlc" "$dest/tools/kbench/kbench" "$dest"/tests/* "$dest/runtime/libdlc.so.0"
xz -T2 -6 -c "$build/runtime/libdlc.a" > "$dest/runtime/libdlc.a.xz"
tar cf - -C "$build" onnx-node-tests | xz -T2 -6 > "$dest/onnx-node-tests.tar.xz"
# The TensorFlow tests (gpu-check.sh tf): encoded graphs, the protobuf module, the twins (made
# here: their generator needs protoc and python3-onnx).
mkdir -p "$dest/tf"
cp -r "$build/tests/tf/graphs" "$build/tests/tf/py" "$dest/tf/"
/usr/bin/python3 models/make_tf_models.py "$dest/tf/twins" > /dev/null
# The Python package (gpu-check.sh python): the extension as built here, and the headers to
# rebuild it against the carried libdlc.so for the GPU machine's Python when that differs.
mkdir -p "$dest/python" "$dest/include"
cp -r "$build/python/dlc" "$dest/python/"
cp -r /usr/include/pybind11 /usr/include/dlpack "$dest/include/"
du -sh "$dest"
