#!/usr/bin/env python3
"""hoshi vs pytreegrav on the CPU at equal force accuracy.

Run with the venv's python, NUMBA_NUM_THREADS set before start (the script sets it to 2 when
unset). Subcommands:

  ref        numpy double direct-sum reference accelerations on K random targets (cubic
             spline, support radius h = 2.8 eps: hoshi's `--kernel spline --softening eps` and
             pytreegrav's `softening=h`; eps = 0 is Newtonian)
  validate   compare a `ref` file with hoshi's `forces --solver direct --precision double` CSV
  errors     error percentiles of hoshi `forces` CSVs on the ref's targets
  rounds     alternate timing rounds: hoshi bench (subprocess, one call per setting) and
             pytreegrav (in-process, numba JIT excluded), plus pytreegrav's errors; JSON out
  summarize  tables and matched-p99 speed ratios from a `rounds` JSON and an `errors` JSON

Errors are |a - a_ref| / |a_ref| on the reference's targets; percentiles p50, p90, p99 use
the same rank rule as hoshi accuracy (ceil(q K)-th smallest).
"""
import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "2")

import numpy as np  # noqa: E402
from compare_common import (cmd_errors, interp_time_at, load_ref, loadavg, percentiles,  # noqa: E402
                            read_forces, read_particles, rel_errors)

H_OVER_EPS = 2.8  # hoshi src/physics/softening.hpp: spline_h_over_eps


# ----------------------------------------------------------------------------------------------
# input / reference
# ----------------------------------------------------------------------------------------------
def spline_force_factor(r, h):
    """M(<r)/(M r^3) of the cubic-spline (M4) mass of support radius h (Gadget-2 / pytreegrav)."""
    f = np.empty_like(r)
    out = r >= h
    with np.errstate(divide="ignore"):
        f[out] = 1.0 / r[out] ** 3
    q = r[~out] / h
    fi = np.where(
        q <= 0.5,
        10.666666666666666 + q * q * (-38.4 + 32.0 * q),
        21.333333333333333 - 48.0 * q + 38.4 * q * q - 10.666666666666666 * q**3
        - 0.066666666666666666 / np.where(q > 0, q, 1.0) ** 3,
    )
    f[~out] = fi / h**3
    return f


def direct_reference(pos, m, targets, eps, chunk=8):
    """Double-precision direct sum of accelerations at pos[targets] (self-pair excluded)."""
    h = H_OVER_EPS * eps
    acc = np.zeros((len(targets), 3))
    for s in range(0, len(targets), chunk):
        t = targets[s:s + chunk]
        d = pos[None, :, :] - pos[t, None, :]  # (T, N, 3) source - target
        r = np.sqrt(np.einsum("tnk,tnk->tn", d, d))
        if h > 0:
            f = spline_force_factor(r, h)
        else:
            with np.errstate(divide="ignore"):
                f = 1.0 / r**3
        f[np.arange(len(t)), t] = 0.0  # self pair
        f *= m[None, :]
        acc[s:s + chunk] = np.einsum("tn,tnk->tk", f, d)
    return acc


# ----------------------------------------------------------------------------------------------
# subcommands
# ----------------------------------------------------------------------------------------------
def cmd_ref(a):
    ids, pos, m = read_particles(a.ic)
    rng = np.random.default_rng(a.seed)
    k = len(pos) if a.targets <= 0 or a.targets >= len(pos) else a.targets
    targets = np.sort(rng.choice(len(pos), size=k, replace=False))
    t0 = time.perf_counter()
    acc = direct_reference(pos, m, targets, a.eps)
    dt = time.perf_counter() - t0
    np.savez(a.out, targets=targets, acc=acc, eps=a.eps, ic=a.ic)
    print(f"ref: N={len(pos)} targets={k} eps={a.eps} h={H_OVER_EPS * a.eps:g} {dt:.1f} s -> {a.out}")


def cmd_ref_from_csv(a):
    """All-particle reference from hoshi's `forces --solver direct --precision double` CSV."""
    fid, facc, _ = read_forces(a.direct)
    np.savez(a.out, targets=np.arange(len(fid)), acc=facc, eps=a.eps, ic=a.direct)
    print(f"ref from {a.direct}: {len(fid)} targets -> {a.out}")


