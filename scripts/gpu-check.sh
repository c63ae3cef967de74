#!/bin/bash
# The one command to run on a lent GPU (an H200): configure for sm_90, build, run the CUDA tests
# (test_gpu_*, test_cuda_*, and the CUDA instances of the suites that run one body on every
# backend) and the ptxas build check, then time the CUDA direct kernel (N = 2^12 .. 2^20) and
# the CUDA tree force (Plummer N = 2^16 .. 2^24) with CUDA events after a warm-up (median of
# repeats), each checked against the CPU double reference on sampled targets, and a whole
# device-resident step (N = 2^20 .. 2^24) phase by phase (keys, sort, download, host build,
# upload, walk, kick + drift), and print the tables (hoshi_gpu_bench, gpu/bench_gpu.cpp).
# It finishes within GPU_CHECK_SECONDS (default 300: the issue's 5 minutes on an H200): each test
# binary is bounded (a hung kernel is reported by the test that was running), the sanitizer runs
# share what the timing leaves them, and the timing skips the rows predicted to overrun, so the
# goals summary is always printed (pass the device tool's limit less a margin for its start).
# The table is written to $OUT/gpu-check-table.txt when OUT is set (the device tool), else to
# BUILD/gpu-check-table.txt; copy it into docs/performance.md with the date and the device.
#
# The GPU machine's image lacks hoshi's build dependencies: run scripts/gpu-pack.sh here first
# and name .gpu-pack in the device tool's `carry`; this script then runs the pack. Without a
# pack it configures and builds (where the dependencies are installed).
#
# usage: scripts/gpu-check.sh [BUILD_DIR]      (default build-gpu-check)
#   GPU_CHECK_DIRECT=12:20 GPU_CHECK_TREE=16:24 GPU_CHECK_STEP=20:24
#   GPU_CHECK_DIRECT_TARGETS=2,2p,4,4p (the direct kernel variants: targets per thread 1, 2
#   and/or 4, "p" for the prefetching tile schedule)
#   GPU_CHECK_WALKS=particle,group,lists GPU_CHECK_REPEATS=5 override the sweep (0:0 skips one;
#   the tree and the step are timed per walk: the per-particle kernel, and the group mode (a warp
#   per group) with its lanes kernel and with its lists kernel, tree/walk_warp.hpp; lists7 and
#   lists8 add the lists kernel built for 7 and 8 blocks per SM).
#   GPU_CHECK_SANITIZE=0 skips compute-sanitizer's racecheck and synccheck of the lists and
#   prefetching direct kernels' tests (GPU_CHECK_SANITIZE_SECONDS=120 bounds each of the four,
#   and they share what is left of the budget once the timing's 45% is set aside).
#   GPU_CHECK_SECONDS=300 the whole script's budget; GPU_CHECK_TEST_SECONDS=150 bounds each
#   test binary (and the tests together, with their reruns, stop at the timing's reserve, 45% of
#   the budget: later binaries are SKIPPED and the check fails).
# A carried pack built from other sources than the ones carried with it is named in a WARNING
# line (.gpu-pack/SOURCES against scripts/gpu-pack.sh --sources-hash).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu-check}
case $build in /*) ;; *) build=$PWD/$build ;; esac  # an absolute BUILD_DIR as it is
out_dir=${OUT:-$build}
mkdir -p "$out_dir"
log="$out_dir/gpu-check.log"
t0=$(date +%s)
stamp() { echo "== $(( $(date +%s) - t0 )) s: $*" | tee -a "$log"; }
budget=${GPU_CHECK_SECONDS:-300}
case $budget in '' | *[!0-9]*)
  echo "gpu-check: GPU_CHECK_SECONDS='$budget' is not a whole number of seconds" >&2
  exit 2
  ;;
esac
left() { echo $((budget - ($(date +%s) - t0))); }

pack=.gpu-pack
scripts/gpu-unpack.sh  # the carried pack travels as one archive
if [ -x "$pack/bin/hoshi_gpu_bench" ]; then
  # Prebuilt by scripts/gpu-pack.sh and carried (the GPU machine cannot configure hoshi).
  stamp "using the carried $pack (commit $(cat $pack/COMMIT), needs $(cat $pack/GLIBC); $(ldd --version | head -1))"
  # The pack runs instead of these sources: one built from others would test old code.
  if [ -f "$pack/SOURCES" ] && [ "$(scripts/gpu-pack.sh --sources-hash)" != "$(cat "$pack/SOURCES")" ]; then
    stamp "WARNING: $pack was built from other sources than these (run scripts/gpu-pack.sh" \
      "again before the device call); its binaries run as they are"
  fi
  export LD_LIBRARY_PATH="$PWD/$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  bin=$pack/bin
  ptxas_dir=$pack/ptxas
else
  stamp "configure (sm_90)"
  if ! cmake -S . -B "$build" -DHOSHI_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1; then
    tail -30 "$log"
    echo "gpu-check: configure failed; build a pack with scripts/gpu-pack.sh where the" \
      "dependencies are installed and carry .gpu-pack" >&2
    exit 1
  fi
  tests=$(cd tests && { ls test_gpu_*.cpp test_cuda_*.cpp; grep -l HOSHI_SKIP_IF_UNAVAILABLE test_*.cpp; } |
    sort -u | sed 's/\.cpp$//' | tr '\n' ' ')
  stamp "build hoshi_gpu_bench $tests"
  make -C "$build" -j"$(nproc)" hoshi_gpu_bench $tests >>"$log" 2>&1 || {
    tail -40 "$log"
    exit 1
  }
  mkdir -p "$build/check-bin"
  for t in $tests; do ln -sf "$build/tests/$t" "$build/check-bin/$t"; done
  ln -sf "$build/gpu/hoshi_gpu_bench" "$build/check-bin/hoshi_gpu_bench"
  bin=$build/check-bin
  ptxas_dir=$build/ptxas
fi

stamp "device"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$log" || true
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores" |
  tee -a "$log"

stamp "CUDA tests and the ptxas build check"
test_status=0
tmp=$(mktemp -d)
# On this machine a CUDA test that cannot run fails instead of skipping (a device the runtime
# cannot see must not pass as skipped tests), and launches are synchronous, so that a faulting
# kernel is reported by its own launch check rather than by a later call.
export HOSHI_REQUIRE_CUDA=1 CUDA_LAUNCH_BLOCKING=1
for t in "$bin"/test_*; do
  name=$(basename "$t")
  # test_gpu_* and test_cuda_* run whole; the other suites' CPU instances ran in CI already, so
  # only their CUDA instances (named .../cuda_*) run here.
  filter=()
  case "$name" in test_gpu_* | test_cuda_*) ;; *) filter=(--gtest_filter='*cuda*') ;; esac
  # Each binary's limit, and the whole phase's: what is left before the timing's reserve (45%
  # of the budget), so that a hang in a path several binaries share cannot take the timing's
  # time (each binary was bounded, the phase was not).
  limit=$(($(left) - budget * 45 / 100))
  [ "$limit" -le "${GPU_CHECK_TEST_SECONDS:-150}" ] || limit=${GPU_CHECK_TEST_SECONDS:-150}
  if [ "$limit" -le 10 ]; then
    test_status=1
    echo "SKIPPED $name: the time budget (GPU_CHECK_SECONDS=$budget) leaves ${limit} s" |
      tee -a "$log"
    continue
  fi
  rc=0
  started=$(date +%s)
  timeout -k 10 "$limit" "$t" ${filter[@]+"${filter[@]}"} >"$tmp/$name.txt" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    echo "PASS $name: $(grep -cE '^\[ +OK \]' "$tmp/$name.txt" || true) ok," \
      "$(grep -cE '^\[ +SKIPPED \] .*\(' "$tmp/$name.txt" || true) skipped" \
      "($(($(date +%s) - started)) s)" | tee -a "$log"
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    # A hung kernel (a warp waiting on a sync that never comes) would otherwise take the whole
    # command's time: the test that was running is named.
    test_status=1
    # At the binary's own limit a hung kernel; at a shorter one the budget ran out first.
    why="TIMEOUT after $limit s"
    [ "$limit" -ge "${GPU_CHECK_TEST_SECONDS:-150}" ] ||
      why="stopped after $limit s at the timing's reserve (GPU_CHECK_SECONDS=$budget)"
    echo "FAIL $name: $why, in" \
      "$(grep -E '^\[ RUN +\]' "$tmp/$name.txt" | tail -1 | sed 's/^\[ RUN *\] *//')" |
      tee -a "$log"
  else
    test_status=1
    echo "FAIL $name:" | tee -a "$log"
    grep -vE '^\[ +(OK|RUN) +\]' "$tmp/$name.txt" | tail -40 | tee -a "$log" || true
    # A kernel fault poisons the CUDA context for the rest of the process: rerun each failed
    # test alone to tell which fail by themselves.
    grep -E '^\[  FAILED  \] [^ ]+\.[^ ]+' "$tmp/$name.txt" | awk '{print $4}' | sed 's/,$//' |
      sort -u | head -20 | while read -r one; do
      # Each rerun bounded too (a test that failed only for the poisoned context may hang
      # alone), and none once the timing's reserve is reached.
      again=$(($(left) - budget * 45 / 100))
      [ "$again" -le 30 ] || again=30
      if [ "$again" -le 5 ]; then
        echo "  alone: SKIPPED $one (no time left before the timing)" | tee -a "$log"
      elif timeout -k 5 "$again" "$t" --gtest_filter="$one" >"$tmp/one.txt" 2>&1; then
        echo "  alone: PASS $one" | tee -a "$log"
      else
        echo "  alone: FAIL $one" | tee -a "$log"
        grep -E 'Failure|rror|Expected|actual|Which is|HOSHI' "$tmp/one.txt" | head -8 |
          tee -a "$log" || true
      fi
    done || true
  fi
  cat "$tmp/$name.txt" >>"$log"
