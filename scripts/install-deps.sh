#!/usr/bin/env bash
# Installs the Debian packages dlc needs to build and test. Idempotent: packages already
# present are skipped by apt. The CUDA toolkit (NVRTC, headers) is expected from the machine
# (/usr/local/cuda or CUDA_HOME); it is not a Debian package here.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  protobuf-compiler libprotobuf-dev libonnx-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libdlpack-dev
  libflatbuffers-dev flatbuffers-compiler libxxhash-dev
  libgtest-dev libgmock-dev
  llvm-14-tools python3 python3-numpy python3-onnx python3-protobuf python3-sklearn
  graphviz librsvg2-bin pybind11-dev python3-dev python3-pytest python3-pip python3-venv
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
