#!/usr/bin/env bash
# Force error against opening angle on a Hernquist halo: tree (the group walk, monopole and
# quadrupole, barnes94 and bmax criteria) against the double-precision direct
# sum on K random targets, tabulated by `hoshi accuracy` and plotted as a PNG; each target's
# errors (--errors) plotted as distributions.
# Usage: examples/accuracy_vs_theta.sh [OUT_DIR]
#        (HOSHI=path/to/hoshi, default the repository's build/hoshi;
#        N and TARGETS override the sizes; the plots need matplotlib, see examples/python.sh)
set -euo pipefail
source "$(dirname "$0")/python.sh"
HOSHI=${HOSHI:-$(cd "$(dirname "$0")/.." && pwd)/build/hoshi}
OUT=${1:-out_accuracy}
N=${N:-100000}
TARGETS=${TARGETS:-1000}
check_python_setting
claim_out_dir "$OUT" accuracy.png errors.png
"$HOSHI" accuracy --ic hernquist -n "$N" --seed 1 --softening 0.001 --targets "$TARGETS" \
  --theta 0.3,0.4,0.5,0.6,0.7,0.8 --criterion barnes94,bmax --order 1,2 --walk group \
  --csv "$OUT/accuracy.csv" --errors "$OUT/errors.csv" --overwrite
echo "table: $OUT/accuracy.csv; per target: $OUT/errors.csv"
if plots_available; then
  "$PY" "$(dirname "$0")/accuracy_vs_theta.py" "$OUT/accuracy.csv" -o "$OUT/accuracy.png"
  # The distributions behind the percentiles, for the quadrupole with barnes94.
  "$PY" "$(dirname "$0")/error_distribution.py" "$OUT/errors.csv" --where criterion=barnes94 \
    --where order=2 -o "$OUT/errors.png"
  echo "plot: $OUT/accuracy.png, distributions: $OUT/errors.png"
fi
