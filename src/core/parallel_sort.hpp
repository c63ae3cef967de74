// std::sort on every OpenMP thread where libstdc++'s parallel mode is there (GCC with
// -fopenmp): the checks that sort a whole particle set (duplicate ids, coincident positions)
// took tens of seconds on one thread at 1e8 particles. Only for .cpp files (not nvcc's).
#pragma once

#include <algorithm>

#if defined(_OPENMP) && defined(__GLIBCXX__)
#include <parallel/algorithm>
#endif

namespace hoshi {

template <class It, class Less>
void parallel_sort(It begin, It end, Less less) {
#if defined(_OPENMP) && defined(__GLIBCXX__)
  // The balanced quicksort sorts in place. The default multiway mergesort allocates a copy of
  // the range inside its own OpenMP region, where a failed allocation ends the program
  // (std::terminate, not hoshi's "out of memory"), and costs 8-16 B per particle more at its
  // peak; it was ~10% faster on 2 threads (1e7 random keys: 0.45 s against 0.49 s; 0.11 s
  // against 0.03 s for all-equal keys; docs/perf-io.md).
  __gnu_parallel::sort(begin, end, less, __gnu_parallel::balanced_quicksort_tag());
#else
  std::sort(begin, end, less);
#endif
}

}  // namespace hoshi