done
rm -rf "$tmp"
tests/check_ptxas.sh "$ptxas_dir" 90 2>&1 | grep -v 'cub::' | tee -a "$log" || test_status=1

# Shared-memory races and barrier misuse in the kernels whose warp syncs the CPU mirror cannot
# check (the lists kernel's syncs that end a tile's reads before its refill; the prefetching
# direct schedule): compute-sanitizer's racecheck and synccheck on those tests alone, each
# bounded by GPU_CHECK_SANITIZE_SECONDS (default 120). GPU_CHECK_SANITIZE=0 skips it.
if [ "${GPU_CHECK_SANITIZE:-1}" != 0 ]; then
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null |
    head -1 || true)
  if [ -z "$sanitizer" ]; then
    stamp "compute-sanitizer not found: racecheck and synccheck skipped"
  else
    # Only the kernel under test is instrumented (--kernel-name kns=SUBSTRING, where this
    # compute-sanitizer has it): faster, and no report from CUB's kernels (racecheck has flagged
    # CUB internals before) can pass for one of ours.
    filter=
    help_text=$("$sanitizer" --help 2>&1 || true)  # whole, then searched: no SIGPIPE under pipefail
    case $help_text in *--kernel-name*) filter=1 ;; esac
    runs_left=4
    for tool in racecheck synccheck; do
      for spec in "test_gpu_tree:tree_walk_lists:*cuda_*lists*:*ListsOccupancy*" \
        "test_gpu_direct:direct_forces_kernel:*Prefetch*"; do
        t=${spec%%:*}
        rest=${spec#*:}
        kernel=${rest%%:*}
        tests=${rest#*:}
        runs_left=$((runs_left - 1))
        [ -x "$bin/$t" ] || continue
        # This run's share of the time before the timing's reserve (45% of the budget); under
        # 20 s each, the runs in order take what is there (the lists kernel's racecheck first).
        free=$(($(left) - budget * 45 / 100))
        limit=$((free / (runs_left + 1)))
        [ "$limit" -ge 20 ] || limit=$free
        [ "$limit" -le "${GPU_CHECK_SANITIZE_SECONDS:-120}" ] ||
          limit=${GPU_CHECK_SANITIZE_SECONDS:-120}
        if [ "$limit" -lt 20 ]; then
          echo "SKIPPED $tool $t: the time budget (GPU_CHECK_SECONDS=$budget) leaves ${limit} s" |
            tee -a "$log"
          continue
        fi
        stamp "$tool $t --gtest_filter=$tests${filter:+ (kernels *$kernel*)}, at most $limit s"
        rc=0
        timeout -k 10 "$limit" "$sanitizer" --tool "$tool" \
          ${filter:+--kernel-name "kns=$kernel"} --error-exitcode 3 \
          "$bin/$t" --gtest_filter="$tests" >"$out_dir/$tool-$t.txt" 2>&1 || rc=$?
        # A run cut short still counts what it reported before the limit.
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
          if grep -qE 'Race reported|Barrier error|Invalid|SUMMARY: [1-9]' \
            "$out_dir/$tool-$t.txt"; then
            rc=3
          fi
        fi
        case $rc in
          0) echo "PASS $tool $t" | tee -a "$log" ;;
          124 | 137)
            echo "TIMEOUT $tool $t: no report in what ran (partial; raise GPU_CHECK_SECONDS or" \
              "GPU_CHECK_SANITIZE_SECONDS)" | tee -a "$log"
            ;;
          *)
            test_status=1
            echo "FAIL $tool $t (exit $rc):" | tee -a "$log"
            grep -E 'ERROR|Race|race|Barrier|barrier|FAILED' "$out_dir/$tool-$t.txt" | head -20 |
              tee -a "$log" || true
            ;;
        esac
      done
    done
  fi
