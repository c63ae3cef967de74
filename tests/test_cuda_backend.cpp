// Backend selection (make_solver): runs everywhere, with or without CUDA or a device.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "solver/solver.hpp"
#ifdef HOSHI_HAVE_CUDA
#include "gpu/device.hpp"
#endif

namespace hoshi {
namespace {

std::string message_of_cuda_request(SolverKind kind) {
  SolverConfig c;
  c.solver = kind;
  c.backend = Backend::cuda;
  try {
    make_solver(c, 100);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(CudaBackend, ExplicitRequestWithoutCudaOrDeviceIsAClearError) {
#ifdef HOSHI_HAVE_CUDA
  if (gpu::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  for (SolverKind k : {SolverKind::direct, SolverKind::tree}) {
    const std::string m = message_of_cuda_request(k);
    EXPECT_NE(m.find("--backend cuda"), std::string::npos) << m;
    EXPECT_NE(m.find("no CUDA device"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  }
#else
  const std::string m = message_of_cuda_request(SolverKind::direct);
  EXPECT_NE(m.find("no CUDA backend"), std::string::npos) << m;
#endif
}

TEST(CudaBackend, AutoPicksCudaExactlyWhenADeviceIsPresent) {
  SolverConfig c;
  c.solver = SolverKind::direct;
  c.backend = Backend::automatic;
  bool device = false;
#ifdef HOSHI_HAVE_CUDA
  device = gpu::device_count() > 0;
#endif
  EXPECT_EQ(make_solver(c, 100)->backend(), device ? "cuda" : "cpu");
  // The double reference exists on the CPU only, so auto keeps it there.
  c.precision = Precision::float64;
  EXPECT_EQ(make_solver(c, 100)->backend(), "cpu");
}

// --solver auto switches at each backend's own measured crossover: on an H200 the direct kernel
// beat the tree walk up to N ~ 1e5, on the CPU up to a few thousand.
TEST(CudaBackend, AutoSolverSwitchesAtEachBackendsCrossover) {
  const std::size_t cpu = direct_tree_crossover_n(Backend::cpu);
  const std::size_t cuda = direct_tree_crossover_n(Backend::cuda);
  EXPECT_GE(cpu, 1024u);
  EXPECT_LE(cpu, 4096u);
  EXPECT_GE(cuda, std::size_t{1} << 16);
  EXPECT_EQ(direct_tree_crossover_n(Backend::automatic), cpu);
  SolverConfig c;  // solver auto
  c.backend = Backend::cpu;
  EXPECT_EQ(make_solver(c, cpu - 1)->name(), "direct");
  EXPECT_EQ(make_solver(c, cpu)->name(), "tree");
#ifdef HOSHI_HAVE_CUDA
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device: the CUDA half is not run";
  c.backend = Backend::cuda;
  EXPECT_EQ(make_solver(c, cuda - 1)->name(), "direct");
  EXPECT_EQ(make_solver(c, cuda)->name(), "tree");
#else
  GTEST_SKIP() << "built without CUDA: the CUDA half is not run";
#endif
}

TEST(CudaBackend, DoublePrecisionOnCudaIsRejected) {
#ifdef HOSHI_HAVE_CUDA
  SolverConfig c;
  c.solver = SolverKind::direct;
  c.backend = Backend::cuda;
  c.precision = Precision::float64;
  EXPECT_THROW(make_solver(c, 10), std::invalid_argument);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

}  // namespace
}  // namespace hoshi
