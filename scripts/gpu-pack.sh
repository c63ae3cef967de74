#!/bin/bash
# Builds, on this (GPU-less) machine, what scripts/gpu-check.sh and scripts/gpu-profile.sh run,
# for sm_90, into .gpu-pack/ in the repository root: the CUDA test binaries, hoshi_gpu_bench and
# tree_perf (bin/), the
# shared libraries they load besides the C library and the driver (lib/), and ptxas's
# resource logs (ptxas/), archived as .gpu-pack/pack.tar.xz (scripts/gpu-unpack.sh). The lent GPU machine's image has nvcc and CMake but not hoshi's build
# dependencies (Eigen, cxxopts, HDF5, libpng, GoogleTest), so it cannot configure hoshi; name
# .gpu-pack in the device tool's `carry` and gpu-check.sh runs the pack instead of building.
# The binaries need the glibc version recorded in .gpu-pack/GLIBC (GLIBC_2.34 or so, from the
# binaries' symbol versions; gpu-check.sh prints both).
#
# usage: scripts/gpu-pack.sh [BUILD_DIR]     (default build-gpu-pack)
#        scripts/gpu-pack.sh --sources-hash   (prints the hash of the sources a pack is built
#        from, .gpu-pack/SOURCES; gpu-check.sh compares it with the carried sources')
set -euo pipefail
cd "$(dirname "$0")/.."
# The sources the binaries are built from, hashed by content (the device machine's copy of the
# working tree may come without .git).
sources_hash() {
  find CMakeLists.txt src tree gpu io tests -type f \( -name '*.cpp' -o -name '*.hpp' -o \
    -name '*.cu' -o -name '*.cuh' -o -name '*.h' -o -name CMakeLists.txt \) -print0 |
    LC_ALL=C sort -z | xargs -0 sha1sum | sha1sum | cut -d' ' -f1
}
if [ "${1:-}" = --sources-hash ]; then
  sources_hash
  exit 0
fi
build=${1:-build-gpu-pack}
pack=.gpu-pack
# x86-64-v3 (AVX2): the GPU machine's host CPU is unknown here; -march=native would tie the
# binaries to this machine's (AVX-512, AMX) and could stop them with SIGILL there.
cmake -S . -B "$build" -DHOSHI_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DHOSHI_ARCH=x86-64-v3 >/dev/null
# The CUDA test binaries: test_gpu_*, test_cuda_* and the suites with CUDA instances (one test
# body, every backend: HOSHI_SKIP_IF_UNAVAILABLE); gpu-check.sh runs only the latter's "cuda" ones.
tests=$(cd tests && { ls test_gpu_*.cpp test_cuda_*.cpp; grep -l HOSHI_SKIP_IF_UNAVAILABLE test_*.cpp; } |
  sort -u | sed 's/\.cpp$//' | tr '\n' ' ')
# A failed build stops here: the pack would otherwise hold an earlier build's binaries, stamped
# with this commit (grep's status hid make's).
if ! make -C "$build" -j"$(nproc)" hoshi_gpu_bench tree_perf $tests >"$build/make.log" 2>&1; then
  grep -E 'error|Error' "$build/make.log" | head -20 || true
  echo "gpu-pack: the build failed (log: $build/make.log); nothing packed" >&2
  exit 1
fi
grep -E 'warning' "$build/make.log" | head -20 || true
rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib" "$pack/ptxas"
for t in $tests; do cp "$build/tests/$t" "$pack/bin/"; done
cp "$build/gpu/hoshi_gpu_bench" "$pack/bin/"
cp "$build/tree_perf" "$pack/bin/"  # the host build's thread scaling (scripts/gpu-profile.sh)
cp "$build"/ptxas/*.log "$pack/ptxas/"
strip "$pack"/bin/* 2>/dev/null || true
for f in "$pack"/bin/*; do
  ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libcuda)\.so' |
  while read -r lib; do cp -L "$lib" "$pack/lib/"; done
glibc=$(for f in "$pack"/bin/*; do objdump -T "$f" | grep -oE 'GLIBC_[0-9.]+'; done | sort -Vu | tail -1)
# The commit, with -dirty when the working tree differs from it (what was built).
git describe --always --dirty --abbrev=40 >"$pack/COMMIT" 2>/dev/null || echo unknown >"$pack/COMMIT"
echo "$glibc" >"$pack/GLIBC"
sources_hash >"$pack/SOURCES"
ls "$pack/bin" "$pack/lib"
# The device tool carries at most 64 MiB with the working tree, and every binary holds the same
# sm_90 device code (~6.6 MB): the pack travels as one xz archive (~10 MB, against ~106 MB),
# which scripts/gpu-unpack.sh (called by gpu-check.sh and gpu-profile.sh) unpacks there.
unpacked=$(du -sh "$pack" | cut -f1)
tar -C "$pack" -cJf "$build/pack.tar.xz" bin lib ptxas
rm -rf "$pack/bin" "$pack/lib" "$pack/ptxas"
mv "$build/pack.tar.xz" "$pack/"
echo "gpu-pack: $(du -sh "$pack" | cut -f1) in $pack ($unpacked unpacked; commit $(cat "$pack/COMMIT"), needs $glibc)"
