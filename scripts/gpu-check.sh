#!/bin/bash
# The one command to run on a lent GPU (an H200): configure for sm_90, build, run the CUDA tests
# and the ptxas build check, then time the CUDA direct kernel (N = 2^12 .. 2^20) and the CUDA
# tree force (Plummer N = 2^16 .. 2^24) with CUDA events after a warm-up (median of repeats),
# each checked against the CPU double reference on sampled targets, and print one table
# (hoshi_gpu_bench, gpu/bench_gpu.cpp). Meant to finish within 5 minutes on an H200.
# The table is written to $OUT/gpu-check-table.txt when OUT is set (the device tool), else to
# BUILD/gpu-check-table.txt; copy it into docs/performance.md with the date and the device.
#
# usage: scripts/gpu-check.sh [BUILD_DIR]      (default build-gpu-check)
#   GPU_CHECK_DIRECT=12:20 GPU_CHECK_TREE=16:24 GPU_CHECK_REPEATS=5 override the sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu-check}
out_dir=${OUT:-$build}
mkdir -p "$out_dir"
log="$out_dir/gpu-check.log"
t0=$(date +%s)
stamp() { echo "== $(( $(date +%s) - t0 )) s: $*" | tee -a "$log"; }

stamp "configure (sm_90)"
cmake -S . -B "$build" -DHOSHI_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  >>"$log" 2>&1 || { tail -30 "$log"; exit 1; }
tests=$(cd tests && ls test_gpu_*.cpp test_cuda_*.cpp 2>/dev/null | sed 's/\.cpp$//' | tr '\n' ' ')
stamp "build hoshi_gpu_bench $tests"
make -C "$build" -j"$(nproc)" hoshi_gpu_bench $tests >>"$log" 2>&1 || { tail -40 "$log"; exit 1; }

stamp "device"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$log" || true

stamp "CUDA tests and the ptxas build check"
test_status=0
(cd "$build" && ctest -L 'gpu|build' --output-on-failure --timeout 300 &&
  ctest -R '^CudaBackend\.' --output-on-failure) 2>&1 | tee -a "$log" |
  grep -vE '^ *Start|Test +#|^\s+[0-9]+ - .*\(Skipped\)' || test_status=1
tests/check_ptxas.sh "$build/ptxas" 90 2>&1 | grep -v 'cub::' | tee -a "$log" || test_status=1

stamp "timing"
"$build/gpu/hoshi_gpu_bench" --direct "${GPU_CHECK_DIRECT:-12:20}" --tree "${GPU_CHECK_TREE:-16:24}" \
  --repeats "${GPU_CHECK_REPEATS:-5}" --out "$out_dir/gpu-check-table.txt" 2>&1 | tee -a "$log"
stamp "done; table in $out_dir/gpu-check-table.txt, log in $log"
exit $test_status
