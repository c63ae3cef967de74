#!/bin/sh
# Build check (ctest label "build", runs without a GPU): prints every CUDA kernel's registers,
# shared memory, stack frame and spills per architecture, from ptxas's report of the real
# build (scripts/ptxas_log.sh keeps it in build/ptxas/*.log), and fails when
#   * the direct kernel (direct_forces_kernel) uses local memory: any stack frame or spill;
#   * an architecture of CMAKE_CUDA_ARCHITECTURES has no report for the direct kernel (so the
#     check cannot pass vacuously);
#   * the tree walk kernel spills (reported; a stack frame is allowed there).
# usage: check_ptxas.sh LOGDIR "80;90"
set -eu
logdir=$1
archs=$(echo "$2" | tr ';' ' ' | sed 's/-real//g; s/-virtual//g')
if ! ls "$logdir"/*.log >/dev/null 2>&1; then
  echo "check_ptxas: no ptxas logs in $logdir (build hoshi_gpu first)" >&2
  exit 1
fi
table=$(cat "$logdir"/*.log | awk '
  /Compiling entry function/ {
    match($0, /function '\''[^'\'']+'\''/); name = substr($0, RSTART + 10, RLENGTH - 11)
    match($0, /for '\''sm_[0-9a-z]+'\''/); arch = substr($0, RSTART + 8, RLENGTH - 9)
    entry = 1; next
  }
  entry && /bytes stack frame/ {
    stack = $1; spill_st = $5; spill_ld = $9; next
  }
  entry && /Used [0-9]+ registers/ {
    match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15)
    smem = 0
    if (match($0, /[0-9]+ bytes smem/)) smem = substr($0, RSTART, RLENGTH - 11)
    print arch, regs, smem, stack, spill_st, spill_ld, name
    entry = 0
  }' | sort -u | sort -k7,7 -k1,1)
status=0
printf '%-6s %5s %6s %6s %7s %7s  %s\n' arch regs smem stack spill_st spill_ld kernel
echo "$table" | while read -r arch regs smem stack st ld name; do
  short=$(echo "$name" | c++filt | sed -E 's/\(anonymous namespace\):://g; s/^void //; s/>\(.*\)$/>/; s/^([A-Za-z0-9_:]+)\(.*$/\1/')
  case "$short" in
    *cub::*) short=$(echo "$short" | cut -c1-70) ;;
  esac
  printf 'sm_%-3s %5s %6s %6s %7s %7s  %s\n' "$arch" "$regs" "$smem" "$stack" "$st" "$ld" "$short"
done
for a in $archs; do
  # A symbolic list (all-major, native): require a report for some architecture.
  case "$a" in *[!0-9]*) a='.*' ;; esac
  n=$(echo "$table" | awk -v a="^$a\$" '$1 ~ a && $7 ~ /direct_forces_kernel/' | wc -l)
  if [ "$n" -eq 0 ]; then
    echo "FAIL: no ptxas report of direct_forces_kernel for sm_$a" >&2
    status=1
  fi
done
bad=$(echo "$table" | awk '$7 ~ /direct_forces_kernel/ && ($4 > 0 || $5 > 0 || $6 > 0)')
if [ -n "$bad" ]; then
  echo "FAIL: the direct kernel uses local memory (stack frame or spills):" >&2
  echo "$bad" | c++filt >&2
  status=1
fi
bad=$(echo "$table" | awk '$7 ~ /tree_walk(_groups|_lists)?_kernel/ && ($5 > 0 || $6 > 0)')
if [ -n "$bad" ]; then
  echo "FAIL: a tree walk kernel spills registers:" >&2
  echo "$bad" | c++filt >&2
  status=1
fi
[ $status -eq 0 ] && echo "check_ptxas: direct kernel without local memory on sm_$(echo $archs | sed 's/ /, sm_/g')"
exit $status
