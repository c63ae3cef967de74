#!/usr/bin/env bash
# hoshi setup: installs what is missing on a fresh Debian/Ubuntu machine, configures and
# builds a Release build in build/, then optionally runs the default simulation or the tests.
#
#   scripts/setup.sh          install + build
#   scripts/setup.sh run      install + build + `hoshi run` (Plummer sphere, defaults)
#   scripts/setup.sh test     install + build + every test (C++ via CTest, Python readers)
#
# Environment: BUILD_DIR (default build), JOBS (default: nproc), HOSHI_CMAKE_ARGS (extra
# cmake arguments, e.g. -DHOSHI_CUDA=OFF).
set -euo pipefail

mode="${1:-build}"
case "$mode" in build | run | test) ;; *)
  echo "usage: scripts/setup.sh [build|run|test]" >&2
  exit 2
  ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
jobs="${JOBS:-$(nproc)}"

# ---- system packages (only those that are absent) ---------------------------------------
apt_packages=(build-essential cmake pkg-config libeigen3-dev libcxxopts-dev libgtest-dev
  libgmock-dev libbenchmark-dev libhdf5-dev hdf5-tools libpng-dev libyaml-cpp-dev clang
  libclang-rt-14-dev
  python3 python3-venv python3-pip)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---- Python packages for the reader tests and the example plots (a venv in .venv) -------
if [ "$mode" = test ]; then
  venv="$root/.venv"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  py_packages=(numpy h5py pytest matplotlib yt pynbody)
  if ! "$venv/bin/python" -c "import numpy, h5py, pytest, matplotlib, yt, pynbody" 2>/dev/null; then
    echo "setup: installing Python packages ${py_packages[*]} into .venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${py_packages[@]}"
  fi
  export PATH="$venv/bin:$PATH"
fi

# ---- CUDA: built when nvcc is present (no GPU needed to compile) ------------------------
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
# The SASS check (tests/check_sass.py) reads the kernels with cuobjdump (which runs nvdisasm),
# which this toolkit may lack (nvcc and ptxas only): NVIDIA's wheels of both, into .venv.
if [ "$mode" = test ] && { command -v nvcc >/dev/null 2>&1 || [ -n "${CUDACXX:-}" ]; } &&
  ! command -v cuobjdump >/dev/null 2>&1 &&
  ! compgen -G "$venv/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm" >/dev/null; then
  echo "setup: installing nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm into .venv (SASS check)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check nvidia-cuda-cuobjdump \
    nvidia-cuda-nvdisasm ||
    echo "setup: the cuobjdump/nvdisasm wheels were not installed; the SASS check will be skipped"
fi

# ---- configure and build ----------------------------------------------------------------
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${HOSHI_CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"

case "$mode" in
  run)
    cd "$root"
    "$build/hoshi" run --snapshot-every 10 --overwrite
    ;;
  test)
    cd "$build"
    ctest --output-on-failure -j "$jobs" --timeout 900
    ;;
esac
