// Leapfrog: second-order convergence, no secular energy drift, time reversibility.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <vector>

#include "diagnostics/diagnostics.hpp"
#include "gpu_test_support.hpp"
#include "ic/ic.hpp"
#include "integrator/leapfrog.hpp"
#include "run/simulation.hpp"

namespace hoshi {
namespace {

SolverConfig double_direct() {
  SolverConfig c;
  c.solver = SolverKind::direct;
  c.backend = Backend::cpu;
  c.precision = Precision::float64;  // round-off far below the truncation errors measured here
  return c;
}

struct KeplerRun {
  double max_energy_error = 0;  // max over the run of |E - E0| / |E0|
  double return_distance = 0;   // |x1(t_end) - x1(0)|
};

// e = 0.5, a = 1, G M = 1: period 2 pi.
KeplerRun run_kepler(int steps_per_period, int periods) {
  ParticleSet p = make_kepler(0.5);
  const double x0 = p.x[0], y0 = p.y[0];
  auto solver = make_solver(double_direct(), p.size());
  Leapfrog lf(*solver);
  lf.initialise(p);
  const double e0 = diagnostics(p).total;
  const double dt = 2 * std::numbers::pi / steps_per_period;
  KeplerRun r;
  for (int s = 0; s < steps_per_period * periods; ++s) {
    lf.step(p, dt);
    r.max_energy_error = std::max(r.max_energy_error, std::abs((diagnostics(p).total - e0) / e0));
  }
  r.return_distance = std::hypot(p.x[0] - x0, p.y[0] - y0);
  return r;
}

TEST(Leapfrog, KeplerEnergyErrorIsSecondOrder) {
  // The leapfrog's energy error is bounded and O(dt^2): it is the difference between H and
  // the conserved modified Hamiltonian H~ = H + dt^2 H_2 + O(dt^4). Its size is set by the
  // shortest time scale, the pericentre passage t_p = r_p / v_p = 0.5 / sqrt(3) = 0.289:
  // |dE/E| <~ (dt / t_p)^2 (coefficient of H_2 is 1/12 or 1/24 of second derivatives).
  const KeplerRun a = run_kepler(1000, 5);
  const KeplerRun b = run_kepler(2000, 5);
  const double t_p = 0.5 / std::sqrt(3.0);
  const double dt = 2 * std::numbers::pi / 1000;
  EXPECT_LT(a.max_energy_error, (dt / t_p) * (dt / t_p));
  EXPECT_GT(a.max_energy_error, 0.0);
  // Halving dt divides the error by 4 (second order): allow 3.5 to 4.5 for the O(dt^4) terms.
  const double ratio = a.max_energy_error / b.max_energy_error;
  EXPECT_GT(ratio, 3.5);
  EXPECT_LT(ratio, 4.5);
}

TEST(Leapfrog, KeplerReturnsToStartAfterFivePeriods) {
  // The orbit closes; the leapfrog's phase error after n periods is O(n dt^2) and also falls
  // fourfold when dt halves. Absolute bound: the orbital phase lag n * 2 pi * (dt/t_p)^2 times
  // the apocentre speed scale (|x| = 0.75 for the body of mass 1/2).
  const KeplerRun a = run_kepler(1000, 5);
  const KeplerRun b = run_kepler(2000, 5);
  const double t_p = 0.5 / std::sqrt(3.0);
  const double dt = 2 * std::numbers::pi / 1000;
  EXPECT_LT(a.return_distance, 5 * 2 * std::numbers::pi * (dt / t_p) * (dt / t_p) * 0.75);
  const double ratio = a.return_distance / b.return_distance;
  EXPECT_GT(ratio, 3.5);
  EXPECT_LT(ratio, 4.5);
}

TEST(Leapfrog, KeplerEnergyDoesNotDrift) {
  // Symplectic: the energy error oscillates with the orbit and does not grow. Over 40 periods
  // the largest error in the last 10 periods equals that of the first 10 within 10%.
  ParticleSet p = make_kepler(0.5);
  auto solver = make_solver(double_direct(), p.size());
  Leapfrog lf(*solver);
  lf.initialise(p);
  const double e0 = diagnostics(p).total;
  const int n = 500;
  const double dt = 2 * std::numbers::pi / n;
  double first = 0, last = 0;
  for (int s = 0; s < 40 * n; ++s) {
    lf.step(p, dt);
    const double err = std::abs((diagnostics(p).total - e0) / e0);
    if (s < 10 * n) first = std::max(first, err);
    if (s >= 30 * n) last = std::max(last, err);
  }
  EXPECT_LT(last, 1.1 * first);
  EXPECT_GT(last, 0.9 * first);
}

TEST(Leapfrog, ForwardThenBackwardReturnsToStart) {
  // KDK is time-symmetric: n steps of +dt then n steps of -dt restore the state up to
  // round-off, ~ steps * 2^-52 relative.
  ParticleSet p = make_kepler(0.5);
  const ParticleSet start = p;
  auto solver = make_solver(double_direct(), p.size());
  Leapfrog lf(*solver);
  lf.initialise(p);
  const int n = 2000;
  for (int s = 0; s < n; ++s) lf.step(p, 0.01);
  for (int s = 0; s < n; ++s) lf.step(p, -0.01);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(p.x[i], start.x[i], 2 * n * 0x1.0p-52 * 10);
    EXPECT_NEAR(p.y[i], start.y[i], 2 * n * 0x1.0p-52 * 10);
    EXPECT_NEAR(p.vx[i], start.vx[i], 2 * n * 0x1.0p-52 * 10);
    EXPECT_NEAR(p.vy[i], start.vy[i], 2 * n * 0x1.0p-52 * 10);
  }
}

// The run loop on every backend: the host leapfrog over the CPU solver, and on CUDA the
// device-resident stepper (kick, drift and forces on the device); skipped with the reason when
// CUDA is not built or no device is present.
class LeapfrogOn : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { HOSHI_SKIP_IF_UNAVAILABLE(GetParam()); }
};