def cmd_validate(a):
    targets, acc, eps = load_ref(a.ref)
    fid, facc, _ = read_forces(a.direct)
    e = rel_errors(acc, facc[targets])
    print(f"numpy ref vs hoshi double direct ({a.direct}), {len(targets)} targets: "
          f"max rel diff {e.max():.3e}, median {np.median(e):.3e}")


def hoshi_bench(hoshi, ic, eps, kernel, setting, threads, repeat, tmpcsv):
    """One `hoshi bench` call; returns (median seconds, phase dict, command)."""
    if os.path.exists(tmpcsv):
        os.remove(tmpcsv)
    cmd = [hoshi, "bench", "--ic", ic, "--solver", "tree", "--softening", str(eps), "--kernel",
           kernel, "--threads", str(threads), "--repeat", str(repeat), "--peak-gflops", "480",
           "--csv", tmpcsv] + setting.split()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(tmpcsv) as f:
        hdr = f.readline().strip().split(",")
        row = dict(zip(hdr, f.readline().strip().split(",")))
    return float(row["seconds"]), row, " ".join(cmd)


def pytreegrav_eval(pos, m, h, theta, quad, group_size):
    """One pytreegrav tree force evaluation, split as Accel(method='tree') does it."""
    import pytreegrav as ptg
    from pytreegrav.grouped_treewalk import AccelTarget_grouped

    t0 = time.perf_counter()
    tree = ptg.ConstructTree(pos, m, h, quadrupole=quad)
    t1 = time.perf_counter()
    idx = tree.TreewalkIndices
    g = AccelTarget_grouped(np.take(pos, idx, axis=0), np.take(h, idx), tree, group_size=group_size,
                            G=1.0, theta=theta, quadrupole=quad, parallel=True)
    out = np.empty_like(g)
    out[idx] = g
    t2 = time.perf_counter()
    return out, t1 - t0, t2 - t1


def parse_ptg_settings(s):
    out = []
    for item in s.split(","):
        th, q = item.split(":")
        out.append((float(th), q in ("1", "q", "quad", "True")))
    return out


