#!/usr/bin/env python3
"""Plot the per-target errors of `hoshi accuracy --errors` as distributions.

usage: error_distribution.py ERRORS.csv [-o OUT.png] [--where COLUMN=VALUE ...]

    hoshi accuracy -n 100000 --theta 0.3,0.5,0.7 --criterion barnes94 --errors err.csv
    python3 examples/error_distribution.py err.csv --where order=2 -o err.png

Left: the fraction of targets whose relative acceleration error is at or above a value (the
complementary cumulative distribution; it crosses 1e-2 near the 99th percentile), one line per
setting (criterion, order, walk, theta, alpha). Right: the median and the largest error in
radial bins (radius from the centre of mass), which shows where in the system the errors are.
--where keeps only the rows whose COLUMN equals VALUE (repeatable).
"""
import argparse
import csv
import math
import sys
from collections import defaultdict

try:
    import matplotlib
except ImportError:
    sys.exit(f"{sys.argv[0]}: needs matplotlib: run it with .venv/bin/python (scripts/setup.sh "
             "test installs it there), or pip install matplotlib")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

KEY = ["criterion", "order", "walk", "theta", "alpha"]
COLUMNS = KEY + ["id", "r", "a_ref", "acc_err", "pot_err"]


def read(path, where):
    try:
        f = open(path, newline="")
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            sys.exit(f"{path}: missing columns {', '.join(missing)}")
        series = defaultdict(list)
        for row in reader:
            if all(row.get(c) == v for c, v in where):
                name = " ".join(f"{c} {row[c]}" if c in ("order", "theta", "alpha") else row[c]
                                for c in KEY if row[c] != "")
                series[name].append((float(row["r"]), float(row["acc_err"])))
    if not series:
        sys.exit(f"{path}: no rows" + (" match --where" if where else ""))
    return series


def radial_bins(points, nbins=12):
    rs = [r for r, _ in points if r > 0]
    if not rs:
        return []
    lo, hi = math.log10(min(rs)), math.log10(max(rs)) + 1e-12
    bins = defaultdict(list)
    for r, e in points:
        if r > 0:
            bins[min(nbins - 1, int((math.log10(r) - lo) / (hi - lo) * nbins))].append(e)
    out = []
    for b in sorted(bins):
        errs = sorted(bins[b])
        out.append((10 ** (lo + (b + 0.5) * (hi - lo) / nbins), errs[(len(errs) - 1) // 2],
                    errs[-1]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--out", default="error_distribution.png")
    ap.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE")
    a = ap.parse_args()
    where = []
    for w in a.where:
        if "=" not in w or w.split("=", 1)[0] not in COLUMNS:
            sys.exit(f"--where {w}: expected COLUMN=VALUE with COLUMN one of {', '.join(COLUMNS)}")
        where.append(tuple(w.split("=", 1)))
    series = read(a.csv, where)
    fig, (ax_cdf, ax_r) = plt.subplots(1, 2, figsize=(12, 5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (name, points) in enumerate(sorted(series.items())):
        c = colours[k % len(colours)]
        errs = sorted(e for _, e in points)
        n = len(errs)
        ax_cdf.step(errs, [1 - i / n for i in range(n)], where="post", color=c,
                    label=f"{name} ({n} targets)")
        rb = radial_bins(points)
        ax_r.plot([b[0] for b in rb], [b[1] for b in rb], "-", color=c, marker="o", ms=3,
                  label=name)
        ax_r.plot([b[0] for b in rb], [b[2] for b in rb], ":", color=c)
    ax_cdf.axhline(0.01, color="grey", lw=0.5)
    ax_cdf.set_xscale("log")
    ax_cdf.set_yscale("log")
    ax_cdf.set_xlabel("relative acceleration error |a - a_ref| / |a_ref|")
    ax_cdf.set_ylabel("fraction of targets at or above")
    ax_cdf.grid(True, which="both", alpha=0.3)
    ax_cdf.legend(fontsize=6)
    ax_r.set_xscale("log")
    ax_r.set_yscale("log")
    ax_r.set_xlabel("radius from the centre of mass")
    ax_r.set_ylabel("relative acceleration error: median (solid), max (dotted)")
    ax_r.grid(True, which="both", alpha=0.3)
    ax_r.legend(handles=[Line2D([], [], color="k", marker="o", ms=3, label="median in a radial bin"),
                         Line2D([], [], color="k", ls=":", label="max in a radial bin")],
                title="settings: colours as at left", title_fontsize=6, fontsize=6)
    fig.suptitle(f"hoshi accuracy --errors: {a.csv}")
    fig.tight_layout()
    try:
        fig.savefig(a.out, dpi=120)
    except OSError as e:
        sys.exit(f"{a.out}: {e.strerror}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