TEST_P(LeapfrogOn, PlummerEnergyErrorAfterOneTimeUnit) {
  // Plummer N = 2048, eps = 0.05, float32 direct forces, dt = 1/128. The shortest dynamical
  // time scale is set by the largest tidal frequency: the core, omega^2 = G M / a^3 with
  // a = 3 pi / 16 (omega = 2.2), plus a softened close pair, omega^2 = G m / eps^3 (m = 1/2048:
  // omega = 2.0). The leapfrog's energy error is then |dE/E| <~ (omega dt)^2 / 8 (the
  // modified-Hamiltonian term), plus float round-off of ~1e-6.
  ParticleSet p = make_plummer(2048, 3);
  RunConfig cfg;
  cfg.t_end = 1.0;
  cfg.dt = 1.0 / 128;
  cfg.solver.solver = SolverKind::direct;
  cfg.solver.backend = GetParam();
  cfg.solver.eps = 0.05;
  const RunResult r = run_simulation(p, cfg, nullptr);
  const double a = 3 * std::numbers::pi / 16;
  const double omega2 = 1.0 / (a * a * a) + (1.0 / 2048) / std::pow(0.05, 3);
  const double bound = omega2 * cfg.dt * cfg.dt / 8 + 1e-6;
  EXPECT_LT(std::abs(r.rel_energy_error), bound);
  EXPECT_EQ(r.steps, 128u);
  EXPECT_NEAR(r.time, 1.0, 1e-15);
  EXPECT_EQ(r.backend_name, to_string(GetParam()));
}

// An observer sees the particles of the step it asks in, on the device too, where they are
// downloaded only when asked for: one that reads in a few steps sees exactly what one that
// reads in every step sees there (the runs are deterministic). The run loop asked the observer
// beforehand whether it would read; a checkpoint decided later (wall clock, a signal) could
// then be written from an earlier step's copy.
class ReadingObserver final : public RunObserver {
 public:
  explicit ReadingObserver(std::vector<std::size_t> steps) : steps_(std::move(steps)) {}
  bool after_step(StepState& state, const RunProgress& s) override {
    if (steps_.empty() || std::find(steps_.begin(), steps_.end(), s.step) != steps_.end()) {
      const ParticleSet& p = state.particles();
      seen[s.step] = {p.x[5], p.vy[17], p.az[29], p.pot[31]};
    }
    return true;
  }
  std::map<std::size_t, std::array<double, 4>> seen;

