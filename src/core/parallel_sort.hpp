// std::sort on every OpenMP thread where libstdc++'s parallel mode is there (GCC with
// -fopenmp): the checks that sort a whole particle set (duplicate ids, coincident positions)
// took tens of seconds on one thread at 1e8 particles. Only for .cpp files (not nvcc's).
#pragma once

#include <algorithm>
#include <iterator>
#include <memory>
#include <new>

#if defined(_OPENMP) && defined(__GLIBCXX__)
#include <parallel/algorithm>
#endif

namespace hoshi {

template <class It, class Less>
void parallel_sort(It begin, It end, Less less) {
#if defined(_OPENMP) && defined(__GLIBCXX__)
  // libstdc++'s parallel sort (a multiway mergesort on every thread) allocates a copy of the
  // range inside its own OpenMP region, where a failed allocation ends the program
  // (std::terminate, not hoshi's "out of memory"). That much memory is asked for here first, and
  // freed: where it is not there, the range is sorted in place by the balanced quicksort, which
  // needs no copy but keeps to about two threads (its nested regions get one thread each under
  // libgomp's default of one active level; docs/perf-io.md).
  using T = typename std::iterator_traits<It>::value_type;
  const auto n = static_cast<std::size_t>(end - begin);
  const std::size_t probe_size = n + n / 8;
  std::allocator<T> alloc;
  T* volatile probe = nullptr;  // volatile: an unused allocation may be optimized away
  try {
    probe = alloc.allocate(probe_size);
  } catch (const std::bad_alloc&) {
  }
  const bool room = probe != nullptr;
  if (room) alloc.deallocate(probe, probe_size);
  if (room)
    __gnu_parallel::sort(begin, end, less);  // sequential below its own threshold
  else
    __gnu_parallel::sort(begin, end, less, __gnu_parallel::balanced_quicksort_tag());
#else
  std::sort(begin, end, less);
#endif
}

}  // namespace hoshi
