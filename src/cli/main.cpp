// hoshi: the command-line driver. Thin: it parses options and calls library functions.
#include <cstring>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "direct/direct.hpp"
#ifdef HOSHI_HAVE_CUDA
#include "gpu/device.hpp"
#endif

namespace {

struct Command {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"run", hoshi::cli::cmd_run, "run a simulation (default: a Plummer sphere)"},
    {"forces", hoshi::cli::cmd_forces, "one force evaluation on a particle file, written as CSV"},
    {"ic", hoshi::cli::cmd_ic, "write initial conditions to a file"},
    {"bench", hoshi::cli::cmd_bench, "time the force evaluation"},
};

void print_help() {
  std::cout << "hoshi " << HOSHI_VERSION << ": gravitational N-body tree code (CPU and CUDA)\n\n"
            << "usage: hoshi COMMAND [OPTIONS]\n\ncommands:\n";
  for (const auto& c : kCommands)
    std::cout << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << "\n";
  std::cout << "\n'hoshi COMMAND --help' describes a command's options.\n"
            << "  --version  print the version, SIMD path and CUDA devices\n";
}

void print_version() {
  std::cout << "hoshi " << HOSHI_VERSION << "\n"
            << "CPU direct kernel: " << hoshi::direct_simd_name() << "\n";
#ifdef HOSHI_HAVE_CUDA
  std::cout << hoshi::gpu::device_report();
#else
  std::cout << "CUDA backend: not built (configure with a CUDA compiler, -DHOSHI_CUDA=ON)\n";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_help();
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    print_version();
    return 0;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.fn(argc - 1, argv + 1);
    } catch (const hoshi::cli::HelpShown&) {
      return 0;
    } catch (const std::invalid_argument& e) {
      std::cerr << "hoshi " << c.name << ": error: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "hoshi " << c.name << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "hoshi: error: unknown command '" << argv[1] << "' (see hoshi --help)\n";
  return 2;
}
