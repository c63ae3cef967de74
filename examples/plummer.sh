#!/usr/bin/env bash
# The default run, at 16384 particles: a Plummer sphere in Henon units for 10 time units, with the
# energy error printed and a rendered image of the final state (OUT/frame_001.png).
# Usage: examples/plummer.sh [OUT_DIR]
#        (HOSHI=path/to/hoshi, default the repository's build/hoshi)
set -euo pipefail
HOSHI=${HOSHI:-$(cd "$(dirname "$0")/.." && pwd)/build/hoshi}
OUT=${1:-out_plummer}
"$HOSHI" run --ic plummer -n 16384 --t-end 10 --render-every 10 --snapshot-every 10 \
  --out "$OUT" --overwrite | grep -E "^relative energy error|steps to" || true
"$HOSHI" analyze "$OUT"/snapshot_*.hdf5 --csv "$OUT/lagrangian.csv" --overwrite
echo "image: $OUT/frame_001.png (t = 10), $OUT/frame_000.png (t = 0)"
