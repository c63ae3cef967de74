#!/usr/bin/env bash
# The default run, at 16384 particles: a Plummer sphere in Henon units for 10 time units, with the
# energy error printed and a rendered image of the final state (OUT/frame_001.png).
# Usage: examples/plummer.sh [OUT_DIR]
#        (HOSHI=path/to/hoshi, default the repository's build/hoshi; N=16384 particles,
#        T_END=10)
set -euo pipefail
source "$(dirname "$0")/python.sh"
HOSHI=${HOSHI:-$(cd "$(dirname "$0")/.." && pwd)/build/hoshi}
OUT=${1:-out_plummer}
N=${N:-16384}
T=${T_END:-10}
claim_out_dir "$OUT"
# The run's summary lines; a failed run stops the script with its status (a pipe into grep hid it).
log=$("$HOSHI" run --ic plummer -n "$N" --t-end "$T" --render-every "$T" --snapshot-every "$T" \
  --out "$OUT" --overwrite)
grep -E "^relative energy error|steps to" <<<"$log" || true
"$HOSHI" analyze "$OUT"/snapshot_*.hdf5 --csv "$OUT/lagrangian.csv" --overwrite
echo "image: $OUT/frame_001.png (t = $T), $OUT/frame_000.png (t = 0)"
