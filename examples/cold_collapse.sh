#!/usr/bin/env bash
# Cold collapse of a uniform sphere: the time of deepest potential energy against the
# analytic free-fall time t_ff = (pi/2) sqrt(R^3 / (2 G M)) = 1.1107 (R = G = M = 1).
# Usage: examples/cold_collapse.sh [OUT_DIR]
#        (HOSHI=path/to/hoshi, default the repository's build/hoshi;
#        N=2000 particles)
set -euo pipefail
source "$(dirname "$0")/python.sh"
HOSHI=${HOSHI:-$(cd "$(dirname "$0")/.." && pwd)/build/hoshi}
OUT=${1:-out_cold_collapse}
N=${N:-2000}
# One particle has no potential energy to deepen (it printed t_c / t_ff = 0.000).
if [[ "$N" =~ ^[0-9]+$ ]] && (( N < 2 )); then
  echo "cold_collapse.sh: N=$N: a collapse needs at least 2 particles" >&2
  exit 2
fi
require_python
claim_out_dir "$OUT"
"$HOSHI" run --ic uniform -n "$N" --seed 17 --solver direct --softening 0.02 \
  --dt 0.002 --t-end 1.4 --output-every 0.01 --out "$OUT" --overwrite --quiet >/dev/null
"$PY" - "$OUT/energy.csv" "$N" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t, w = min(((float(r["time"]), float(r["potential"])) for r in rows), key=lambda x: x[1])
t_ff = math.pi / 2 * math.sqrt(1 / 2)
n = int(sys.argv[2])
print(f"collapse time (deepest potential energy) t_c = {t:.3f}")
print(f"analytic free-fall time               t_ff = {t_ff:.4f}")
print(f"t_c / t_ff = {t / t_ff:.3f}  (discreteness: 0.5/sqrt(N/2) = {0.5 / math.sqrt(n / 2):.3f} per sigma)")
PY
