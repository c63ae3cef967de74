// Timing (best of R evaluations), phases, interactions and memory of a tree force evaluation
// on a Plummer sphere: the numbers of docs/perf-tree.md. Build: make -C build tree_perf
//   OMP_NUM_THREADS=2 build/tree_perf N [R=3] [theta=0.5] [n_group=128] [criterion] [alpha]
// (theta 0.5 is TreeParams' default; the CLI's --theta auto is 0.65 for this CPU group walk)
// (relative: the first evaluation has no |a_old| and uses barnes94; use R >= 2)
// Peak RSS is VmHWM of the process (Linux); "tree solver" is the peak minus the resident size
// after the particles were made.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#include "ic/ic.hpp"
#include "tree/tree_solver.hpp"
using namespace hoshi;
static long vm(const char* key) {  // kB
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return atol(line.c_str() + strlen(key));
  return 0;
}
int main(int argc, char** argv) {
  if (argc < 2 || atol(argv[1]) < 1) {
    fprintf(stderr,
            "usage: tree_perf N [R=3] [theta=0.5] [n_group=128] [criterion] [alpha] (N >= 1)\n");
    return 2;
  }
  size_t n = atol(argv[1]);
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  ParticleSet p = make_plummer(n, 1);
  long rss0 = vm("VmRSS:");
  SolverConfig c;
  c.solver = SolverKind::tree;
  c.backend = Backend::cpu;
  if (argc > 3) c.tree.theta = atof(argv[3]);
  if (argc > 4) c.tree.n_group = atoi(argv[4]);
  if (argc > 5) c.tree.criterion = parse_criterion(argv[5]);
  if (argc > 6) c.tree.alpha = atof(argv[6]);
  TreeSolver s(c);
  ForceStats best;
  best.total_seconds = 1e9;
  double cpu = 1e9;  // process CPU seconds of the best evaluation (all threads)
  for (int r = 0; r < reps; ++r) {
    const std::clock_t c0 = std::clock();
    ForceStats st = s.compute(p);
    cpu = std::min(cpu, double(std::clock() - c0) / CLOCKS_PER_SEC);
    if (st.total_seconds < best.total_seconds) best = st;
  }
  long hwm = vm("VmHWM:");
  printf("N %zu threads %d theta %.2f n_group %d: total %.4f s, CPU %.4f s (/threads %.4f) |", n,
         omp_get_max_threads(), c.tree.theta, c.tree.n_group, best.total_seconds, cpu,
         cpu / omp_get_max_threads());
  for (auto& [k, v] : best.seconds) printf(" %s %.4f", k.c_str(), v);
  printf(
      " | pp %.0f pc %.0f per particle | particles %.1f B/p, peak RSS %.1f B/p (of which tree "
      "solver %.1f B/p), tree arrays %.1f B/p, nodes %zu (%.1f B/p)\n",
      double(best.pp) / n, double(best.pc) / n, rss0 * 1024.0 / n, hwm * 1024.0 / n,
      (hwm - rss0) * 1024.0 / n, double(s.tree().bytes()) / n, s.tree().nodes.size(),
      s.tree().nodes.size() * 128.0 / n);
}
