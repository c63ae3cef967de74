// CudaDirectSolver: GravitySolver over the tiled direct kernel (gpu/direct.cu).
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bounds.hpp"
#include "core/checks.hpp"
#include "core/packed_forces.hpp"
#include "gpu/cuda_solvers.hpp"
#include "gpu/device.hpp"
#include "gpu/direct.cuh"

namespace hoshi::gpu {

void require_device(const char* what) {
  if (device_count() > 0) return;
  std::string report = device_report(), why;  // several lines: make it one
  while (!report.empty() && report.back() == '\n') report.pop_back();
  for (char ch : report) why += ch == '\n' ? std::string("; ") : std::string(1, ch);
  throw std::invalid_argument(std::string(what) + ": no CUDA device is present (" + why + ")");
}

namespace {

class CudaDirectSolver final : public GravitySolver {
 public:
  // The factory checks for a device first: the members below already talk to the driver.
  explicit CudaDirectSolver(const SolverConfig& c) : c_(c) {
    if (c.precision == Precision::float64)
      throw std::invalid_argument(
          "--precision double: the CUDA direct solver is float32 only "
          "(use --backend cpu for the double reference)");
    sms_ = sm_count();
  }

  ForceStats compute(ParticleSet& p) override {
    ForceStats st;
    Stopwatch total;
    const std::size_t n = p.size();
    if (c_.eps == 0) require_distinct_positions(p);
    if (n == 0) return st;
    p.ax.resize(n);
    p.ay.resize(n);
    p.az.resize(n);
    p.pot.resize(n);

    Stopwatch sw;
    // float offsets from the particles' median position (robust to an escaper far away, which
    // made the box centre's offsets of a unit cluster ~5e4 and their rounding 4e-3).
    std::vector<double> scratch;
    const struct {
      double x, y, z;
    } c{median(p.x, 0, n, scratch), median(p.y, 0, n, scratch), median(p.z, 0, n, scratch)};
    h_pos_.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      h_pos_[i] = make_float4(static_cast<float>(p.x[i] - c.x), static_cast<float>(p.y[i] - c.y),
                              static_cast<float>(p.z[i] - c.z), static_cast<float>(p.m[i]));
    d_pos_.upload(h_pos_.data(), n);
    d_acc_.resize(n);
    HOSHI_CUDA_CHECK(cudaDeviceSynchronize());
    st.seconds["upload"] = sw.seconds();

    start_.record();
    direct_forces(d_pos_.data(), n, c_.softening, c_.eps, c_.G, d_acc_.data(), partial_, sms_);
    stop_.record();
    st.seconds["direct"] = 1e-3 * stop_.ms_since(start_);

    sw.restart();
    h_pos_.resize(n);  // reused for the results (ax, ay, az, pot)
    d_acc_.download(h_pos_.data(), n);
    static_assert(sizeof(float4) == 4 * sizeof(float));
    store_packed_forces(reinterpret_cast<const float*>(h_pos_.data()), n, p);
    st.seconds["download"] = sw.seconds();
    st.pp = n > 0 ? static_cast<std::uint64_t>(n) * (n - 1) : 0;  // distinct pairs, as on the CPU
    st.total_seconds = total.seconds();
    return st;
  }
  std::string name() const override { return "direct"; }
  std::string backend() const override { return "cuda"; }

 private:
  SolverConfig c_;
  int sms_ = 1;
  std::vector<float4> h_pos_;
  DeviceBuffer<float4> d_pos_, d_acc_, partial_;
  CudaEvent start_, stop_;
};

}  // namespace

std::unique_ptr<GravitySolver> make_cuda_direct_solver(const SolverConfig& config) {
  require_device("--backend cuda");
  return std::make_unique<CudaDirectSolver>(config);
}

}  // namespace hoshi::gpu
