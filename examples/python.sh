# Sourced by the example scripts. PY: the Python to run their analysis and plots with: $PYTHON
# if set, else the project's .venv (where `scripts/setup.sh test` installs numpy, matplotlib,
# h5py, yt and pynbody), else python3 from PATH.
_hoshi_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -n "${PYTHON:-}" ]; then
  PY=$PYTHON
elif [ -x "$_hoshi_root/.venv/bin/python" ]; then
  PY=$_hoshi_root/.venv/bin/python
else
  PY=python3
fi

# True when $PY has matplotlib; otherwise says so, and how to get it, on stderr (the caller
# skips its plot; the numbers are still written).
plots_available() {
  "$PY" -c "import matplotlib" 2>/dev/null && return 0
  echo "no plot: $PY has no matplotlib (scripts/setup.sh test installs it into .venv;" \
    "or set PYTHON to a Python that has it)" >&2
  return 1
}
