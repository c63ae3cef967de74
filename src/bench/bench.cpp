#include "bench/bench.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/timer.hpp"
#include "direct/simd.hpp"
#include "io/atomic_file.hpp"

namespace hoshi {

double BenchRow::interactions_per_second() const {
  return seconds > 0 ? double(pp + pc) / seconds : 0.0;
}

double BenchRow::gflops() const {
  return interactions_per_second() * kFlopsPerInteraction * 1e-9;
}

BenchRow time_force(GravitySolver& solver, ParticleSet& p, int repeat) {
  if (repeat < 1) throw std::invalid_argument("invalid --repeat " + std::to_string(repeat));
  solver.compute(p);  // warm-up: page faults, thread start-up, caches
  std::vector<std::pair<double, ForceStats>> runs;
  for (int r = 0; r < repeat; ++r) {
    Stopwatch sw;
    ForceStats st = solver.compute(p);
    runs.emplace_back(sw.seconds(), std::move(st));
  }
  std::sort(runs.begin(), runs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // Median; for an even count the lower middle, so that the row is one real run.
  const auto& mid = runs[(runs.size() - 1) / 2];
  BenchRow row;
  row.solver = solver.name();
  row.backend = solver.backend();
  row.n = p.size();
  row.threads = omp_get_max_threads();
  row.seconds = mid.first;
  row.pp = mid.second.pp;
  row.pc = mid.second.pc;
  row.m2l = mid.second.m2l;
  row.phases = mid.second.seconds;
  return row;
}

std::size_t physical_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const std::size_t procs = static_cast<std::size_t>(std::max(1, omp_get_num_procs()));
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return procs;
  std::set<std::pair<int, int>> cores;  // (package, core) of each CPU this process may use
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &mask)) continue;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    int package = -1, core = -1;
    std::ifstream(dir + "physical_package_id") >> package;
    std::ifstream(dir + "core_id") >> core;
    if (package < 0 || core < 0) return procs;  // no topology: every CPU a core
    cores.emplace(package, core);
  }
  return cores.empty() ? procs : cores.size();
}

double measure_peak_gflops(int threads, double seconds) {
  using simd::VecF;
  constexpr int kChains = 12;  // > FMA latency (4) x FMA units (2): no dependency stalls
  constexpr long kBlock = 1 << 14;
  std::vector<double> rates(static_cast<std::size_t>(std::max(1, threads)), 0.0);
#pragma omp parallel num_threads(threads)
  {
    VecF a[kChains];
    for (int i = 0; i < kChains; ++i) a[i] = VecF(1.0f + 1e-3f * float(i));
    const VecF b(0.9999f), c(1e-4f);  // a -> 1: no overflow, no denormals
    // Each thread's best rate over short slices (6.3e6 flops: 26-53 us at 120-240 GFLOP/s per
    // core): a slice in which the thread was
    // preempted by other processes does not count, so the figure is the hardware's.
    double best = 0;
    Stopwatch total_time;
#pragma omp barrier
    while (total_time.seconds() < seconds) {
      Stopwatch sw;
      for (long k = 0; k < kBlock; ++k)
        for (int i = 0; i < kChains; ++i) a[i] = fma(a[i], b, c);
      // The chains' values are observed here, so the compiler must compute them.
      __asm__ volatile("" : : "r"(a) : "memory");
      best = std::max(best, double(kBlock) * kChains * simd::kWidth * 2 / sw.seconds());
    }
    rates[static_cast<std::size_t>(omp_get_thread_num())] = best;
  }
  // Each thread's best slice is one core's rate, also where threads share a core (more threads
  // than cores, or two hyperthreads of one core: each found slices in which it ran alone, and
  // 8 threads on 2 cores summed 4 cores' peak): the peak is that of the cores the threads have.
  std::sort(rates.begin(), rates.end(), std::greater<>());
  rates.resize(std::min(rates.size(), physical_cores()));
  double total = 0;
  for (double r : rates) total += r;
  return total * 1e-9;
}

void write_bench_csv(const std::string& path, const std::vector<BenchRow>& rows,
                     double peak_gflops) {
  io::write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << "solver,backend,n,threads,seconds,interactions_per_second,gflops,peak_fraction,"
           "seconds_keys,seconds_sort,seconds_permute,seconds_build,seconds_moments,seconds_walk,"
           "pp_per_particle,pc_per_particle,m2l_per_particle,precision\n";
    out << std::setprecision(6);
    for (const BenchRow& r : rows) {
      auto phase = [&](const char* key) {
        const auto it = r.phases.find(key);
        return it == r.phases.end() ? 0.0 : it->second;
      };
      const double n = double(r.n);
      out << r.solver << ',' << r.backend << ',' << r.n << ',' << r.threads << ',' << r.seconds
          << ',' << r.interactions_per_second() << ',' << r.gflops() << ','
          << (peak_gflops > 0 && r.backend == "cpu" && r.precision == "float32"
                  ? r.gflops() / peak_gflops
                  : 0.0)
          << ',' << phase("keys") << ',' << phase("sort") << ',' << phase("permute") << ','
          << phase("build") << ',' << phase("moments") << ',' << phase("walk") << ','
          << double(r.pp) / n << ',' << double(r.pc) / n << ',' << double(r.m2l) / n << ','
          << r.precision << '\n';
    }
    out.close();
    if (!out) throw std::runtime_error("error writing " + tmp);
  });
}

std::vector<bool> sets_kept_until_their_row(const std::vector<std::size_t>& n,
                                            double bytes_per_particle, double budget_bytes) {
  std::vector<bool> kept(n.size(), true);
  if (!(budget_bytes > 0)) return kept;
  double held = 0;
  for (std::size_t k = 0; k < n.size(); ++k) {
    const double bytes = bytes_per_particle * static_cast<double>(n[k]);
    kept[k] = held + bytes <= budget_bytes;
    if (kept[k]) held += bytes;
  }
  return kept;
}

}  // namespace hoshi
