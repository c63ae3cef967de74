// Timing of one force evaluation, for `hoshi bench` (src/cli/cmd_bench.cpp).
//
// Rates: an interaction is one particle-particle (pp) or particle-cell (pc) term; GFLOP/s
// counts 20 floating-point operations per interaction, the customary direct-summation
// figure (Nyland, Harris & Prins, GPU Gems 3 ch. 31: 3 differences, 6 for r^2 + eps^2, 1/sqrt
// counted as one, 3 for m/r^3, 6 for the acceleration and 1 for the potential).
// Peak: float32 FLOP/s of the threads used, cores x FMA units x SIMD width x 2 x clock; e.g.
// 2 cores with two 512-bit FMA units at 3.75 GHz: 2 x 2 x 16 x 2 x 3.75 GHz = 480 GFLOP/s (one
// unit, as AMD Zen 4 has: half).
// measure_peak_gflops() measures that product with a dense FMA loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/particle_set.hpp"
#include "solver/solver.hpp"

namespace hoshi {

inline constexpr double kFlopsPerInteraction = 20.0;

struct BenchRow {
  std::string solver, backend;
  std::string precision = "float32";  // or "float64" (the double direct sum)
  std::size_t n = 0;
  int threads = 1;
  double seconds = 0;  // median over the repeats of GravitySolver::compute
  std::uint64_t pp = 0, pc = 0;
  std::uint64_t m2l = 0;  // cells through local expansions (tree group walk)
  PhaseTimes phases;      // ForceStats::seconds of the run whose time is the median
  double interactions_per_second() const;
  double gflops() const;
};

// Times solver.compute(p): one warm-up call, then `repeat` timed calls; the median wall time.
// repeat >= 1.
BenchRow time_force(GravitySolver& solver, ParticleSet& p, int repeat);

// float32 GFLOP/s of a dense, latency-free FMA loop on simd::VecF (2 flops per lane per FMA)
// run on `threads` OpenMP threads for about `seconds`: the sum of the threads' best rates, over
// at most physical_cores() of them (threads beyond the cores add no FMA units).
double measure_peak_gflops(int threads, double seconds = 0.2);

// The physical cores this process may run on (its CPU affinity; hyperthreads of one core count
// once), from Linux's /sys topology; omp_get_num_procs() where that is missing.
std::size_t physical_cores();

// hoshi bench makes every set of its -n list before the first row (an error at a later N is one
// line, not a table cut short); which of them stay in memory until their row: in -n order,
// those whose particles fit with the ones kept before them within `budget_bytes` at
// `bytes_per_particle`; the others are made again at their row (-n 1e7,2e7,4e7 held all 7e7
// particles at once, 6.7 GB, beside the largest force's tree). budget_bytes 0: all of them.
std::vector<bool> sets_kept_until_their_row(const std::vector<std::size_t>& n,
                                            double bytes_per_particle, double budget_bytes);

// CSV, one row per BenchRow, header
// solver,backend,n,threads,seconds,interactions_per_second,gflops,peak_fraction,
// seconds_keys,seconds_sort,seconds_permute,seconds_build,seconds_moments,seconds_walk,
// pp_per_particle,pc_per_particle,m2l_per_particle,precision (the tree build's phases,
// octree.hpp: permute includes key_deep_cells; peak_fraction: of this CPU's float32 peak, 0 for
// a CUDA row and a float64 one; precision: float32 or float64). Written
// through io::write_atomically (a temporary file next to
// PATH, renamed into place), so a failure never leaves a half-written file; throws
// std::runtime_error if PATH cannot be written.
void write_bench_csv(const std::string& path, const std::vector<BenchRow>& rows,
                     double peak_gflops);

}  // namespace hoshi