fi

unset HOSHI_REQUIRE_CUDA CUDA_LAUNCH_BLOCKING  # asynchronous launches for the timing

# The timing gets what is left, less 15 s for its last row's overrun and the exit; at least 60 s.
timing=$(($(left) - 15))
[ "$timing" -ge 60 ] || timing=60
stamp "timing (budget $timing s)"
# timeout: a hung kernel must not take the command's whole time (the table so far is kept); 20 s
# past the budget, so that the command ends within GPU_CHECK_SECONDS + ~45 s (it was + 60 s,
# which with the unpacking could pass the device call's limit and lose the closing summary).
timeout -k 10 $((timing + 20)) "$bin/hoshi_gpu_bench" --direct "${GPU_CHECK_DIRECT:-12:20}" \
  --tree "${GPU_CHECK_TREE:-16:24}" --step "${GPU_CHECK_STEP:-20:24}" \
  --direct-targets "${GPU_CHECK_DIRECT_TARGETS:-2,2p,4,4p}" \
  --walk "${GPU_CHECK_WALKS:-particle,group,lists}" --repeats "${GPU_CHECK_REPEATS:-5}" \
  --seconds "$timing" --out "$out_dir/gpu-check-table.txt" 2>&1 | tee -a "$log" ||
  test_status=1
stamp "done; table in $out_dir/gpu-check-table.txt, log in $log"
exit $test_status
