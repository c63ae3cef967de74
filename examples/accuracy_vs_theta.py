#!/usr/bin/env python3
"""Plot the CSV of `hoshi accuracy` as error percentiles and cost against theta.

usage: accuracy_vs_theta.py ACCURACY.csv [-o OUT.png]

    hoshi accuracy -n 100000 --theta 0.3,0.4,0.5,0.6,0.7,0.8 --criterion barnes94,bmax \
        --order 1,2 --csv acc.csv
    python3 examples/accuracy_vs_theta.py acc.csv -o acc.png

Left: relative acceleration error at the 50th, 99th percentiles and the maximum, one line
style per percentile and one colour per (criterion, order, walk). Right: interactions per
particle (p-p + p-c) and the seconds of one force evaluation (noisy: `hoshi bench` repeats).
"""
import argparse
import csv
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

COLUMNS = ["criterion", "order", "walk", "theta", "err_p50", "err_p90", "err_p99", "err_p999",
           "err_max", "pot_err_p50", "pot_err_p99", "pp_per_particle", "pc_per_particle",
           "seconds"]


def read(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    if not rows:
        sys.exit(f"{path}: no rows")
    missing = [c for c in COLUMNS if c not in rows[0]]
    if missing:
        sys.exit(f"{path}: missing columns {', '.join(missing)}")
    series = defaultdict(list)
    no_theta = [r for r in rows if not r["theta"]]
    if no_theta:
        print(f"{path}: {len(no_theta)} relative-criterion row(s) left out (no theta: their "
              "error follows alpha)")
    rows = [r for r in rows if r["theta"]]
    if not rows:
        sys.exit(f"{path}: no row with a theta (give a geometric criterion, e.g. barnes94)")
    for r in rows:
        key = f"{r['criterion']} order {r['order']} {r['walk']}"
        series[key].append({c: (r[c] if c in ("criterion", "walk") else float(r[c]))
                            for c in COLUMNS})
    for v in series.values():
        v.sort(key=lambda r: r["theta"])
    if not any(r[c] > 0 for v in series.values() for r in v for c in ("err_p50", "err_max")):
        sys.exit(f"{path}: every error is 0 (a set so small that the tree sums every pair "
                 "directly): nothing to plot on a log scale")
    return series


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--out", default="accuracy_vs_theta.png")
    a = ap.parse_args()
    series = read(a.csv)
    fig, (ax_err, ax_cost) = plt.subplots(1, 2, figsize=(12, 5))
    ax_time = ax_cost.twinx()
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (name, rows) in enumerate(sorted(series.items())):
        c = colours[k % len(colours)]
        th = [r["theta"] for r in rows]
        for col, style in (("err_p50", "-"), ("err_p99", "--"), ("err_max", ":")):
            ax_err.plot(th, [r[col] for r in rows], style, color=c, marker="o", ms=3,
                        label=name if col == "err_p50" else None)
        ax_cost.plot(th, [r["pp_per_particle"] + r["pc_per_particle"] for r in rows], "-",
                     color=c, marker="o", ms=3)
        ax_time.plot(th, [r["seconds"] for r in rows], "--", color=c, marker="x", ms=4)
    ax_err.set_xlabel("theta")
    ax_err.set_ylabel("relative acceleration error")
    ax_err.set_yscale("log")
    ax_err.grid(True, which="both", alpha=0.3)
    # The line styles in the panel, the settings (one colour each) below both panels: a legend
    # of every setting x percentile inside the panel covered the data of a large study.
    ax_err.legend(handles=[Line2D([], [], color="k", ls=ls, label=lb)
                           for ls, lb in (("-", "p50"), ("--", "p99"), (":", "max"))],
                  fontsize=7, loc="upper left")
    ax_cost.set_xlabel("theta")
    ax_cost.set_ylabel("interactions per particle (solid)")
    ax_cost.set_yscale("log")
    ax_time.set_ylabel("seconds per force evaluation (dashed)")
    ax_cost.grid(True, which="both", alpha=0.3)
    handles, labels = ax_err.get_legend_handles_labels()
    ncol = min(4, max(1, len(series)))
    rows = -(-len(series) // ncol)
    fig.legend([h for h, l in zip(handles, labels) if l in series], [l for l in labels if l in series],
               loc="lower center", ncol=ncol, fontsize=7, frameon=False)
    fig.suptitle(f"hoshi accuracy: {a.csv}")
    fig.tight_layout(rect=(0, min(0.4, 0.035 * rows + 0.02), 1, 1))
    try:
        fig.savefig(a.out, dpi=120)
    except OSError as e:
        sys.exit(f"{a.out}: {e.strerror}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
