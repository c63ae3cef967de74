"""The plotting examples on real `hoshi accuracy` output: each runs, writes its PNG, and
refuses bad input with a message (examples/accuracy_vs_theta.py, error_distribution.py)."""
import os
import pathlib
import subprocess
import sys

HOSHI = os.environ.get("HOSHI_EXE", "hoshi")
EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def accuracy(tmp_path):
    table, errors = tmp_path / "acc.csv", tmp_path / "err.csv"
    proc = subprocess.run(
        [HOSHI, "accuracy", "-n", "1500", "--targets", "200", "--theta", "0.4,0.8",
         "--criterion", "barnes94", "--order", "1,2", "--csv", str(table), "--errors",
         str(errors)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return table, errors


def plot(script, *args):
    return subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)],
                          capture_output=True, text=True)


def test_plots_are_written(tmp_path):
    table, errors = accuracy(tmp_path)
    for script, data, extra in (("accuracy_vs_theta.py", table, []),
                                ("error_distribution.py", errors, ["--where", "order=2"])):
        png = tmp_path / (script + ".png")
        proc = plot(script, data, "-o", png, *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_error_distribution_refuses_bad_input(tmp_path):
    table, errors = accuracy(tmp_path)
    proc = plot("error_distribution.py", table)  # the summary table, not --errors
    assert proc.returncode != 0 and "missing columns" in proc.stderr
    proc = plot("error_distribution.py", errors, "--where", "order=7")
    assert proc.returncode != 0 and "no rows match --where" in proc.stderr
    proc = plot("error_distribution.py", errors, "--where", "colour=red")
    assert proc.returncode != 0 and "expected COLUMN=VALUE" in proc.stderr
