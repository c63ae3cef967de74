// Device-resident stepping (gpu::DeviceStepper) against the CUDA solvers and a host leapfrog.
// Skipped with the reason when CUDA is not built or no device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "gpu_test_support.hpp"
#include "ic/ic.hpp"
#include "integrator/leapfrog.hpp"
#include "run/simulation.hpp"
#include "solver/solver.hpp"
#include "tree/octree.hpp"
#ifdef HOSHI_HAVE_CUDA
#include "gpu/device_stepper.hpp"
#endif

namespace hoshi {
namespace {

#ifdef HOSHI_HAVE_CUDA

// The direct solver, and the tree with barnes94 and with the relative criterion (the CUDA
// default: its first evaluation bootstraps |a_old| with a barnes94 pass, later ones take
// alpha |a_old| from the device's previous accelerations, relative_alpha_kernel).
struct StepperCase {
  SolverKind kind;
  Criterion criterion = Criterion::barnes94;
  WalkKind walk = WalkKind::particle;  // group: the tree's group mode (a warp per group)
};

SolverConfig config(StepperCase k) {
  SolverConfig c;
  c.solver = k.kind;
  c.backend = Backend::cuda;
  c.eps = 0.02;
  c.tree.walk = k.walk;
  c.tree.walk_auto = false;
  c.tree.criterion = k.criterion;
  c.tree.alpha = default_alpha(Backend::cuda, k.walk);
  return c;
}

// The stepper's downloaded forces d equal the solver's q bit for bit, particle by particle in
// the same order (ids too).
void expect_same_forces(const ParticleSet& d, const ParticleSet& q) {
  ASSERT_EQ(d.size(), q.size());
  for (std::size_t i = 0; i < q.size(); ++i) {
    ASSERT_EQ(d.ax[i], q.ax[i]) << i;
    ASSERT_EQ(d.ay[i], q.ay[i]) << i;
    ASSERT_EQ(d.az[i], q.az[i]) << i;
    ASSERT_EQ(d.pot[i], q.pot[i]) << i;
    ASSERT_EQ(d.id[i], q.id[i]) << i;
  }
}

class Stepper : public ::testing::TestWithParam<StepperCase> {
 protected:
  void SetUp() override { HOSHI_SKIP_IF_UNAVAILABLE(Backend::cuda); }
};

TEST_P(Stepper, ForcesEqualTheCudaSolver) {
  // Direct: the centre is the same median position in both (rank n/2 of each coordinate, an
  // exact selection), so the float4 inputs and the kernel are the same: bitwise equal. Tree: device
  // keys and the stable CUB sort reproduce the host build's order, so the tree and the walk are the
  // same: equal too. Relative criterion: alpha |a_old| is formed in double from the same float
  // accelerations on both sides and rounded to float; a different FMA contraction there changes the
  // float only within 2^-29 of a rounding boundary (~1e-5 chance over 5000 particles).
  const std::size_t n = 5000;
  ParticleSet p = make_plummer(n, 41);
  gpu::DeviceStepper s(config(GetParam()), p);
  const ForceStats ss = s.compute_forces();
  ParticleSet d;
  s.download(d);
  ParticleSet q = p;
  const ForceStats sq = make_solver(config(GetParam()), n)->compute(q);
  EXPECT_EQ(ss.pp, sq.pp);
  EXPECT_EQ(ss.pc, sq.pc);
  expect_same_forces(d, q);
}

TEST_P(Stepper, LeapfrogMatchesTheHostLoop) {
  // The same kick-drift-kick on the host with the CUDA solver: the same float accelerations
  // from the same positions, the same double updates (the device may contract v + a dt into
  // an FMA: 1 ulp per update). Over 16 steps of dt = 1/128 in a Plummer sphere the
  // trajectories stay within 1e-10 of each other (round-off amplified by at most e^(16 dt /
  // t_dyn) ~ 1.2 with t_dyn ~ 1, and by a few opening decisions of the tree: those flip only
  // for d^2 within an ulp of rcrit2, and a flip changes a by the cell's tree error ~1e-4 |a|
  // for at most one step, 1e-4 dt^2 ~ 6e-9 in x; so the tree bound is 1e-8).
  const std::size_t n = 2000;
  const double dt = 1.0 / 128;
  ParticleSet p = make_plummer(n, 42);
  gpu::DeviceStepper s(config(GetParam()), p);
  auto solver = make_solver(config(GetParam()), n);
  s.compute_forces();
  solver->compute(p);
  for (int step = 0; step < 16; ++step) {
    s.kick(dt / 2);
    s.drift(dt);
    s.compute_forces();
    s.kick(dt / 2);
    for (std::size_t i = 0; i < n; ++i) {
      p.vx[i] += p.ax[i] * dt / 2;
      p.vy[i] += p.ay[i] * dt / 2;
      p.vz[i] += p.az[i] * dt / 2;
      p.x[i] += p.vx[i] * dt;
      p.y[i] += p.vy[i] * dt;
      p.z[i] += p.vz[i] * dt;
    }
    solver->compute(p);
    for (std::size_t i = 0; i < n; ++i) {
      p.vx[i] += p.ax[i] * dt / 2;
      p.vy[i] += p.ay[i] * dt / 2;
      p.vz[i] += p.az[i] * dt / 2;
    }
  }
  ParticleSet d;
  s.download(d);
  const double tol = GetParam().kind == SolverKind::direct ? 1e-10 : 1e-8;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(d.x[i], p.x[i], tol) << i;
    ASSERT_NEAR(d.vz[i], p.vz[i], tol) << i;
  }
  EXPECT_GT(s.integrate_seconds().at("kick"), 0.0);
}

TEST_P(Stepper, ContinuesBitForBitFromItsDownloadedState) {
  // A continued run (a checkpoint holds x, v, a and pot of a step) must go on exactly as the
  // uninterrupted one: the second stepper takes a (and, for the relative criterion, |a_old|)
  // from the downloaded state instead of computing them again.
  const std::size_t n = 1500;
  const double dt = 1.0 / 128;
  ParticleSet p = make_plummer(n, 45);
  gpu::DeviceStepper a(config(GetParam()), p);
  a.compute_forces();
  auto steps = [&](gpu::DeviceStepper& s, int k) {
    for (int i = 0; i < k; ++i) {
      s.kick(dt / 2);
      s.drift(dt);
      s.compute_forces();
      s.kick(dt / 2);
    }
  };
  steps(a, 4);
  ParticleSet mid;
  a.download(mid);
  gpu::DeviceStepper b(config(GetParam()), mid);
  steps(a, 4);
  steps(b, 4);
  ParticleSet da, db;
  a.download(da);
  b.download(db);
  EXPECT_EQ(da.x, db.x);
  EXPECT_EQ(da.vz, db.vz);
  EXPECT_EQ(da.ax, db.ax);
  EXPECT_EQ(da.pot, db.pot);
}

TEST_P(Stepper, EnergiesAreTheHostSums) {
  // CUB's double sums against the host's: the same terms summed in another order,
  // |difference| <= N 2^-52 sum |terms|.
  const std::size_t n = 3000;
  ParticleSet p = make_plummer(n, 43);
  gpu::DeviceStepper s(config(GetParam()), p);
  s.compute_forces();
  const gpu::DeviceEnergies e = s.energies();
  ParticleSet d;
  s.download(d);
  double k = 0, w = 0, sk = 0, sw = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double ki = 0.5 * d.m[i] * (d.vx[i] * d.vx[i] + d.vy[i] * d.vy[i] + d.vz[i] * d.vz[i]);
    const double wi = 0.5 * d.m[i] * d.pot[i];
    k += ki;
    w += wi;
    sk += std::abs(ki);
    sw += std::abs(wi);
  }
  EXPECT_NEAR(e.kinetic, k, n * 0x1.0p-52 * sk);
  EXPECT_NEAR(e.potential, w, n * 0x1.0p-52 * sw);
  // Henon units: the Plummer model has K = 1/4 and W = -1/2 up to sampling noise ~1/sqrt(N)
  // and the softening (eps = 0.02 shallows W by ~ eps / a ~ 3%).
  EXPECT_NEAR(e.kinetic, 0.25, 5 / std::sqrt(double(n)) * 0.25);
  EXPECT_NEAR(e.potential, -0.5, 0.05 + 5 / std::sqrt(double(n)) * 0.5);
  // The adaptive step's max |a|^2: the squares of the float components are exact in double and
  // summed in the host's order, and max is exact, so the device reduction is the host's bit for
  // bit.
  const double a2 = s.max_acceleration2();
  EXPECT_EQ(a2, max_acceleration2(d));
  EXPECT_GT(a2, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Solvers, Stepper,
                         ::testing::Values(StepperCase{SolverKind::direct},
                                           StepperCase{SolverKind::tree, Criterion::barnes94},
                                           StepperCase{SolverKind::tree, Criterion::relative},
                                           StepperCase{SolverKind::tree, Criterion::relative,
                                                       WalkKind::group}),
                         [](const ::testing::TestParamInfo<StepperCase>& i) {
                           return i.param.kind == SolverKind::direct
                                      ? std::string("direct")
                                      : "tree_" + to_string(i.param.criterion) +
                                            (i.param.walk == WalkKind::group ? "_group" : "");
                         });

// The run loop on CUDA (device-resident) and on the CPU float solver from the same 1024-particle
// Plummer sphere, to t = 0.25 with outputs every 0.125; cfg sets the step (dt or eta).
struct CudaAndCpuRuns {
  ParticleSet pg, pc;
  RunResult rg, rc;
  CudaAndCpuRuns(RunConfig cfg, const StepperCase& k, std::uint64_t seed) {
    cfg.t_end = 0.25;
    cfg.output_every = 0.125;
    cfg.quiet = true;
    cfg.solver = config(k);
    pg = make_plummer(1024, seed);
    pc = pg;
    rg = run_simulation(pg, cfg, nullptr);
    cfg.solver.backend = Backend::cpu;
    rc = run_simulation(pc, cfg, nullptr);
  }
};

TEST_P(Stepper, RunLoopStepsOnTheDevice) {
  // run_simulation with --backend cuda (device-resident stepping) against the same run with
  // the CPU float solver: two float kernels differing by round-off (~1e-6 relative in a),
  // leapfrog over 32 steps of 1/128 in a Plummer sphere (t_dyn ~ 1): the energies agree far
  // better than the integrator's own error, to 1e-5 relative; the tree adds its opening flips.
  // The run loop's CPU reference is make_solver's: it has no mirror of the group mode, which
  // ForcesEqualTheCudaSolver, LeapfrogMatchesTheHostLoop and test_gpu_tree check instead.
  if (GetParam().walk == WalkKind::group)
    GTEST_SKIP() << "no CPU run loop with the group mode's interaction sets";
  RunConfig cfg;
  cfg.dt = 1.0 / 128;
  const CudaAndCpuRuns r(cfg, GetParam(), 44);
  const RunResult &rg = r.rg, &rc = r.rc;
  const ParticleSet &pg = r.pg, &pc = r.pc;
  EXPECT_EQ(rg.backend_name, "cuda");
  EXPECT_EQ(rg.steps, 32u);
  EXPECT_NEAR(rg.final.total, rc.final.total, 1e-5 * std::abs(rc.final.total));
  EXPECT_NEAR(rg.final.kinetic, rc.final.kinetic, 1e-5 * rc.final.kinetic);
  // The particle set holds the final state (synchronised from the device).
  for (std::size_t i = 0; i < pg.size(); i += 97) EXPECT_NEAR(pg.x[i], pc.x[i], 1e-5);
}

TEST_P(Stepper, AdaptiveRunLoopStepsOnTheDevice) {
  // run_simulation with --eta (the global adaptive step, max|a| reduced on the device) against
  // the same run on the CPU float solver, as RunLoopStepsOnTheDevice: forces ~1e-6 apart, so the
  // steps (dt = eta sqrt(eps / max|a|)) ~1e-6 apart too; the step counts may differ by one at
  // an output time or t_end, the energies by far less than the integrator's error.
  if (GetParam().walk == WalkKind::group)
    GTEST_SKIP() << "no CPU run loop with the group mode's interaction sets";
  RunConfig cfg;
  cfg.eta = 0.05;  // dt ~ 0.05 sqrt(0.02 / max|a|) ~ 5e-3: ~50 steps
  const CudaAndCpuRuns r(cfg, GetParam(), 45);
  const RunResult &rg = r.rg, &rc = r.rc;
  const ParticleSet &pg = r.pg, &pc = r.pc;
  EXPECT_TRUE(rg.device_resident);
  EXPECT_FALSE(rc.device_resident);
  EXPECT_GT(rc.steps, 20u);
  EXPECT_NEAR(static_cast<double>(rg.steps), static_cast<double>(rc.steps), 1.0);
  EXPECT_NEAR(rg.time, 0.25, 1e-12);  // t_end
  EXPECT_NEAR(rg.final.total, rc.final.total, 1e-5 * std::abs(rc.final.total));
  for (std::size_t i = 0; i < pg.size(); i += 97) EXPECT_NEAR(pg.x[i], pc.x[i], 1e-5);
}

// Zero softening: the tree stepper downloads the sorted order as well and checks every step for
// particles at one position (they share a Morton key), naming them by id; without such a pair
// its forces are the CUDA tree solver's. The direct stepper checks once, at construction.
TEST(StepperZeroSoftening, CoincidentParticlesAreNamedByIdAndOtherwiseForcesAreTheSolvers) {
  HOSHI_SKIP_IF_UNAVAILABLE(Backend::cuda);
  const std::size_t n = 3000;
  SolverConfig c = config({SolverKind::tree});
  c.eps = 0;
  ParticleSet clean = make_plummer(n, 43);
  {
    gpu::DeviceStepper s(c, clean);
    s.compute_forces();
    ParticleSet d;
    s.download(d);
    ParticleSet q = clean;
    make_solver(c, n)->compute(q);
    expect_same_forces(d, q);
  }
  ParticleSet p = clean;
  p.x[2500] = p.x[17];
  p.y[2500] = p.y[17];
  p.z[2500] = p.z[17];
  const std::string named = "particles with ids " + std::to_string(p.id[17]) + " and " +
                            std::to_string(p.id[2500]) + " are at the same position";
  gpu::DeviceStepper s(c, p);
  try {
    s.compute_forces();
    ADD_FAILURE() << "the tree stepper accepted a coincident pair at zero softening";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
  c.solver = SolverKind::direct;
  EXPECT_THROW(gpu::DeviceStepper(c, p), std::invalid_argument);
}

// A cluster of size 1e-9 in a Plummer sphere: its key cell holds more than a leaf's worth, and
// the host reorders that cell's particles by their keys inside it (octree.hpp, DeepCells); the
// stepper then sends the new order of the sorted particles back up (device_stepper.cu). Its
// forces equal the CUDA solver's, whose host build does the same, at zero softening (where the
// order is downloaded anyway) and with softening (where it is downloaded for this), for both
// walks, in the first evaluation and the second (the buffers kept).
TEST(StepperCrowdedCells, ForcesEqualTheCudaSolverBelowTheKeys) {
  HOSHI_SKIP_IF_UNAVAILABLE(Backend::cuda);
  ParticleSet p = make_plummer(3000, 44);
  const ParticleSet cluster = make_plummer(1500, 45);
  for (std::size_t i = 0; i < cluster.size(); ++i)
    p.push_back(0.05 + 1e-9 * cluster.x[i], 0.02 + 1e-9 * cluster.y[i], -0.03 + 1e-9 * cluster.z[i],
                0, 0, 0, 1e-3 * cluster.m[i], 3000 + i);
  const std::size_t n = p.size();
  {
    Octree t;
    PhaseTimes times;
    build_tree(p, {config({SolverKind::tree}).tree.n_leaf, Criterion::barnes94, 0.5}, t, times);
    ASSERT_FALSE(t.deep.empty());
  }
  for (WalkKind walk : {WalkKind::particle, WalkKind::group})
    for (double eps : {0.0, 1e-11}) {
      SCOPED_TRACE(to_string(walk) + " eps " + std::to_string(eps));
      SolverConfig c = config({SolverKind::tree, Criterion::barnes94, walk});
      c.eps = eps;
      gpu::DeviceStepper s(c, p);
      ParticleSet q = p;
      const auto solver = make_solver(c, n);
      for (int pass = 0; pass < 2; ++pass) {
        const ForceStats ss = s.compute_forces();
        ParticleSet d;
        s.download(d);
        const ForceStats sq = solver->compute(q);
        EXPECT_EQ(ss.pp, sq.pp);
        EXPECT_EQ(ss.pc, sq.pc);
        expect_same_forces(d, q);
      }
    }
}

// The device keeps the run's units: a set far from unit size or mass (which make_solver's
// solvers rescale) is refused with the exponents, not stepped with flushed float terms.
TEST(StepperScale, SystemFarFromUnitSizeIsRefused) {
  HOSHI_SKIP_IF_UNAVAILABLE(Backend::cuda);
  ParticleSet p = make_plummer(1000, 45);
  for (std::size_t i = 0; i < p.size(); ++i) p.x[i] = std::ldexp(p.x[i], 40);
  try {
    gpu::DeviceStepper s(config({SolverKind::tree}), p);
    ADD_FAILURE() << "accepted a set of extent ~2^44";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device-resident steps need"), std::string::npos)
        << e.what();
  }
}

TEST(StepperNoDevice, ConstructionWithoutADeviceIsAClearError) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  ParticleSet p = make_plummer(10, 1);
  EXPECT_THROW(gpu::DeviceStepper(config({SolverKind::direct}), p), std::invalid_argument);
}

#else

TEST(Stepper, NotBuilt) {
  GTEST_SKIP() << "hoshi built without CUDA (configure with -DHOSHI_CUDA=ON)";
}

#endif

}  // namespace
}  // namespace hoshi
