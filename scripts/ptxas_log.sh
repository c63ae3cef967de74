#!/bin/sh
# CUDA compiler launcher for hoshi_gpu (gpu/CMakeLists.txt): runs the compile command given
# after LOGDIR and keeps ptxas's resource report (-Xptxas=-v: registers, shared memory,
# stack frame, spills per kernel and architecture) in LOGDIR/<object>.log instead of on the
# console. tests/check_ptxas.sh reads these logs.
# usage: ptxas_log.sh LOGDIR COMPILER ARGS...
logdir=$1
shift
obj=unknown
prev=
for a in "$@"; do
  [ "$prev" = "-o" ] && obj=$a
  prev=$a
done
mkdir -p "$logdir"
log="$logdir/$(basename "$obj").log"
tmp="$log.tmp.$$"
"$@" 2>"$tmp"
rc=$?
grep -E '^ptxas info|^    [0-9]+ bytes stack frame' "$tmp" >"$log"
grep -vE '^ptxas info|^    [0-9]+ bytes stack frame' "$tmp" >&2
rm -f "$tmp"
exit $rc
