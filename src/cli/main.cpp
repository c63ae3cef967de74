// hoshi: the command-line driver. Thin: it parses options and calls library functions.
#include <omp.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <new>
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
    {"analyze", hoshi::cli::cmd_analyze, "Lagrangian radii, bound mass and profiles of snapshots"},
    {"accuracy", hoshi::cli::cmd_accuracy, "tree force errors against direct summation"},
    {"render", hoshi::cli::cmd_render, "picture of a snapshot's projected surface density (PNG)"},
};

// To stdout when asked for (--help), to stderr when the command is missing (an error, exit 2).
void print_help(std::ostream& out) {
  out << "hoshi " << HOSHI_VERSION << ": gravitational N-body tree code (CPU and CUDA)\n\n"
      << "usage: hoshi COMMAND [OPTIONS]\n\ncommands:\n";
  for (const auto& c : kCommands)
    out << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << "\n";
  out << "\noptions:\n"
      << "  --help     print this help\n"
      << "  --version  print the version, SIMD path and CUDA devices\n"
      << "\n'hoshi COMMAND --help' (or 'hoshi help COMMAND') describes a command's options.\n";
}

void print_version() {
  std::cout << "hoshi " << HOSHI_VERSION << "\n"
            << "CPU SIMD kernels (direct and tree): " << hoshi::direct_simd_name() << "\n";
  // How idle OpenMP threads wait (limit_openmp_spinning, below).
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::cout << "OpenMP: " << omp_get_max_threads() << " threads, waiting with "
            << (policy ? "OMP_WAIT_POLICY=" + std::string(policy)
                : spin ? "GOMP_SPINCOUNT=" + std::string(spin)
                       : std::string("the runtime's default"))
            << "\n";
#ifdef HOSHI_HAVE_CUDA
  std::cout << hoshi::gpu::device_report();
#else
  std::cout << "CUDA backend: not built (configure with a CUDA compiler, -DHOSHI_CUDA=ON)\n";
#endif
}

// OpenMP threads that wait for work spin before they sleep, libgomp's for 300000 spins by
// default: long enough that where other processes keep the cores busy a waiting thread burns
// the time slice the thread it waits for needs. Beside a compile job on 2 cores a default run
// (8192 particles, t = 0..1, 2 threads) took 5.9-6.4 s instead of 0.7 s, a tree force at
// N = 8000 0.100 s instead of 0.009 (docs/performance.md). libgomp reads its settings when it is
// loaded, before main, so hoshi sets GOMP_SPINCOUNT=10000 (a few tens of microseconds; on an
// idle machine the same speed) and executes itself again, unless OMP_WAIT_POLICY or
// GOMP_SPINCOUNT is set already (the user's choice) or it runs under valgrind (which the new
// process would leave). It executes the file its own code was mapped from (so the process
// keeps its name), and only when that is the file the kernel started: not when hoshi was
// started through the dynamic loader (ld.so hoshi ...: the loader's options would be lost),
// nor when the file is gone or replaced. Otherwise it goes on as it is.
std::string own_executable() {
  const auto here = reinterpret_cast<std::uintptr_t>(&own_executable);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2) continue;
    if (here < lo || here >= hi) continue;
    const auto slash = line.find('/');
    return slash == std::string::npos ? "" : line.substr(slash);
  }
  return "";
}

void limit_openmp_spinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (const char* preload = std::getenv("LD_PRELOAD"); preload && std::strstr(preload, "vgpreload"))
    return;
  const std::string self = own_executable();
  struct stat mapped {
  }, started{};
  if (self.empty() || ::stat(self.c_str(), &mapped) != 0 ||
      ::stat("/proc/self/exe", &started) != 0 || mapped.st_dev != started.st_dev ||
      mapped.st_ino != started.st_ino)
    return;
  if (::setenv("GOMP_SPINCOUNT", "10000", 1) != 0) return;
  ::execv(self.c_str(), argv);
  ::unsetenv("GOMP_SPINCOUNT");  // exec failed: as it was
}

