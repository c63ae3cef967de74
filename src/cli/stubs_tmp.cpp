#include "cli/commands.hpp"
namespace hoshi::cli {
int cmd_run(int, char**) {
  return 1;
}
int cmd_forces(int, char**) {
  return 1;
}
int cmd_ic(int, char**) {
  return 1;
}
}  // namespace hoshi::cli
