// CudaTreeSolver: the host builds the octree (tree/octree.hpp, the CPU solver's build), the
// nodes and the Morton-sorted particles go to the device, and tree_walk_kernel walks it per
// particle with the shared HOSTDEV walk (--walk particle), or tree_walk_groups_kernel a warp per
// group of <= kCudaGroupSize (--walk group; groups from make_groups on the host). Results come
// back in the caller's order.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/packed_forces.hpp"
#include "gpu/cuda_solvers.hpp"
#include "gpu/tree_config.hpp"
#include "gpu/tree_walk.cuh"
#include "tree/octree.hpp"
#include "tree/tree_solver.hpp"

namespace hoshi::gpu {

namespace {

class CudaTreeSolver final : public GravitySolver {
 public:
  explicit CudaTreeSolver(const SolverConfig& c) : c_(c) { validate(c_); }

  // The relative criterion without previous accelerations bootstraps as the CPU solver does
  // (tree/tree_solver.hpp): a barnes94 pass, then the relative pass.
  ForceStats compute(ParticleSet& p) override {
    return compute_with_bootstrap(c_, p, [this](ParticleSet& q) { return compute_once(q); });
  }

  ForceStats compute_once(ParticleSet& p) {
    ForceStats st;
    Stopwatch total;
    const std::size_t n = p.size();
    if (n == 0) return st;
    if (n > std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument("--backend cuda --solver tree: N = " + std::to_string(n) +
                                  " exceeds the 2^32 particles of one device walk");
    p.ax.resize(n);
    p.ay.resize(n);
    p.az.resize(n);
    p.pot.resize(n);
    const Criterion used = criterion_for_call(c_, has_accelerations(p));

    // Host build: keys, sort, permute, build, moments (the CPU solver's phases).
    build_tree_for(c_, used, p, tree_, st.seconds);

    Stopwatch sw;
    h_order_.resize(n);
    for (std::size_t k = 0; k < n; ++k) h_order_[k] = static_cast<std::uint32_t>(tree_.index[k]);
    const float* d_alpha = nullptr;
    if (used == Criterion::relative) {
      h_alpha_ = relative_alpha(c_, tree_, p);
      d_alpha_.upload(h_alpha_.data(), n);
      d_alpha = d_alpha_.data();
    }
    dtree_.upload(tree_.view());
    d_order_.upload(h_order_.data(), n);
    if (c_.tree.walk == WalkKind::group) dtree_.upload_groups(tree_.nodes);
    d_acc_.resize(n);
    HOSHI_CUDA_CHECK(cudaDeviceSynchronize());
    st.seconds["upload"] = sw.seconds();

    start_.record();
    const InteractionCounts counts = dtree_.walk(c_.tree.walk, walk_params_for(c_, used), d_alpha,
                                                 c_.G, d_order_.data(), d_acc_.data(), counters_);
    stop_.record();
    st.seconds["walk"] = 1e-3 * stop_.ms_since(start_);

    sw.restart();
    h_acc_.resize(n);
    d_acc_.download(h_acc_.data(), n);
    static_assert(sizeof(float4) == 4 * sizeof(float));
    store_packed_forces(reinterpret_cast<const float*>(h_acc_.data()), n, p);
    st.seconds["download"] = sw.seconds();
    st.pp = counts.pp;
    st.pc = counts.pc;
    criterion_used_ = used;
    st.criterion = used;
    st.total_seconds = total.seconds();
    return st;
  }
  std::string name() const override { return "tree"; }
  std::string backend() const override { return "cuda"; }

 private:
  SolverConfig c_;
  Criterion criterion_used_ = Criterion::barnes94;
  Octree tree_;
  std::vector<std::uint32_t> h_order_;
  std::vector<float> h_alpha_;
  std::vector<float4> h_acc_;
  DeviceTree dtree_;
  DeviceBuffer<std::uint32_t> d_order_;
  DeviceBuffer<float> d_alpha_;
  DeviceBuffer<float4> d_acc_;
  DeviceBuffer<unsigned long long> counters_;
  CudaEvent start_, stop_;
};

}  // namespace

std::unique_ptr<GravitySolver> make_cuda_tree_solver(const SolverConfig& config) {
  require_device("--backend cuda");
  return std::make_unique<CudaTreeSolver>(config);
}

}  // namespace hoshi::gpu
