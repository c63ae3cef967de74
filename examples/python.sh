# Sourced by the example scripts. PY: the Python to run their analysis and plots with: $PYTHON
# if set, else the project's .venv (where `scripts/setup.sh test` installs numpy, matplotlib,
# h5py, yt and pynbody), else python3 from PATH.
_hoshi_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_hoshi_example=$(basename "$0" .sh)
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
  if ! command -v "$PY" >/dev/null 2>&1; then
    echo "no plot: no $PY (scripts/setup.sh test makes .venv; or set PYTHON)" >&2
    return 1
  fi
  "$PY" -c "import matplotlib" 2>/dev/null && return 0
  echo "no plot: $PY has no matplotlib (scripts/setup.sh test installs it into .venv;" \
    "or set PYTHON to a Python that has it)" >&2
  return 1
}

# For the examples that plot in Python: a PYTHON= that names no program is said before the
# simulations run (they ran, then the plot said "no matplotlib").
check_python_setting() {
  if [ -n "${PYTHON:-}" ] && ! command -v "$PY" >/dev/null 2>&1; then
    echo "$_hoshi_example: PYTHON=$PY: not found" >&2
    exit 2
  fi
}

# For the examples whose table is computed in Python: said before the simulations run.
require_python() {
  check_python_setting
  if ! command -v "$PY" >/dev/null 2>&1; then
    echo "$_hoshi_example: needs Python 3 for its table: no $PY (scripts/setup.sh test makes" \
      ".venv; or set PYTHON)" >&2
    exit 2
  fi
}

# Claims the output directory $1: a new or empty one, or one this example wrote before (its
# marker .hoshi_example_NAME). Any other is refused, since the scripts rerun into their
# directory with hoshi's --overwrite, which removes a run's outputs there; FORCE=1 takes it
# anyway. The example's own plots are removed, so that a rerun without matplotlib leaves none
# of an earlier run beside its new tables.
claim_out_dir() {
  local out=$1 marker=".hoshi_example_$_hoshi_example"
  shift
  if [ -e "$out" ] && [ ! -d "$out" ]; then
    echo "$_hoshi_example: $out exists and is not a directory" >&2
    exit 2
  fi
  # A run's lock file alone (a run that failed at its start) leaves a directory empty.
  if [ -d "$out" ] && [ -n "$(ls -A "$out" | grep -vx '.hoshi.lock')" ] && [ ! -e "$out/$marker" ] &&
    [ "${FORCE:-0}" != 1 ]; then
    echo "$_hoshi_example: $out is not empty and not an earlier output of this example" \
      "(give a new directory, or FORCE=1 to let hoshi --overwrite reuse it)" >&2
    exit 2
  fi
  mkdir -p "$out"
  touch "$out/$marker"
  local plot
  for plot in "$@"; do rm -f "$out/$plot"; done
}
