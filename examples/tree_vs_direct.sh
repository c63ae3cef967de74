#!/usr/bin/env bash
# The same Plummer run (N = 2048, dt = 1/64, Henon units, 10 time units) with the tree and with direct
# summation: energy error and Lagrangian radii over time side by side
# (OUT/tree_vs_direct.png when matplotlib is installed, OUT/*.csv always).
# Usage: examples/tree_vs_direct.sh [OUT_DIR]
#        (HOSHI=path/to/hoshi, default the repository's build/hoshi; N=2048 particles,
#        T_END=10)
set -euo pipefail
source "$(dirname "$0")/python.sh"
HOSHI=${HOSHI:-$(cd "$(dirname "$0")/.." && pwd)/build/hoshi}
OUT=${1:-out_tree_vs_direct}
N=${N:-2048}
T=${T_END:-10}
require_python
claim_out_dir "$OUT" tree_vs_direct.png
# Twenty snapshots over the run, the last at its end (0.5 for the default 10).
every=$(awk -v t="$T" 'BEGIN { print t / 20 }')
for solver in tree direct; do
  log=$("$HOSHI" run --ic plummer -n "$N" --seed 5 --solver "$solver" --softening 0.01 \
    --t-end "$T" --dt 0.015625 --snapshot-every "$every" --out "$OUT/$solver" --overwrite)
  grep "^relative energy error" <<<"$log" | sed "s/^/$solver: /"
  "$HOSHI" analyze "$OUT/$solver"/snapshot_*.hdf5 --csv "$OUT/$solver/lagrangian.csv" \
    --overwrite >/dev/null
done
"$PY" - "$OUT" <<'PY'
import csv, sys
out = sys.argv[1]
def rows(p):
    return list(csv.DictReader(open(p)))
lr = {s: rows(f"{out}/{s}/lagrangian.csv") for s in ("tree", "direct")}
en = {s: rows(f"{out}/{s}/energy.csv") for s in ("tree", "direct")}
# The error at the end is one sample of an oscillation (its sign and size change with the
# step's phase); the largest over the run is the measure to compare.
print("largest |dE/E| over the run: " + ", ".join(
    f"{s} {max(abs(float(r['rel_energy_error'])) for r in en[s]):.2e}" for s in ("tree", "direct")))
print("time   r50(tree)  r50(direct)  r90(tree)  r90(direct)")
for a, b in zip(lr["tree"], lr["direct"]):
    print(f"{float(a['time']):5.1f}  {float(a['r50']):9.4f}  {float(b['r50']):11.4f}  "
          f"{float(a['r90']):9.4f}  {float(b['r90']):11.4f}")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib not installed: no plot")
    sys.exit(0)
fig, ax = plt.subplots(1, 2, figsize=(11, 4))
for s, style in (("tree", "-"), ("direct", "--")):
    t = [float(r["time"]) for r in en[s]]
    ax[0].plot(t, [abs(float(r["rel_energy_error"])) for r in en[s]], style, label=s)
    t = [float(r["time"]) for r in lr[s]]
    for k in ("r10", "r50", "r90"):
        ax[1].plot(t, [float(r[k]) for r in lr[s]], style, label=f"{k} {s}")
ax[0].set(xlabel="t", ylabel="|dE/E|", yscale="log", title="energy error")
ax[1].set(xlabel="t", ylabel="Lagrangian radius", yscale="log", title="10, 50, 90% radii")
ax[0].legend(); ax[1].legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.savefig(f"{out}/tree_vs_direct.png", dpi=100)
print(f"plot: {out}/tree_vs_direct.png")
PY
