#!/usr/bin/env python3
"""hoshi vs REBOUND's tree gravity on one CPU thread at equal force accuracy.

Run with a venv's python holding `pip install rebound numpy` (REBOUND's PyPI wheel is built
without OpenMP, so it is serial; OMP_NUM_THREADS=1 is set anyway). Subcommands:

  ref         Plummer-softened double direct-sum reference on K random targets (numpy;
              a^i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2), G = 1: hoshi's
              `--kernel plummer --softening eps` and REBOUND's `softening = eps`)
  ref-from-csv  the same targets taken from hoshi's `forces --solver direct --precision
              double` CSV (the reference used for the errors; `validate` checks the two agree)
  validate    compare a `ref` file with hoshi's double direct CSV, and REBOUND's own direct
              sum (`gravity = "basic"`) with both
  errors      error percentiles of hoshi `forces` CSVs on the ref's targets
  rounds      alternate timing rounds: hoshi bench (subprocess, one call per setting) and
              REBOUND (in-process: reb_simulation_update_acceleration, which builds the tree,
              its moments, walks it and deletes it), plus REBOUND's errors; JSON out
  summarize   tables and matched-p99 speed ratios from a `rounds` JSON and an `errors` JSON

Errors are |a - a_ref| / |a_ref| on the reference's targets; percentiles p50, p90, p99 use
the same rank rule as hoshi accuracy (ceil(q K)-th smallest).

REBOUND is driven through its C library (rebound.clibrebound): the installed 5.x Python
module has no calculate_acceleration() / configure_box(); the tree's root box is set with
`sim.root_size` (one root box, N_root_x = N_root_y = N_root_z = 1, the default), and
`reb_simulation_update_acceleration` computes the accelerations once without moving the
particles (no integrator step). REBOUND's opening criterion is w^2 > opening_angle2 r^2
(w: cell side, r: distance to the cell's centre of mass), so theta = sqrt(opening_angle2).
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from compare_common import (cmd_errors, interp_time_at, load_ref, loadavg, percentiles,  # noqa: E402
                            read_forces, read_particles, rel_errors)


# ----------------------------------------------------------------------------------------------
# input / reference
# ----------------------------------------------------------------------------------------------
def direct_reference(pos, m, targets, eps, chunk=8):
    """Double-precision Plummer-softened direct sum at pos[targets] (self pair excluded)."""
    acc = np.zeros((len(targets), 3))
    e2 = eps * eps
    for s in range(0, len(targets), chunk):
        t = targets[s:s + chunk]
        d = pos[None, :, :] - pos[t, None, :]  # (T, N, 3) source - target
        r2 = np.einsum("tnk,tnk->tn", d, d) + e2
        with np.errstate(divide="ignore"):
            f = r2 ** -1.5
        f[np.arange(len(t)), t] = 0.0  # self pair
        f *= m[None, :]
        acc[s:s + chunk] = np.einsum("tn,tnk->tk", f, d)
    return acc


# ----------------------------------------------------------------------------------------------
# REBOUND
# ----------------------------------------------------------------------------------------------
class Rebound:
    """One REBOUND simulation holding the particles; accel(theta) is one force evaluation."""

    def __init__(self, pos, m, eps, gravity="tree", box_factor=2.05):
        import rebound

        self.rebound = rebound
        self.lib = rebound.clibrebound
        n = len(pos)
        sim = rebound.Simulation()
        sim.G = 1.0
        sim.softening = eps
        # one root box centred on the origin, holding every particle (a particle outside it
        # is an error of reb_tree_construct)
        sim.root_size = box_factor * float(np.abs(pos).max())
        # particles are added with gravity "none" (no tree yet), then filled in bulk
        for i in range(n):
            sim.add(rebound.Particle(m=0.0, x=float(i), y=0.0, z=0.0))
        # the radius field (unused without collisions) carries the input index: the check that
        # REBOUND leaves the particles in insertion order
        sim.set_serialized_particle_data(m=np.ascontiguousarray(m, dtype=np.float64),
                                         r=np.arange(n, dtype=np.float64),
                                         xyz=np.ascontiguousarray(pos, dtype=np.float64))
        sim.gravity = gravity
        self.sim = sim
        self.n = n
        self.ref = ctypes.byref(sim)
        self.particle_doubles = ctypes.sizeof(rebound.Particle) // 8
        assert ctypes.sizeof(rebound.Particle) % 8 == 0

    def _array(self):
        ptr = ctypes.cast(self.sim._particles, ctypes.POINTER(ctypes.c_double))
        return np.ctypeslib.as_array(ptr, shape=(self.n, self.particle_doubles))

    def accel(self, theta=None):
        """(accelerations in input order, seconds of the update_acceleration call)."""
        if theta is not None:
            self.sim.opening_angle2 = theta * theta
        t0 = time.perf_counter()
        self.lib.reb_simulation_update_acceleration(self.ref)
        t1 = time.perf_counter()
        self.sim.process_messages()  # raises on a REBOUND error (e.g. particle outside box)
        a = self._array()
        ids = a[:, 10]  # the r field
        if not np.array_equal(ids, np.arange(self.n, dtype=np.float64)):
            # never seen; handled anyway: put the accelerations back in input order
            out = np.empty((self.n, 3))
            out[ids.astype(np.int64)] = a[:, 6:9]
            return out, t1 - t0, False
        return a[:, 6:9].copy(), t1 - t0, True

    def tree_layout(self):
        """Build a tree (without walking it) and read the root cell: returns the int at byte 128
        (struct reb_treecell.pt, = -N for the root, if the cell holds x,y,z,w,m,mx,my,mz and 8
        child pointers only, i.e. no quadrupole moments mxx..mzz) and at byte 176 (pt if the six
        quadrupole doubles were compiled in, -DQUADRUPOLE)."""
        import struct

        lib = self.lib
        lib.reb_tree_construct(self.ref)
        lib.reb_tree_calculate_gravity_data(self.ref)
        self.sim.process_messages()
        roots = ctypes.cast(self.sim._tree_root, ctypes.POINTER(ctypes.c_void_p))
        raw = ctypes.string_at(roots[0], 192)
        d = struct.unpack_from("8d", raw, 0)
        res = {"root_w": d[3], "root_m": d[4], "root_com": d[5:8],
               "int_at_128": struct.unpack_from("i", raw, 128)[0],
               "int_at_176": struct.unpack_from("i", raw, 176)[0], "n": self.n}
        res["monopole_only"] = res["int_at_128"] == -self.n
        lib.reb_tree_delete(self.ref)
        return res


def rebound_meta():
    import rebound

    lib = rebound.clibrebound
    meta = {"rebound_version": rebound.__version__}
    for name in ("reb_githash_str", "reb_version_str"):
        try:
            meta[name] = ctypes.c_char_p.in_dll(lib, name).value.decode()
        except Exception:
            pass
    return meta


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
    print(f"ref: N={len(pos)} targets={k} eps={a.eps} (Plummer) {dt:.1f} s -> {a.out}")


def cmd_ref_from_csv(a):
    """The targets of a `ref` file (or all particles), accelerations from hoshi's double
    direct CSV."""
    fid, facc, _ = read_forces(a.direct)
    if a.targets_from:
        targets, _, eps = load_ref(a.targets_from)
        if abs(eps - a.eps) > 1e-15:
            sys.exit(f"--targets-from eps {eps} != --eps {a.eps}")
    else:
        targets = np.arange(len(fid))
    if not np.array_equal(fid, np.arange(len(fid))):
        sys.exit("forces CSV ids are not 0..N-1 in order")
    np.savez(a.out, targets=targets, acc=facc[targets], eps=a.eps, ic=a.direct)
    print(f"ref from {a.direct}: {len(targets)} targets -> {a.out}")


def cmd_validate(a):
    targets, acc, eps = load_ref(a.ref)
    fid, facc, _ = read_forces(a.direct)
    e = rel_errors(acc, facc[targets])
    print(f"numpy ref vs hoshi double direct ({a.direct}), {len(targets)} targets: "
          f"max rel diff {e.max():.3e}, median {np.median(e):.3e}")
    if a.ic and a.rebound_direct:
        ids, pos, m = read_particles(a.ic)
        rb = Rebound(pos, m, eps, gravity="basic")
        g, dt, in_order = rb.accel()
        e2 = rel_errors(g[targets], acc)
        e3 = rel_errors(g[targets], facc[targets])
        print(f"REBOUND gravity=basic ({dt:.2f} s, order kept {in_order}) vs numpy ref: max rel diff "
              f"{e2.max():.3e}; vs hoshi double direct: max {e3.max():.3e}")


def hoshi_bench(hoshi, ic, eps, setting, threads, repeat, tmpcsv):
    """One `hoshi bench` call; returns (median seconds, CSV row, command)."""
    if os.path.exists(tmpcsv):
        os.remove(tmpcsv)
    cmd = [hoshi, "bench", "--ic", ic, "--solver", "tree", "--backend", "cpu", "--softening",
           str(eps), "--kernel", "plummer", "--threads", str(threads), "--repeat", str(repeat),
           "--peak-gflops", "480", "--csv", tmpcsv] + setting.split()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(tmpcsv) as f:
        hdr = f.readline().strip().split(",")
        row = dict(zip(hdr, f.readline().strip().split(",")))
    return float(row["seconds"]), row, " ".join(cmd)


def cmd_rounds(a):
    ids, pos, m = read_particles(a.ic)
    n = len(pos)
    targets, acc_ref, eps = load_ref(a.ref) if a.ref else (None, None, a.eps)
    if a.ref and abs(eps - a.eps) > 1e-15:
        sys.exit(f"ref eps {eps} != --eps {a.eps}")
    thetas = [float(x) for x in a.rebound_thetas.split(",")]
    hoshi_settings = [s for s in a.hoshi_settings.split(";") if s.strip()]

    t0 = time.perf_counter()
    rb = Rebound(pos, m, a.eps)
    setup_s = time.perf_counter() - t0
    meta = {"ic": a.ic, "n": n, "eps": a.eps, "kernel": "plummer", "hoshi_threads": a.threads,
            "repeat": a.repeat, "rebound_repeat": a.rebound_repeat, "rebound_setup_seconds": setup_s,
            "root_size": rb.sim.root_size, "omp_num_threads_env": os.environ.get("OMP_NUM_THREADS"),
            "numpy": np.__version__, "nproc": os.cpu_count()}
    meta.update(rebound_meta())
    meta["tree_layout"] = rb.tree_layout()
    print("REBOUND", meta["rebound_version"], meta.get("reb_githash_str"), "root cell:", meta["tree_layout"],
          flush=True)

    res = {"meta": meta, "rounds": [], "rebound_errors": {}, "order_kept": {}}
    if a.errors_from:
        with open(a.errors_from) as f:
            prev = json.load(f)
        res["rebound_errors"] = prev["rebound_errors"]
        res["order_kept"] = prev["order_kept"]
    # REBOUND has no JIT and nothing to warm up but caches; one untimed call at the cheapest
    # setting. Its errors (deterministic) come from the first timed call of each setting.
    rb.accel(max(thetas))

    tmpcsv = a.out + ".benchtmp.csv"
    for r in range(a.rounds):
        rnd = {"round": r + 1, "loadavg_start": loadavg(), "hoshi": {}, "rebound": {}}
        order = ["hoshi", "rebound"] if r % 2 == 0 else ["rebound", "hoshi"]
        rnd["order"] = order
        for code in order:
            rnd[f"loadavg_before_{code}"] = loadavg()
            if code == "hoshi":
                for s in hoshi_settings:
                    sec, row, cmd = hoshi_bench(a.hoshi, a.ic, a.eps, s, a.threads, a.repeat, tmpcsv)
                    rnd["hoshi"][s] = {"seconds_median": sec, "row": row, "cmd": cmd}
                    print(f"round {r + 1} hoshi [{s}] {sec:.4f} s", flush=True)
            else:
                for th in thetas:
                    key = f"theta={th:g}"
                    tot = []
                    for _ in range(a.rebound_repeat):
                        g, dt, in_order = rb.accel(th)
                        tot.append(dt)
                        if targets is not None and key not in res["rebound_errors"]:
                            res["rebound_errors"][key] = percentiles(rel_errors(g[targets], acc_ref))
                            res["order_kept"][key] = in_order
                            print(f"REBOUND {key}: order kept {in_order}, {res['rebound_errors'][key]}",
                                  flush=True)
                    tot.sort()
                    med = tot[(len(tot) - 1) // 2]  # the lower middle one, as hoshi bench
                    rnd["rebound"][key] = {"seconds_median": med, "seconds_min": tot[0], "all": tot}
                    print(f"round {r + 1} REBOUND [{key}] {med:.4f} s (min {tot[0]:.4f})", flush=True)
        rnd["loadavg_end"] = loadavg()
        res["rounds"].append(rnd)
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if os.path.exists(tmpcsv):
        os.remove(tmpcsv)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
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
    RE = R["rebound_errors"]
    meta = R["meta"]
    tl = meta["tree_layout"]
    print(f"N = {meta['n']}, eps = {meta['eps']} (Plummer, both codes), REBOUND {meta['rebound_version']} "
          f"(git {meta.get('reb_githash_str', '?')[:10]}), root_size {meta['root_size']:.2f}, root cell pt "
          f"at byte 128 = {tl['int_at_128']} (monopole-only layout: {tl['monopole_only']}); hoshi threads "
          f"{meta['hoshi_threads']}, repeat {meta['repeat']}; REBOUND repeat {meta['rebound_repeat']}; "
          f"particle order kept by REBOUND: {all(R['order_kept'].values())}")
    hs = list(R["rounds"][0]["hoshi"].keys())
    rs = list(R["rounds"][0]["rebound"].keys())

    def times(code, key, field="seconds_median"):
        return [rd[code][key][field] for rd in R["rounds"]]

    print("\n| code | setting | p50 | p90 | p99 | max | per-round median time (s) | best (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for s in hs:
        e = HE[s]
        t = times("hoshi", s)
        print(f"| hoshi | {s} | {e['p50']:.2e} | {e['p90']:.2e} | {e['p99']:.2e} | {e['max']:.2e} | "
              f"{' '.join(f'{x:.3f}' for x in t)} | {min(t):.3f} |")
    for s in rs:
        e = RE[s]
        t = times("rebound", s)
        print(f"| REBOUND | {s} | {e['p50']:.2e} | {e['p90']:.2e} | {e['p99']:.2e} | {e['max']:.2e} | "
              f"{' '.join(f'{x:.3f}' for x in t)} | {min(t):.3f} |")

    fams_h = {"hoshi barnes94": [s for s in hs if "barnes94" in s],
              "hoshi relative": [s for s in hs if "relative" in s]}
    fams_h = {k: v for k, v in fams_h.items() if v}
    fams_r = {"REBOUND": rs}

    def at(code, fams, errs, tp, tsel):
        out = {}
        for f, keys in fams.items():
            out[f] = interp_time_at([(errs[k]["p99"], tsel(k)) for k in keys], tp)
        ok = [v for v in out.values() if v[0] is not None]
        out[f"{code} all"] = min(ok) if ok else (None, False)
        return out

    def fmt(v):
        return "n/a" if v[0] is None else f"{v[0]:.3f}" + ("(<=)" if v[1] else "")

    tps = [float(x) for x in a.p99.split(",")]
    print("\nMatched p99: log-log interpolation of time on each family's Pareto front (time vs p99); "
          "'all' = the faster family of the code. (<=): the family's least accurate point is still more "
          "accurate than the target, so its time is an upper bound there.")
    print("| p99 | hoshi family | REBOUND | per-round ratio t_REBOUND / t_hoshi | best-of: t_REBOUND / t_hoshi = ratio |")
    print("|---|---|---|---|---|")
    for tp in tps:
        per_round = [(at("hoshi", fams_h, HE, tp, lambda k: rd["hoshi"][k]["seconds_median"]),
                      at("REBOUND", fams_r, RE, tp, lambda k: rd["rebound"][k]["seconds_median"]))
                     for rd in R["rounds"]]
        best_h = at("hoshi", fams_h, HE, tp, lambda k: min(times("hoshi", k)))
        best_r = at("REBOUND", fams_r, RE, tp, lambda k: min(times("rebound", k)))
        for fh in ["hoshi all"] + list(fams_h):
            rr = []
            for H, P in per_round:
                if H[fh][0] is None or P["REBOUND"][0] is None:
                    rr.append("n/a")
                else:
                    rr.append(f"{P['REBOUND'][0] / H[fh][0]:.1f}" + ("*" if H[fh][1] or P["REBOUND"][1] else ""))
            if best_h[fh][0] is None or best_r["REBOUND"][0] is None:
                b = "n/a"
            else:
                b = (f"{fmt(best_r['REBOUND'])} s / {fmt(best_h[fh])} s = "
                     f"{best_r['REBOUND'][0] / best_h[fh][0]:.1f}")
            print(f"| {tp:.0e} | {fh} | REBOUND | {' '.join(rr)} | {b} |")
    print("(* in a per-round ratio: one side's time is an upper bound, see (<=))")
    print("\nload average per round (start / before hoshi / before REBOUND / end):")
    for rd in R["rounds"]:
        print(f"  round {rd['round']} ({'->'.join(rd['order'])}): {rd['loadavg_start']} / "
              f"{rd['loadavg_before_hoshi']} / {rd['loadavg_before_rebound']} / {rd['loadavg_end']}")


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
    s.add_argument("--targets-from", help="a `ref` file whose targets to keep")
    s.add_argument("--out", required=True)
    s = sub.add_parser("validate")
    s.add_argument("--ref", required=True)
    s.add_argument("--direct", required=True)
    s.add_argument("--ic", help="with --rebound-direct: the particle file")
    s.add_argument("--rebound-direct", action="store_true", help="also REBOUND's gravity='basic' (O(N^2))")
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
    s.add_argument("--rebound-thetas", required=True, help="comma-separated opening angles (theta; "
                   "opening_angle2 = theta^2)")
    s.add_argument("--errors-from", help="reuse REBOUND's errors (same ic/ref/thetas) from an earlier rounds JSON")
    s.add_argument("--threads", type=int, default=1)
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--repeat", type=int, default=5, help="hoshi bench --repeat")
    s.add_argument("--rebound-repeat", type=int, default=3)
    s.add_argument("--out", required=True)
    s = sub.add_parser("summarize")
    s.add_argument("--rounds", required=True, nargs="+", help="rounds JSON files (their rounds are merged)")
    s.add_argument("--hoshi-errors", required=True)
    s.add_argument("--p99", default="1e-3,1e-2")
    a = p.parse_args()
    {"ref": cmd_ref, "ref-from-csv": cmd_ref_from_csv, "validate": cmd_validate, "errors": cmd_errors,
     "rounds": cmd_rounds, "summarize": cmd_summarize}[a.cmd](a)


if __name__ == "__main__":
    main()
