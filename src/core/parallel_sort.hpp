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
  __gnu_parallel::sort(begin, end, less);  // sequential below its own threshold
#else
  std::sort(begin, end, less);
#endif
}

}  // namespace hoshi
