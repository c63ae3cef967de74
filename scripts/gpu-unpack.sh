#!/bin/bash
# Unpacks the carried .gpu-pack/pack.tar.xz of scripts/gpu-pack.sh into .gpu-pack/ (bin/, lib/,
# ptxas/), once; gpu-check.sh and gpu-profile.sh call it first. The pack travels compressed
# because the device tool carries at most 64 MiB with the working tree: its eleven binaries
# hold the same ~6.6 MB of sm_90 device code each (106 MB unpacked, ~10 MB as xz). Uses tar's
# xz support, else Python's tarfile (the GPU image has python3).
set -euo pipefail
cd "$(dirname "$0")/.."
pack=.gpu-pack
archive=$pack/pack.tar.xz
[ -f "$archive" ] || exit 0
[ -x "$pack/bin/hoshi_gpu_bench" ] && exit 0  # unpacked already (each call carries it afresh)
if ! tar -xJf "$archive" -C "$pack" 2>/dev/null; then
  python3 - "$archive" "$pack" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    try:
        t.extractall(sys.argv[2], filter="data")
    except TypeError:  # Python before 3.12: no extraction filters
        t.extractall(sys.argv[2])
PY
fi
echo "gpu-unpack: $(du -sh "$pack" | cut -f1) in $pack"