 private:
  std::vector<std::size_t> steps_;  // empty: every step
};

TEST_P(LeapfrogOn, ObserverReadsTheStateOfTheStepItAsksIn) {
  RunConfig cfg;
  cfg.t_end = 0.125;
  cfg.dt = 1.0 / 128;
  cfg.output_every = 1;  // no energy output between (those download the state as well)
  cfg.solver.solver = SolverKind::direct;
  cfg.solver.backend = GetParam();
  cfg.solver.eps = 0.05;
  ReadingObserver some({3, 7, 11}), every({});
  ParticleSet p = make_plummer(256, 8), q = p;
  cfg.observer = &some;
  run_simulation(p, cfg, nullptr);
  cfg.observer = &every;
  run_simulation(q, cfg, nullptr);
  ASSERT_EQ(some.seen.size(), 3u);
  ASSERT_EQ(every.seen.size(), 17u);  // the start and 16 steps
  for (const auto& [step, values] : some.seen) {
    EXPECT_EQ(values, every.seen.at(step)) << "step " << step;
    EXPECT_NE(values, every.seen.at(step - 1)) << "step " << step;
  }
}

// A state that is no longer finite stops the run before a snapshot or checkpoint is written
// from it (an observer reads it) and before the final state is handed back: the solvers check
// their forces, device-resident stepping did not, and a nan checkpoint replaced the last good
// one. The observer corrupts the host state as a failed step would.
class CorruptingObserver final : public RunObserver {
 public:
  CorruptingObserver(ParticleSet& p, bool read) : p_(p), read_(read) {}
  bool after_step(StepState& state, const RunProgress& s) override {
    if (s.step != 3) return true;
    p_.vx[7] = std::nan("");
    if (read_) state.particles();  // a snapshot's read
    return false;                  // interrupted: the final state is checked too
  }

 private:
  ParticleSet& p_;
  bool read_;
};

TEST(Leapfrog, ANonFiniteStateStopsTheRunBeforeAnythingIsWritten) {
  for (const bool read : {true, false}) {
    RunConfig cfg;
    cfg.t_end = 0.125;
    cfg.dt = 1.0 / 128;
    cfg.solver.solver = SolverKind::direct;
    cfg.solver.backend = Backend::cpu;
    cfg.solver.eps = 0.05;
    ParticleSet p = make_plummer(64, 9);
    CorruptingObserver corrupt(p, read);
    cfg.observer = &corrupt;
    try {
      run_simulation(p, cfg, nullptr);
      ADD_FAILURE() << "a nan state was accepted, read " << read;
    } catch (const std::runtime_error& e) {
      const std::string expected =
          "the state at t = 0.0234375 (step 3) is not finite: particle id " +
          std::to_string(p.id[7]);
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LeapfrogOn, ::testing::Values(Backend::cpu, Backend::cuda),
                         testing_support::backend_test_name);

// dt = eta sqrt(eps / max|a|) with the largest |a| of the set: a Plummer sphere, whose |a| spans
// decades (the equal-mass Kepler pair, where both feel one |a|, let the smallest pass).
TEST(Leapfrog, AdaptiveStepFollowsFormula) {
  ParticleSet p = make_plummer(256, 3);
  auto solver = make_solver(double_direct(), p.size());
  solver->compute(p);
  double amax = 0, amin = HUGE_VAL;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double a = std::hypot(p.ax[i], p.ay[i], p.az[i]);
    amax = std::max(amax, a), amin = std::min(amin, a);
  }
  ASSERT_GT(amax, 2 * amin);
  EXPECT_DOUBLE_EQ(adaptive_dt(p, 0.1, 0.01), 0.1 * std::sqrt(0.01 / amax));
  EXPECT_THROW(adaptive_dt(p, 0.1, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace hoshi
