#!/usr/bin/env bash
# Two disk galaxies (equal mass, started at separation 1.5 with the angular momentum of an
# e = 0.8 orbit of pericentre 0.2 and, since their halos overlap deeply there, no radial speed:
# the model warns that the orbit is less bound than e = 0.8 asks; the second disk inclined by
# 60 degrees) merging: frames every 0.5 time units, made into OUT/merger.mp4 when ffmpeg is present and
# into the contact sheet OUT/merger_sheet.png otherwise (needs matplotlib).
# Usage: examples/merger.sh [OUT_DIR]
#        (HOSHI=path/to/hoshi, default the repository's build/hoshi; N=10000
#        particles, T_END=16)
set -euo pipefail
source "$(dirname "$0")/python.sh"
HOSHI=${HOSHI:-$(cd "$(dirname "$0")/.." && pwd)/build/hoshi}
OUT=${1:-out_merger}
N=${N:-10000}
T=${T_END:-16}
check_python_setting
claim_out_dir "$OUT" merger.mp4 merger_sheet.png
# Four snapshots over the run, the last at its end (--snapshot-every 4 for the default 16: a
# shorter T_END had none after t = 0).
every=$(awk -v t="$T" 'BEGIN { print t / 4 }')
# The run's summary lines; a failed run stops the script with its status (a pipe into grep hid it).
log=$("$HOSHI" run --ic merger -n "$N" \
  --model-param mass_ratio=1,eccentricity=0.8,r_peri=0.2,r_start=1.5,incl2=60 \
  --solver tree --softening 0.01 --dt 0.0078125 --t-end "$T" --output-every 0.5 \
  --render-every 0.5 --render-axis z --render-extent 3 --snapshot-every "$every" \
  --out "$OUT" --overwrite)
grep -E "^relative energy error|steps to" <<<"$log" || true
"$HOSHI" analyze "$OUT"/snapshot_*.hdf5 --csv "$OUT/lagrangian.csv" --bound --overwrite
if command -v ffmpeg >/dev/null; then
  ffmpeg -loglevel error -y -framerate 8 -i "$OUT/frame_%03d.png" -pix_fmt yuv420p \
    "$OUT/merger.mp4"
  echo "movie: $OUT/merger.mp4"
elif plots_available; then
  "$PY" - "$OUT" <<'PY'
import glob, sys
out = sys.argv[1]
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
frames = sorted(glob.glob(f"{out}/frame_*.png"))
# 12 frames spread evenly from the first to the last (the merged remnant)
pick = [frames[round(i * (len(frames) - 1) / 11)] for i in range(12)] if len(frames) > 12 else frames
fig, axes = plt.subplots(3, 4, figsize=(12, 9))
for ax, f in zip(axes.flat, pick):
    ax.imshow(plt.imread(f), cmap="gray")
    ax.set_title(f.split("/")[-1], fontsize=8)
for ax in axes.flat:
    ax.axis("off")
fig.tight_layout()
fig.savefig(f"{out}/merger_sheet.png", dpi=80)
print(f"contact sheet: {out}/merger_sheet.png ({len(pick)} of {len(frames)} frames)")
PY
fi