def cmd_rounds(a):
    import numba
    import pytreegrav as ptg

    ids, pos, m = read_particles(a.ic)
    n = len(pos)
    targets, acc_ref, eps = load_ref(a.ref) if a.ref else (None, None, a.eps)
    if a.ref and abs(eps - a.eps) > 1e-15:
        sys.exit(f"ref eps {eps} != --eps {a.eps}")
    h = np.full(n, H_OVER_EPS * a.eps)
    ptg_settings = parse_ptg_settings(a.ptg)
    hoshi_settings = [s for s in a.hoshi_settings.split(";") if s.strip()]

    # JIT: compile every code path used (tree build with and without quadrupoles, both walks)
    # on a small set, then one untimed full-size call per quadrupole flag.
    tj = time.perf_counter()
    for quad in sorted({q for _, q in ptg_settings}):
        pytreegrav_eval(pos[:2000].copy(), m[:2000].copy(), h[:2000].copy(), 0.7, quad, a.group_size)
        ptg.Accel(pos[:5000], m[:5000], h[:5000], theta=0.7, parallel=True, method="tree", quadrupole=quad)
    jit_s = time.perf_counter() - tj
    for quad in sorted({q for _, q in ptg_settings}):
        pytreegrav_eval(pos, m, h, 1.0, quad, a.group_size)

    meta = {
        "ic": a.ic, "n": n, "eps": a.eps, "h_pytreegrav": H_OVER_EPS * a.eps,
        "pytreegrav_version": ptg.__version__ if hasattr(ptg, "__version__") else None,
        "numba": numba.__version__, "numpy": np.__version__,
        "numba_threads": numba.get_num_threads(), "threading_layer": None,
        "group_size": a.group_size, "jit_seconds_small": jit_s, "hoshi_threads": a.threads,
        "repeat": a.repeat,
    }
    try:
        meta["threading_layer"] = numba.threading_layer()
    except Exception:
        pass
    try:
        from importlib.metadata import version
        meta["pytreegrav_version"] = version("pytreegrav")
    except Exception:
        pass

    res = {"meta": meta, "rounds": [], "ptg_errors": {}, "accel_check": {}}
    # pytreegrav errors (deterministic) and a check that the split timing equals Accel()
    if a.errors_from:  # the same settings' errors from an earlier `rounds` file (deterministic)
        with open(a.errors_from) as f:
            prev = json.load(f)
        res["ptg_errors"] = prev["ptg_errors"]
        res["accel_check"] = prev["accel_check"]
    elif targets is not None:
        for th, quad in ptg_settings:
            g, _, _ = pytreegrav_eval(pos, m, h, th, quad, a.group_size)
            key = f"theta={th:g} quad={int(quad)}"
            res["ptg_errors"][key] = percentiles(rel_errors(g[targets], acc_ref))
            print(f"pytreegrav {key}: {res['ptg_errors'][key]}", flush=True)
    if not a.errors_from:
        th0, q0 = ptg_settings[len(ptg_settings) // 2]
        t0 = time.perf_counter()
        gA = ptg.Accel(pos, m, h, theta=th0, parallel=True, method="tree", quadrupole=q0, group_size=a.group_size)
        tA = time.perf_counter() - t0
        g2, tb, tw = pytreegrav_eval(pos, m, h, th0, q0, a.group_size)
        res["accel_check"] = {"setting": f"theta={th0:g} quad={int(q0)}", "Accel_seconds": tA,
                              "build_plus_walk_seconds": tb + tw,
                              "max_abs_diff": float(np.abs(gA - g2).max())}
    print("Accel() check:", res["accel_check"], flush=True)

    tmpcsv = a.out + ".benchtmp.csv"
    for r in range(a.rounds):
        rnd = {"round": r + 1, "loadavg_start": loadavg(), "hoshi": {}, "pytreegrav": {}}
        order = ["hoshi", "pytreegrav"] if r % 2 == 0 else ["pytreegrav", "hoshi"]
        rnd["order"] = order
        for code in order:
            rnd[f"loadavg_before_{code}"] = loadavg()
            if code == "hoshi":
                for s in hoshi_settings:
                    sec, row, cmd = hoshi_bench(a.hoshi, a.ic, a.eps, "spline" if a.eps > 0 else "plummer",
                                                s, a.threads, a.repeat, tmpcsv)
                    rnd["hoshi"][s] = {"seconds_median": sec, "row": row, "cmd": cmd}
                    print(f"round {r + 1} hoshi [{s}] {sec:.4f} s", flush=True)
            else:
                for th, quad in ptg_settings:
                    key = f"theta={th:g} quad={int(quad)}"
                    runs = [pytreegrav_eval(pos, m, h, th, quad, a.group_size)[1:] for _ in range(a.repeat)]
                    tot = sorted(b + w for b, w in runs)
                    med = tot[(len(tot) - 1) // 2]
                    rnd["pytreegrav"][key] = {
                        "seconds_median": med, "seconds_min": tot[0],
                        "build": [b for b, _ in runs], "walk": [w for _, w in runs]}
                    print(f"round {r + 1} pytreegrav [{key}] {med:.4f} s (build "
                          f"{np.median([b for b, _ in runs]):.4f}, walk {np.median([w for _, w in runs]):.4f})",
                          flush=True)
        rnd["loadavg_end"] = loadavg()
        res["rounds"].append(rnd)
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if os.path.exists(tmpcsv):
        os.remove(tmpcsv)
    print("wrote", a.out)


def cmd_summarize(a):
    R = None
    for path in a.rounds:
        with open(path) as f:
            r = json.load(f)
        if R is None:
            R = r
        else:
            for rd in r["rounds"]:
                rd["round"] = len(R["rounds"]) + 1
                R["rounds"].append(rd)
    with open(a.hoshi_errors) as f:
        HE = json.load(f)
    PE = R["ptg_errors"]
    meta = R["meta"]
    print(f"N = {meta['n']}, eps = {meta['eps']} (pytreegrav h = {meta['h_pytreegrav']:g}), "
          f"pytreegrav {meta['pytreegrav_version']} numba {meta['numba']} threads "
          f"{meta['numba_threads']} ({meta['threading_layer']}), group_size {meta['group_size']}; "
          f"hoshi threads {meta['hoshi_threads']}; repeat {meta['repeat']} per round")
    hs = list(R["rounds"][0]["hoshi"].keys())
    ps = list(R["rounds"][0]["pytreegrav"].keys())
    nr = len(R["rounds"])

    def times(code, key, field="seconds_median"):
        return [rd[code][key][field] for rd in R["rounds"]]

    print("\n| code | setting | p50 | p90 | p99 | max | per-round median time (s) | best (s) | build / walk (s, best round) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in hs:
        e = HE[s]
        t = times("hoshi", s)
        i = int(np.argmin(t))
        row = R["rounds"][i]["hoshi"][s]["row"]
        build = sum(float(row.get(k, 0)) for k in ("seconds_keys", "seconds_sort", "seconds_permute",
                                                   "seconds_build", "seconds_moments"))
        print(f"| hoshi | {s} | {e['p50']:.2e} | {e['p90']:.2e} | {e['p99']:.2e} | {e['max']:.2e} | "
              f"{' '.join(f'{x:.3f}' for x in t)} | {min(t):.3f} | {build:.3f} / {float(row['seconds_walk']):.3f} |")
    for s in ps:
        e = PE[s]
        t = times("pytreegrav", s)
        i = int(np.argmin(t))
        rr = R["rounds"][i]["pytreegrav"][s]
        # the build / walk of the run whose total is the round's reported time
        j = int(np.argmin([abs(b + w - rr["seconds_median"]) for b, w in zip(rr["build"], rr["walk"])]))
        print(f"| pytreegrav | {s} | {e['p50']:.2e} | {e['p90']:.2e} | {e['p99']:.2e} | {e['max']:.2e} | "
              f"{' '.join(f'{x:.3f}' for x in t)} | {min(t):.3f} | {rr['build'][j]:.3f} / {rr['walk'][j]:.3f} |")

    # Each family (hoshi barnes94 theta, hoshi relative alpha, pytreegrav monopole theta,
    # pytreegrav quadrupole theta) is one continuous accuracy knob: its time at a target p99 is
    # interpolated on its own curve; a code's "all" is the faster of its families there.
    fams_h = {"hoshi barnes94": [s for s in hs if "barnes94" in s],
              "hoshi relative": [s for s in hs if "relative" in s]}
    fams_p = {"pytreegrav mono": [s for s in ps if "quad=0" in s],
              "pytreegrav quad": [s for s in ps if "quad=1" in s]}
    fams_h = {k: v for k, v in fams_h.items() if v}
    fams_p = {k: v for k, v in fams_p.items() if v}

    def at(code, fams, errs, tp, tsel):
        """{family: (time, bound)} at p99 = tp plus 'all' = the fastest family; tsel(key) -> s."""
        out = {}
        for f, keys in fams.items():
            out[f] = interp_time_at([(errs[k]["p99"], tsel(k)) for k in keys], tp)
        ok = [v for v in out.values() if v[0] is not None]
        out[f"{code} all"] = min(ok) if ok else (None, False)
        return out

    def fmt(v):
        return "n/a" if v[0] is None else f"{v[0]:.3f}" + ("(<=)" if v[1] else "")

    targets = [float(x) for x in a.p99.split(",")]
    print("\nMatched p99: log-log interpolation of time on each family's Pareto front (time vs p99); "
          "'all' = the faster family of the code. (<=): the family's least accurate point is still more "
          "accurate than the target, so its time is an upper bound there.")
    print("| p99 | hoshi family | pytreegrav family | per-round ratio t_ptg / t_hoshi | best-of: t_ptg / t_hoshi = ratio |")
    print("|---|---|---|---|---|")
    for tp in targets:
        per_round = [(at("hoshi", fams_h, HE, tp, lambda k: rd["hoshi"][k]["seconds_median"]),
                      at("pytreegrav", fams_p, PE, tp, lambda k: rd["pytreegrav"][k]["seconds_median"]))
                     for rd in R["rounds"]]
        best_h = at("hoshi", fams_h, HE, tp, lambda k: min(times("hoshi", k)))
        best_p = at("pytreegrav", fams_p, PE, tp, lambda k: min(times("pytreegrav", k)))
        pairs = [("hoshi all", "pytreegrav all")]
        if a.all_pairs:
            pairs += [(fh, "pytreegrav all") for fh in fams_h] + [("hoshi all", fp) for fp in fams_p]
        for fh, fp in pairs:
            rs = []
            for H, P in per_round:
                if H[fh][0] is None or P[fp][0] is None:
                    rs.append("n/a")
                else:
                    rs.append(f"{P[fp][0] / H[fh][0]:.1f}" + ("*" if H[fh][1] or P[fp][1] else ""))
            if best_h[fh][0] is None or best_p[fp][0] is None:
                b = "n/a"
            else:
                b = f"{fmt(best_p[fp])} s / {fmt(best_h[fh])} s = {best_p[fp][0] / best_h[fh][0]:.1f}"
            print(f"| {tp:.0e} | {fh} | {fp} | {' '.join(rs)} | {b} |")
    print("(* in a per-round ratio: one side's time is an upper bound, see (<=))")
    print("\nload average per round (start / before hoshi / before pytreegrav / end):")
    for rd in R["rounds"]:
        print(f"  round {rd['round']} ({'->'.join(rd['order'])}): {rd['loadavg_start']} / "
              f"{rd['loadavg_before_hoshi']} / {rd['loadavg_before_pytreegrav']} / {rd['loadavg_end']}")
    ac = R["accel_check"]
    print(f"\nAccel() end-to-end vs build+walk split ({ac['setting']}): {ac['Accel_seconds']:.3f} s vs "
          f"{ac['build_plus_walk_seconds']:.3f} s, max |diff| {ac['max_abs_diff']:.1e}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("ref")
    s.add_argument("--ic", required=True)
    s.add_argument("--eps", type=float, required=True)
    s.add_argument("--targets", type=int, default=2000)
    s.add_argument("--seed", type=int, default=12345)
    s.add_argument("--out", required=True)
    s = sub.add_parser("ref-from-csv")
    s.add_argument("--direct", required=True)
    s.add_argument("--eps", type=float, required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("validate")
    s.add_argument("--ref", required=True)
    s.add_argument("--direct", required=True)
    s = sub.add_parser("errors")
    s.add_argument("--ref", required=True)
    s.add_argument("--out")
    s.add_argument("forces", nargs="+", help="LABEL=hoshi_forces.csv")
    s = sub.add_parser("rounds")
    s.add_argument("--ic", required=True)
    s.add_argument("--eps", type=float, required=True)
    s.add_argument("--ref")
    s.add_argument("--hoshi", default="build/hoshi")
    s.add_argument("--hoshi-settings", required=True, help="';'-separated hoshi option strings")
    s.add_argument("--ptg", required=True, help="comma-separated theta:quad, e.g. 0.5:0,0.5:1")
    s.add_argument("--group-size", type=int, default=8)
    s.add_argument("--errors-from", help="reuse ptg_errors (same ic/ref/settings) from an earlier rounds JSON")
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--repeat", type=int, default=3)
    s.add_argument("--out", required=True)
    s = sub.add_parser("summarize")
    s.add_argument("--rounds", required=True, nargs="+", help="rounds JSON files (their rounds are merged)")
    s.add_argument("--hoshi-errors", required=True)
    s.add_argument("--p99", default="1e-3,1e-2")
    s.add_argument("--all-pairs", action="store_true")
    a = p.parse_args()
    {"ref": cmd_ref, "ref-from-csv": cmd_ref_from_csv, "validate": cmd_validate, "errors": cmd_errors, "rounds": cmd_rounds,
     "summarize": cmd_summarize}[a.cmd](a)


if __name__ == "__main__":
    main()
