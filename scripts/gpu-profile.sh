#!/bin/bash
# Profile of the CUDA tree walks on a lent GPU, to run after scripts/gpu-check.sh in the same
# device call (it uses the carried .gpu-pack of scripts/gpu-pack.sh): Nsight Compute (ncu, with
# the clocks left alone) on one launch of each tree walk kernel at N = 2^20 (speed of light,
# occupancy, warp states and stall reasons, memory, the source lines where warps stall), and
# the scaling of the host tree build over OpenMP threads (tree_perf: keys, sort, build,
# moments), which bounds a device-resident step. Writes $OUT/ncu_<kernel>.txt and
# $OUT/host_build.txt (or into the current directory without OUT).
#
# With PROFILE_DIRECT (variants of hoshi_gpu_bench --direct-targets, e.g. "2 2p 4p"), also the
# direct kernel at N = 2^18 (PROFILE_DIRECT_N), one launch per variant: $OUT/ncu_direct_V.txt,
# to compare the issue efficiency of the tile schedules (docs/perf-gpu.md).
#
# usage: scripts/gpu-profile.sh      (PROFILE_N=1048576 PROFILE_THREADS="1 4 16"
#                                    PROFILE_KERNELS="tree_walk_kernel tree_walk_groups_kernel
#                                                     tree_walk_lists_kernel" (also
#                                                     tree_walk_lists7_kernel, ..._lists8_...)
#                                    (or none) PROFILE_DIRECT="" PROFILE_DIRECT_N=262144)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-.}
pack=.gpu-pack
scripts/gpu-unpack.sh  # the carried pack travels as one archive
export LD_LIBRARY_PATH="$PWD/$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
n=${PROFILE_N:-1048576}
log2n=$(awk -v n="$n" 'BEGIN { print int(log(n) / log(2) + 0.5) }')
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)
if [ -n "$ncu" ]; then
  for kernel in ${PROFILE_KERNELS:-tree_walk_kernel tree_walk_groups_kernel tree_walk_lists_kernel}; do
    case $kernel in
      none) continue ;;  # PROFILE_KERNELS=none: no tree kernel
      tree_walk_kernel) walk=particle ;;
      tree_walk_lists*_kernel) walk=${kernel#tree_walk_} walk=${walk%_kernel} ;;  # lists, lists7, lists8
      *) walk=group ;;
    esac
    # The third launch of the kernel: after the bootstrap's barnes94 walk and the first
    # relative one, as in a run's steady state.
    timeout 120 "$ncu" --clock-control none -k "regex:$kernel\$" --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats \
      --section ComputeWorkloadAnalysis --section SourceCounters \
      "$pack/bin/hoshi_gpu_bench" --direct 0:0 --tree "$log2n:$log2n" --step 0:0 --walk "$walk" \
      --repeats 1 --samples 16 >"$out/ncu_$kernel.txt" 2>&1
    echo "ncu $kernel: rc=$?"
    grep -E "Duration|Achieved Occupancy|Registers Per|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" \
      "$out/ncu_$kernel.txt" | head -16
  done
  dn=${PROFILE_DIRECT_N:-262144}
  log2dn=$(awk -v n="$dn" 'BEGIN { print int(log(n) / log(2) + 0.5) }')
  for variant in ${PROFILE_DIRECT:-}; do
    # The second launch: after the warm-up call.
    timeout 120 "$ncu" --clock-control none -k "regex:direct_forces_kernel" --launch-skip 1 \
      --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --section SourceCounters \
      "$pack/bin/hoshi_gpu_bench" --direct "$log2dn:$log2dn" --tree 0:0 --step 0:0 \
      --direct-targets "$variant" --repeats 1 --samples 16 >"$out/ncu_direct_$variant.txt" 2>&1
    echo "ncu direct $variant: rc=$?"
    grep -E "Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Ipc|Stall Barrier|Stall Long" \
      "$out/ncu_direct_$variant.txt" | head -12
  done
else
  echo "ncu not found: no kernel profile"
fi
if [ -x "$pack/bin/tree_perf" ]; then
  for t in ${PROFILE_THREADS:-1 4 16}; do
    echo "threads $t: $(OMP_NUM_THREADS=$t timeout 60 "$pack/bin/tree_perf" "$n" 3 0.65 128 relative 0.02)"
  done | tee "$out/host_build.txt"
fi
