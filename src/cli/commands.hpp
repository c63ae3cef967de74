// The hoshi subcommands. Each takes the arguments after its name (argv[0] is the subcommand)
// and returns the process exit status. Bad input throws std::invalid_argument (exit 2).
#pragma once

namespace hoshi::cli {

int cmd_run(int argc, char** argv);
int cmd_forces(int argc, char** argv);
int cmd_ic(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_analyze(int argc, char** argv);
int cmd_accuracy(int argc, char** argv);
int cmd_render(int argc, char** argv);

}  // namespace hoshi::cli