// The usage and --version text to standard output: a write that failed (a full disk) is an
// error, as for a command's --help (it ended with status 0).
int stdout_written(int status) {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << "hoshi: error: write to standard output failed (disk full?)\n";
    return 1;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  limit_openmp_spinning(argv);
  const bool help = argc >= 2 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
                                  !std::strcmp(argv[1], "help"));
  // "hoshi --help run", "hoshi -h run", "hoshi help run": that command's help (they printed
  // the general usage, as if the command had not been named).
  char help_flag[] = "--help";
  char* command_help[] = {argv[0], argc >= 3 ? argv[2] : nullptr, help_flag, nullptr};
  if (help && argc == 3) {
    const bool known = std::any_of(std::begin(kCommands), std::end(kCommands),
                                   [&](const auto& c) { return !std::strcmp(argv[2], c.name); });
    if (!known) {
      std::cerr << "hoshi: error: unknown command '" << argv[2] << "' (see hoshi --help)\n";
      return 2;
    }
    argv = command_help;  // hoshi COMMAND --help
  } else if (argc < 2 || help) {
    // Without a command (or with more than one word after --help): the usage, as an error.
    const bool error = argc < 2 || argc > 2;
    print_help(error ? std::cerr : std::cout);
    if (argc > 3) {  // the reason last, where it is seen
      std::string words;
      for (int k = 2; k < argc; ++k) words += (k > 2 ? " " : "") + std::string(argv[k]);
      std::cerr << "hoshi: error: " << argv[1] << " takes one command name, not '" << words
                << "'\n";
    }
    return error ? 2 : stdout_written(0);
  }
  if (!std::strcmp(argv[1], "--version")) {
    print_version();
    return stdout_written(0);
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    // After an error, leave without HDF5's exit handler: a file HDF5 could not close (a write
    // that failed on a full disk) crashed it (SIGSEGV, status 139, after the error line), and
    // after reading a corrupt file it printed "HDF5: infinite loop closing library" and a line
    // of its free lists (one flipped byte of a snapshot's header). Every output is closed and
    // every temporary gone by then (as the exception unwound).
    // LeakSanitizer's check runs at exit: run it here, so that the sanitizer build still
    // checks the error paths for leaks.
    const auto failed = [](int status) -> int {
      std::cout.flush();
      std::cerr.flush();
      std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__)
      __lsan_do_leak_check();
#endif
      std::_Exit(status);
    };
    // The tables of accuracy, bench and analyze are their output, as --help's text is: a write
    // to standard output that failed (a full disk) ended with status 0. A run's outputs are its
    // files (its console may be gone: a closed pipe, a lost terminal).
    const auto written = [&](int status, bool help) {
      std::cout.flush();
      if ((help || std::strcmp(c.name, "run") != 0) &&
          (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))) {
        std::cerr << "hoshi " << c.name
                  << ": error: write to standard output failed (a closed pipe or a full disk; "
                     "its output files, if any, were written)\n";
        return failed(1);
      }
      return status;
    };
    // A closed pipe (`hoshi accuracy ... | head -3`) is a failed write to standard output, said
    // at the end, not a death by SIGPIPE: the command's files (--csv, --errors) are still
    // written (they were lost, status 141; an audit). hoshi run stops on it with a checkpoint
    // (its own handler).
    if (std::strcmp(c.name, "run") != 0) std::signal(SIGPIPE, SIG_IGN);
    try {
      return written(c.fn(argc - 1, argv + 1), false);
    } catch (const hoshi::cli::HelpShown&) {
      return written(0, true);
    } catch (const std::invalid_argument& e) {
      std::cerr << "hoshi " << c.name << ": error: " << e.what() << "\n";
      return failed(2);
    } catch (const std::bad_alloc&) {  // was "error: std::bad_alloc"
      std::cerr << "hoshi " << c.name
                << ": error: out of memory (a model's particles take ~96 B each, a tree force "
                   "~220 B per particle in all: docs/perf-tree.md); use fewer particles or more "
                   "memory\n";
      return failed(1);
    } catch (const std::exception& e) {
      std::cerr << "hoshi " << c.name << ": error: " << e.what() << "\n";
      return failed(1);
    }
  }
  std::cerr << "hoshi: error: unknown command '" << argv[1] << "' (see hoshi --help)\n";
  return 2;
}
