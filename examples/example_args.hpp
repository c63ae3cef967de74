// Positional arguments of the measurement programs in examples/ (tree_perf, walk_bench,
// kernel_bench, box_mirror_accuracy), each with a default: a bad one is one line naming it,
// then the usage, and exit status 2 (they crashed on 0, aborted on a word, printed inf or nan).
#pragma once

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace hoshi::examples {

class Args {
 public:
  Args(int argc, char** argv) : argc_(argc), argv_(argv) {}

  bool given(int i) const { return i < argc_; }

  // Argument i (1-based) as a whole number from min to max (an int's range by default, which
  // most of them go into); `fallback` when absent.
  long long count(int i, const char* name, long long fallback, long long min = 1,
                  long long max = INT_MAX) const {
    if (!given(i)) return fallback;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(argv_[i], &end, 10);
    if (end == argv_[i] || *end != '\0' || errno == ERANGE || v < min || v > max)
      throw std::invalid_argument(std::string("invalid ") + name + " '" + argv_[i] +
                                  "' (a whole number from " + std::to_string(min) + " to " +
                                  std::to_string(max) + ")");
    return v;
  }

  // Argument i as a finite number, > 0 (`positive`) or >= 0; `fallback` when absent.
  double number(int i, const char* name, double fallback, bool positive = true) const {
    if (!given(i)) return fallback;
    char* end = nullptr;
    const double v = std::strtod(argv_[i], &end);
    if (end == argv_[i] || *end != '\0' || !std::isfinite(v) || (positive ? !(v > 0) : !(v >= 0)))
      throw std::invalid_argument(std::string("invalid ") + name + " '" + argv_[i] + "' (" +
                                  (positive ? "> 0" : ">= 0") + ")");
    return v;
  }

  std::string text(int i, const std::string& fallback) const {
    return given(i) ? argv_[i] : fallback;
  }

 private:
  int argc_;
  char** argv_;
};

// Runs body(); an exception is "PROGRAM: error: WHAT" and the usage on stderr, status 2.
template <class F>
int run_main(const char* program, const char* usage, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\nusage: %s\n", program, e.what(), usage);
    return 2;
  }
}

}  // namespace hoshi::examples
