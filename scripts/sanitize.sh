#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer over the CPU code, built for the scalar SIMD
# path (-march=x86-64: the one path whose padding differs most from the AVX-512 and AVX2 ones
# that the main build tests), without CUDA. Runs the test executables that are fast enough
# under the sanitizers (kernels, tree build, multipoles, walks, I/O, models, integrator); any
# sanitizer report fails (-fno-sanitize-recover). Used by .ci/run after the README's test
# command; a scalar ASan run found the tree kernels reading past their target arrays
# (2026-11-30).
#
#   scripts/sanitize.sh                 build in build-sanitize and run
#   HOSHI_SANITIZE_BUILD=DIR            another build directory
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=${HOSHI_SANITIZE_BUILD:-$root/build-sanitize}
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOSHI_CUDA=OFF \
  -DHOSHI_ARCH=x86-64 -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
tests=(test_group_kernels test_octree test_multipole test_local_expansion test_morton
  test_walk_warp test_direct test_stepper_host_build test_integrator test_ic test_analysis
  test_io_formats test_io_bad_input test_tree_forces test_solver_scaling test_checks)
# The build's output goes to a log, shown if the build fails (GCC 12 warns about std::regex's
# internals under ASan, -Wmaybe-uninitialized, which is not ours).
if ! make -C "$build" -j"$(nproc)" hoshi "${tests[@]}" >"$build/make.log" 2>&1; then
  tail -n 60 "$build/make.log"
  exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
for t in "${tests[@]}"; do
  filter='*'
  # The tree suites' parameterised accuracy and equilibrium cases take minutes under the
  # sanitizers; their plain cases exercise every kernel and walk, the crowded cells' cases
  # the trees deeper than the keys (each walk on the CPU).
  [[ $t == test_tree_forces ]] && filter='TreeForces.*:*Crowded*/cpu_*'
  echo "sanitize: $t"
  "$build/tests/$t" --gtest_brief=1 --gtest_filter="$filter"
done
echo "sanitize: no sanitizer report"
