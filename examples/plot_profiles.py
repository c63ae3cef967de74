#!/usr/bin/env python3
"""Plot the profiles written by `hoshi analyze SNAPSHOT... --profiles DIR`.

usage: examples/plot_profiles.py DIR [OUT.png]

Every snapshot stem found in DIR (STEM_radial.csv and STEM_disk.csv) as one curve in four
panels: spherical density, velocity dispersions (sigma_r, sigma_t), circular velocity and disk
surface density, on log-log or log-linear axes. Needs matplotlib.
"""
import csv
import glob
import os
import sys


def read(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]} if rows else {}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(d, "profiles.png")
    stems = sorted(p[: -len("_radial.csv")] for p in glob.glob(os.path.join(d, "*_radial.csv")))
    if not stems:
        sys.exit(f"no *_radial.csv in {d}")
    try:
        import matplotlib
    except ImportError:
        sys.exit(f"{sys.argv[0]}: needs matplotlib: run it with .venv/bin/python (scripts/setup.sh "
                 "test installs it there), or pip install matplotlib")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 4, figsize=(16, 4))
    for s in stems:
        name = os.path.basename(s)
        r = read(s + "_radial.csv")
        ok = [i for i, c in enumerate(r["count"]) if c > 0]
        rm = [r["r_mid"][i] for i in ok]
        ax[0].loglog(rm, [r["density"][i] for i in ok], label=name)
        ax[1].semilogx(rm, [r["sigma_r"][i] for i in ok], label=f"{name} sigma_r")
        ax[1].semilogx(rm, [r["sigma_t"][i] for i in ok], "--", label=f"{name} sigma_t")
        ax[2].semilogx(r["r_hi"], r["vcirc"], label=name)
        if os.path.exists(s + "_disk.csv"):
            dk = read(s + "_disk.csv")
            ok = [i for i, c in enumerate(dk["count"]) if c > 0]
            ax[3].semilogy([dk["R_mid"][i] for i in ok],
                           [dk["surface_density"][i] for i in ok], label=f"{name} Sigma")
    ax[0].set(xlabel="r", ylabel="density", title="spherical density")
    ax[1].set(xlabel="r", ylabel="dispersion", title="velocity dispersion")
    ax[2].set(xlabel="r", ylabel="v_circ", title="circular velocity")
    ax[3].set(xlabel="R", ylabel="surface density", title="disk surface density")
    for a in ax:
        a.legend(fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=90)
    except OSError as e:
        sys.exit(f"{out}: {e.strerror}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
