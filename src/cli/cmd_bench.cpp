// Placeholder until the benchmark lands (branch simd).
#include <stdexcept>

#include "cli/commands.hpp"
namespace hoshi::cli {
int cmd_bench(int, char**) {
  throw std::invalid_argument("bench: not built yet");
}
}  // namespace hoshi::cli
