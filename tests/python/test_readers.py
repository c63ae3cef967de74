"""hoshi's snapshots opened by the real readers, exactly as a user would.

hoshi writes the particles of a CSV file (an independent, text channel: the expected values)
as HDF5 (Gadget-4 layout) and tipsy snapshots through the hoshi executable (env HOSHI_EXE);
yt.load and pynbody.load then open them unchanged, and the particle count, positions,
velocities, masses, time and physical units must match.

Unit constants used for the expected values (the same ones hoshi documents in docs/io.md):
kpc = 3.085678e21 cm, Msun = 1.989e33 g, G = 6.672e-8 cgs, 1 Gyr = 3.15576e16 s.
"""
import csv
import os
import subprocess

import numpy as np
import pytest

HOSHI = os.environ.get("HOSHI_EXE", "hoshi")
KPC_CM = 3.085678e21
MSUN_G = 1.989e33
G_CGS = 6.672e-8
GYR_S = 3.15576e16
N = 300
T_SNAP = 0.5  # code units of time at which the snapshot is written


def run(*args):
    proc = subprocess.run([HOSHI, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    cols = {k: np.array([float(r[k]) for r in rows]) for k in ("x", "y", "z", "vx", "vy", "vz", "m")}
    ids = np.array([int(r["id"]) for r in rows])
    order = np.argsort(ids)
    return {
        "id": ids[order],
        "pos": np.stack([cols["x"], cols["y"], cols["z"]], axis=1)[order],
        "vel": np.stack([cols["vx"], cols["vy"], cols["vz"]], axis=1)[order],
        "mass": cols["m"][order],
    }


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """One CSV of initial conditions and, from it, snapshots in both unit systems.

    `--t-end 0 --snapshot-every 1` writes snapshot_000 with the CSV's particles unchanged;
    the time stamp is checked with a second run that takes one step of T_SNAP."""
    d = tmp_path_factory.mktemp("readers")
    ic = d / "ic.csv"
    run("ic", "--ic", "plummer", "-n", str(N), "--seed", "3", "--out", str(ic))
    out = {"ic": read_csv(ic), "dir": d}
    for units in ("galaxy", "henon"):
        for fmt in ("hdf5", "tipsy"):
            o = d / f"{units}_{fmt}"
            run("run", "--ic", str(ic), "--units", units, "--t-end", "0", "--snapshot-every", "1",
                "--snapshot-format", fmt, "--solver", "direct", "--quiet", "--out", str(o))
            out[units, fmt] = str(o / f"snapshot_000.{fmt}")
    # A snapshot at t = T_SNAP (galaxy units) for the time stamps.
    o = d / "timed"
    run("run", "--ic", str(ic), "--units", "galaxy", "--t-end", str(T_SNAP), "--dt", str(T_SNAP),
        "--snapshot-every", str(T_SNAP), "--solver", "direct", "--quiet", "--out", str(o))
    out["timed"] = str(o / "snapshot_001.hdf5")
    o = d / "timed_henon"
    run("run", "--ic", str(ic), "--t-end", str(T_SNAP), "--dt", str(T_SNAP),
        "--snapshot-every", str(T_SNAP), "--solver", "direct", "--quiet", "--out", str(o))
    out["timed_henon"] = str(o / "snapshot_001.hdf5")
    run("run", "--ic", str(ic), "--units", "galaxy", "--t-end", str(T_SNAP), "--dt", str(T_SNAP),
        "--snapshot-every", str(T_SNAP), "--snapshot-format", "tipsy", "--solver", "direct",
        "--quiet", "--out", str(d / "timed_tipsy"))
    out["timed_tipsy"] = str(d / "timed_tipsy" / "snapshot_001.tipsy")
    return out


def sort_by(ids, *arrays):
    order = np.argsort(ids)
    return [np.asarray(a)[order] for a in arrays]


# Time unit of galaxy units: 1 kpc / (1 km/s) in Gyr.
GALAXY_TIME_GYR = KPC_CM / 1e5 / GYR_S


# ---- h5py: the layout itself ------------------------------------------------------------------

def test_h5py_layout(sim):
    import h5py

    with h5py.File(sim["galaxy", "hdf5"], "r") as f:
        h = f["Header"].attrs
        assert list(h["NumPart_ThisFile"]) == [0, N, 0, 0, 0, 0]
        assert len(h["MassTable"]) == 6 and h["NumFilesPerSnapshot"] == 1
        assert h["HubbleParam"] == 1.0 and h["Omega0"] == 0.0 and h["OmegaLambda"] == 0.0
        assert h["Flag_DoublePrecision"] == 1
        for group in ("Header", "Parameters", "Units"):
            for name, value in f[group].attrs.items():
                if isinstance(value, (bytes, str)):
                    # fixed-length strings only (h5py returns variable-length ones as str)
                    assert f[group].attrs.get_id(name).get_type().is_variable_str() is False, name
        assert f["Units"].attrs["UnitLength_in_cm"] == KPC_CM
        assert f["Parameters"].attrs["units"] == b"galaxy"
        for ds in ("Coordinates", "Velocities", "Masses", "ParticleIDs", "Potential", "Acceleration"):
            attrs = f["PartType1"][ds].attrs
            assert attrs["a_scaling"] == 0 and attrs["h_scaling"] == 0, ds
        ids, pos = sort_by(f["PartType1/ParticleIDs"][:], f["PartType1/ParticleIDs"][:],
                           f["PartType1/Coordinates"][:])[0:2]
    ic = sim["ic"]
    np.testing.assert_array_equal(ids, ic["id"])
    # CSV holds shortest round-trip decimals: the doubles come back exactly.
    np.testing.assert_array_equal(pos, ic["pos"])


# ---- yt -------------------------------------------------------------------------------------

def test_yt_hdf5_galaxy_units(sim):
    import yt

    ds = yt.load(sim["galaxy", "hdf5"])
    ad = ds.all_data()
    ids = ad["PartType1", "ParticleIDs"].d.astype(np.int64)
    pos, vel, mass = sort_by(ids, ad["PartType1", "particle_position"].to("kpc").d,
                             ad["PartType1", "particle_velocity"].to("km/s").d,
                             ad["PartType1", "particle_mass"].to("Msun").d)
    ic = sim["ic"]
    assert len(ids) == N
    # yt's Gadget defaults (kpc, km/s, 1e10 Msun, h = 1 without cosmology) are galaxy units;
    # conversions multiply by 1: exact up to one rounding of the unit factors (1e-15).
    np.testing.assert_allclose(pos, ic["pos"], rtol=1e-12)
    np.testing.assert_allclose(vel, ic["vel"], rtol=1e-12)
    # yt's default mass unit is 1e10 of *its* Msun (1.98841e33 g), Gadget's is 1e10 x 1.989e33 g
    # (the value behind G = 43007.1): in yt's Msun the masses are 1e10 m exactly; in grams they
    # differ by 1.989 / 1.98841 - 1 = 3e-4. Exact grams need unit_base (next test).
    np.testing.assert_allclose(mass, ic["mass"] * 1e10, rtol=1e-12)


def test_yt_hdf5_units_from_units_group(sim):
    """Henon units: the user passes /Units to yt as unit_base (yt's Gadget frontend does not
    read /Units by itself); positions then come out in kpc and masses in 2.325e5 Msun."""
    import h5py
    import yt

    path = sim["henon", "hdf5"]
    with h5py.File(path, "r") as f:
        u = {k: float(v) for k, v in f["Units"].attrs.items()}
    ds = yt.load(path, unit_base={k: u[k] for k in
                                  ("UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s")})
    ad = ds.all_data()
    ids = ad["PartType1", "ParticleIDs"].d.astype(np.int64)
    pos, mass = sort_by(ids, ad["PartType1", "particle_position"].to("cm").d,
                        ad["PartType1", "particle_mass"].to("g").d)
    ic = sim["ic"]
    np.testing.assert_allclose(pos, ic["pos"] * KPC_CM, rtol=1e-12)
    # Henon mass unit: G = 1 with 1 kpc and 1 km/s, M = L V^2 / G.
    np.testing.assert_allclose(mass, ic["mass"] * KPC_CM * 1e10 / G_CGS, rtol=1e-12)


def test_yt_time(sim):
    import yt

    ds = yt.load(sim["timed"])
    # In yt's own kpc and Gyr (its kpc differs from Gadget's 3.085678e21 cm by 1.4e-7).
    unit = float(ds.quan(1, "kpc/(km/s)").to("Gyr"))
    assert ds.current_time.to("Gyr").d == pytest.approx(T_SNAP * unit, rel=1e-12)


def test_yt_tipsy(sim):
    import yt

    ds = yt.load(sim["galaxy", "tipsy"])
    ad = ds.all_data()
    pos = ad["all", "particle_position"].to("kpc").d
    ic = sim["ic"]
    assert len(pos) == N
    # Standard tipsy has no ids: particles are in file order, which is hoshi's order (the
    # CSV's); values are float32 (relative rounding 2^-24 = 6e-8, absolute floor for
    # coordinates near 0).
    csv_order = read_csv_unsorted(sim["dir"] / "ic.csv")
    np.testing.assert_allclose(pos, csv_order["pos"], rtol=1.2e-7, atol=1e-7)
    # Masses in 1e10 Msun (sum of float32 values: relative error <= 2^-24 each).
    total = ad["all", "particle_mass"].to("Msun").d.sum()
    assert total == pytest.approx(ic["mass"].sum() * 1e10, rel=2e-7)


def read_csv_unsorted(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return {"pos": np.array([[float(r[k]) for k in ("x", "y", "z")] for r in rows]),
            "vel": np.array([[float(r[k]) for k in ("vx", "vy", "vz")] for r in rows]),
            "mass": np.array([float(r["m"]) for r in rows])}


# ---- pynbody ----------------------------------------------------------------------------------

def test_pynbody_hdf5_galaxy_units(sim):
    import pynbody

    s = pynbody.load(sim["galaxy", "hdf5"])
    assert len(s) == N
    ids = np.asarray(s["iord"]).astype(np.int64)
    # Compared in cgs: pynbody's kpc and Msol differ from Gadget's constants in the 7th digit,
    # but it converts /Units (in cm, g, cm/s) exactly.
    pos, vel, mass = sort_by(ids, s["pos"].in_units("cm"), s["vel"].in_units("cm s^-1"),
                             s["mass"].in_units("g"))
    ic = sim["ic"]
    np.testing.assert_allclose(pos, ic["pos"] * KPC_CM, rtol=1e-12)
    np.testing.assert_allclose(vel, ic["vel"] * 1e5, rtol=1e-12)
    np.testing.assert_allclose(mass, ic["mass"] * 1e10 * MSUN_G, rtol=1e-12)


def test_pynbody_hdf5_henon_units(sim):
    import pynbody

    s = pynbody.load(sim["henon", "hdf5"])
    ids = np.asarray(s["iord"]).astype(np.int64)
    pos, vel, mass = sort_by(ids, s["pos"].in_units("cm"), s["vel"].in_units("cm s^-1"),
                             s["mass"].in_units("g"))
    ic = sim["ic"]
    np.testing.assert_allclose(pos, ic["pos"] * KPC_CM, rtol=1e-12)
    np.testing.assert_allclose(vel, ic["vel"] * 1e5, rtol=1e-12)
    np.testing.assert_allclose(mass, ic["mass"] * KPC_CM * 1e10 / G_CGS, rtol=1e-12)


def test_pynbody_time(sim):
    import pynbody

    s = pynbody.load(sim["timed"])
    # Time_GYR (in /Header and /Parameters) is what pynbody reads.
    assert float(s.properties["time"].in_units("Gyr")) == pytest.approx(
        T_SNAP * GALAXY_TIME_GYR, rel=1e-12)


def test_pynbody_time_henon_units(sim):
    import pynbody

    # Henon snapshots' /Units (1 kpc, 1 km/s, G = 1) imply the galaxy preset's time unit; without
    # Time_GYR pynbody reported the age of an empty universe, 9.78 Gyr, for every snapshot.
    s = pynbody.load(sim["timed_henon"])
    assert float(s.properties["time"].in_units("Gyr")) == pytest.approx(
        T_SNAP * GALAXY_TIME_GYR, rel=1e-12)


def test_pynbody_tipsy(sim):
    import pynbody

    s = pynbody.load(sim["galaxy", "tipsy"])
    assert len(s) == N
    ic = read_csv_unsorted(sim["dir"] / "ic.csv")
    # The .param file gives kpc and Msol (pynbody's own constants); values are float32
    # (relative rounding 2^-24 = 6e-8, absolute floor for coordinates near 0).
    np.testing.assert_allclose(s["pos"].in_units("kpc"), ic["pos"], rtol=1.2e-7, atol=1e-7)
    np.testing.assert_allclose(s["mass"].in_units("Msol"), ic["mass"] * 1e10, rtol=1.2e-7)
    # Velocities are stored in the G = 1 unit sqrt(G M / L); pynbody derives that unit with
    # its own G = 6.6743e-8 where hoshi uses Gadget's 6.672e-8: sqrt of the ratio is 1.7e-4,
    # plus float32 rounding.
    np.testing.assert_allclose(s["vel"].in_units("km s^-1"), ic["vel"], rtol=2.5e-4, atol=1e-6)


def test_pynbody_tipsy_time(sim):
    import pynbody

    s = pynbody.load(sim["timed_tipsy"])
    # Same G difference as the velocities (time unit L / V): 1.7e-4.
    assert float(s.properties["time"].in_units("Gyr")) == pytest.approx(
        T_SNAP * GALAXY_TIME_GYR, rel=2.5e-4)


# ---- Gadget binary: what hoshi ic writes by default, as Gadget (and these readers) expect ----

@pytest.fixture(scope="module")
def gadget(sim):
    """The CSV's particles as Gadget binary: the default (float32, 32-bit ids, format 2), format
    1 (.g1), and --gadget-precision double --gadget-ids 64."""
    d = sim["dir"]
    ic = str(d / "ic.csv")
    files = {}
    for name, extra in (("f.gadget", []), ("f.g1", []),
                        ("d.gadget", ["--gadget-precision", "double", "--gadget-ids", "64"])):
        run("ic", "--ic", ic, *extra, "--out", str(d / name))
        files[name] = str(d / name)
    return files


@pytest.mark.parametrize("name", ["f.gadget", "f.g1", "d.gadget"])
def test_pynbody_gadget(sim, gadget, name):
    import pynbody

    s = pynbody.load(gadget[name])
    assert len(s) == N
    double = name.startswith("d")
    assert s["pos"].dtype == (np.float64 if double else np.float32)
    assert s["iord"].dtype.itemsize == (8 if double else 4)
    ic = sim["ic"]
    ids, pos, vel, mass = sort_by(np.asarray(s["iord"]), s["iord"], s["pos"], s["vel"],
                                  s["mass"])
    np.testing.assert_array_equal(ids, ic["id"])
    # float32: the CSV's values rounded to float32, exactly.
    rnd = (lambda a: a) if double else (lambda a: a.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(pos, rnd(ic["pos"]))
    np.testing.assert_array_equal(vel, rnd(ic["vel"]))
    np.testing.assert_array_equal(mass, rnd(ic["mass"]))


@pytest.mark.parametrize("name", ["f.gadget", "f.g1"])
def test_yt_gadget(sim, gadget, name):
    # yt's Gadget binary frontend reads float32 with 32-bit ids without options (the double,
    # 64-bit variant, hoshi's only output until 2026-11-30, it does not).
    import yt

    ds = yt.load(gadget[name], bounding_box=[[-1e3, 1e3]] * 3)
    ad = ds.all_data()
    pos = np.column_stack(
        [ad["all", f"particle_position_{c}"].to("code_length").v for c in "xyz"])
    ids, pos = sort_by(ad["all", "particle_index"].v.astype(np.int64), ad["all", "particle_index"].v,
                       pos)
    ic = sim["ic"]
    np.testing.assert_array_equal(ids.astype(np.int64), ic["id"])
    np.testing.assert_array_equal(pos, ic["pos"].astype(np.float32).astype(np.float64))
