"""Helpers shared by the comparison scripts (compare_pytreegrav.py, compare_rebound.py): hoshi's
CSV files, error percentiles on a reference's targets, the `errors` subcommand, the machine's
load, and the time at a given p99 on a code's fastest curve. Imported by name from scripts/
(Python puts a script's own directory on the path)."""
import json
import math
import os

import numpy as np


def read_particles(path):
    d = np.loadtxt(path, delimiter=",", skiprows=1)
    with open(path) as f:
        header = f.readline().strip().split(",")
    col = {k: i for i, k in enumerate(header)}
    ids = d[:, col["id"]].astype(np.int64)
    pos = np.ascontiguousarray(d[:, [col["x"], col["y"], col["z"]]])
    m = np.ascontiguousarray(d[:, col["m"]])
    return ids, pos, m


def read_forces(path):
    d = np.loadtxt(path, delimiter=",", skiprows=1)
    return d[:, 0].astype(np.int64), np.ascontiguousarray(d[:, 1:4]), d[:, 4]


def rel_errors(a, a_ref):
    return np.linalg.norm(a - a_ref, axis=1) / np.linalg.norm(a_ref, axis=1)


def percentiles(e):
    s = np.sort(e)
    k = len(s)

    def q(p):
        return float(s[min(max(int(math.ceil(p * k)) - 1, 0), k - 1)])

    return {"p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": float(s[-1]), "k": k}


def load_ref(path):
    z = np.load(path)
    return z["targets"], z["acc"], float(z["eps"])


def cmd_errors(a):
    targets, acc, eps = load_ref(a.ref)
    res = {}
    if a.out and os.path.exists(a.out):
        with open(a.out) as f:
            res = json.load(f)
    for spec in a.forces:
        label, path = spec.split("=", 1) if "=" in spec else (spec, spec)
        fid, facc, _ = read_forces(path)
        p = percentiles(rel_errors(facc[targets], acc))
        res[label] = p
        print(f"{label:40s} p50 {p['p50']:.3e} p90 {p['p90']:.3e} p99 {p['p99']:.3e} max {p['max']:.3e}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().strip()


def interp_time_at(curve, target_p99):
    """log-log interpolation of time at p99 = target on a code's lower envelope.

    curve: list of (p99, seconds). Uses the Pareto front (faster-for-error points); returns
    (None, False) when the target is more accurate than every point, and (time of the least
    accurate point, True) when every point is more accurate than the target (an upper bound)."""
    pts = sorted(curve)  # by p99 ascending
    front = []
    for p, t in pts:  # keep points that are faster than every more accurate one
        if not front or t < front[-1][1]:
            front.append((p, t))
    for (p0, t0), (p1, t1) in zip(front, front[1:]):
        if p0 <= target_p99 <= p1:
            if p1 == p0:
                return min(t0, t1), False
            w = (math.log(target_p99) - math.log(p0)) / (math.log(p1) - math.log(p0))
            return math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0))), False
    if front and target_p99 >= front[-1][0]:
        return front[-1][1], True
    return None, False
