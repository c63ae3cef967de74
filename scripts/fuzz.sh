#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -DHOSHI_FUZZ=ON) and runs each one for a bounded time
# on a generated seed corpus. Any crash, sanitizer report or unexpected exception makes the
# fuzzer, and so this script, exit non-zero.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 60)
#   HOSHI_FUZZ_BUILD=DIR  build directory (default build-fuzz)
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOSHI_FUZZ_BUILD:-$root/build-fuzz}
jobs=${HOSHI_JOBS:-2}

cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DHOSHI_FUZZ=ON -DHOSHI_CUDA=OFF -DHOSHI_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_tipsy fuzz_gadget fuzz_csv fuzz_seeds -j "$jobs"

corpus=$build/fuzz-corpus
rm -rf "$corpus"
"$build/fuzz/fuzz_seeds" "$corpus/seeds"
for target in tipsy gadget csv; do
  mkdir -p "$corpus/$target"
  echo "== fuzz_$target for ${seconds}s"
  # New inputs go to the first directory; the seeds are read from the second.
  (cd "$build" && "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -max_len=4096 -timeout=10 -print_final_stats=1 "$corpus/$target" "$corpus/seeds/$target")
done
echo "fuzzing finished without findings"
