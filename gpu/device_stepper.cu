// DeviceStepper (gpu/device_stepper.hpp): state on the device, forces and kick/drift there.
//
// Direct: CUB bounding box -> local float4 (double subtraction on the device) -> tiled kernel.
// Tree, per compute_forces():
//   device: CUB bounding box -> bounding cube (tree/octree.hpp bounding_cube of the two box
//           corners: the cube depends on the box only) -> Morton keys (tree/morton.hpp, the
//           host's function) -> CUB radix sort of (key, index), stable like the host sort, so
//           the order is the host build's -> gather the sorted double x, y, z, m
//   down:   sorted keys (8 B) and sorted x, y, z, m (32 B) per particle into pinned host
//           buffers (and the sorted index, 4 B, with zero softening: the coincidence check)
//   host:   build_octree from the sorted keys, compute_multipoles (the CPU solver's code), both
//           reading the pinned copies in place. Crowded cells of the keys' finest level (rare:
//           key_deep_cells) are reordered here, and then the sorted x, y, z, m and the order
//           go back up (36 B per particle, only in the steps that have such cells)
//   up:     the nodes (128 B per node, about N / 4 nodes at n_leaf 16), through a pinned copy
//   device: per-particle walk (or the group mode, groups from make_groups on the host, 16 B per
//           group up), accelerations written in the stepper's (input) order.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/checks.hpp"
#include "core/packed_forces.hpp"
#include "core/parallel_copy.hpp"
#include "gpu/cub_ops.cuh"
#include "gpu/cuda_solvers.hpp"
#include "gpu/device_stepper.hpp"
#include "gpu/direct.cuh"
#include "gpu/stepper_kernels.cuh"
#include "gpu/tree_config.hpp"
#include "gpu/tree_walk.cuh"
#include "tree/octree.hpp"
#include "tree/tree_solver.hpp"

namespace hoshi::gpu {

struct DeviceStepper::Impl {
  SolverConfig c;
  SolverKind kind = SolverKind::direct;
  std::size_t n = 0;
  int sms = 1;
  bool have_forces = false;
  // Host copies of the ids and masses (for error messages and download()); not a ParticleSet,
  // whose other ten arrays would cost 80 B per particle more (32 GB at 4e8).
  std::vector<std::uint64_t> id;
  std::vector<double> mass;
  DeviceBuffer<double> x, y, z, vx, vy, vz, m;
  DeviceBuffer<float4> pos4, acc, partial;
  DeviceBuffer<double> median_scratch;  // direct: the sorted copy behind the centre's median
  CubTemp temp;
  // tree
  DeviceBuffer<std::uint64_t> keys, keys_sorted;
  DeviceBuffer<std::uint32_t> index, order;
  DeviceBuffer<float> alpha_a;
  DeviceBuffer<unsigned long long> counters;
  DeviceTree dtree;
  // host side of the tree build: pinned copies of the sorted keys, positions and masses (and
  // of the order, for the zero-softening check's messages), and the nodes built from them
  PinnedBuffer<std::uint64_t> h_keys;
  PinnedBuffer<double> h_x, h_y, h_z, h_m;
  PinnedBuffer<std::uint32_t> h_order;
  DeepCells deep;
  std::vector<TreeNode> nodes;
  PinnedBuffer<TreeNode> h_nodes;  // the nodes' staging copy for the upload
  CudaEvent e0, e1;
  PhaseTimes integrate;

  double elapsed() {  // seconds from e0 to e1
    return 1e-3 * e1.ms_since(e0);
  }

  ForceStats direct_forces_now() {
    ForceStats st;
    Stopwatch sw;
    // float offsets from the particles' median position: an escaper far away does not move it,
    // so a cluster keeps its float resolution (the box centre put a unit cluster with one
    // particle 1e5 away at offsets ~5e4, rounded to 4e-3; the CPU kernel centres each chunk of
    // targets: direct_float.cpp).
    median_scratch.resize(n);
    const double cx = median(x.data(), n, median_scratch.data(), temp);
    const double cy = median(y.data(), n, median_scratch.data(), temp);
    const double cz = median(z.data(), n, median_scratch.data(), temp);
    to_local_float4(x.data(), y.data(), z.data(), m.data(), n, cx, cy, cz, pos4.data());
    HOSHI_CUDA_CHECK(cudaDeviceSynchronize());
    st.seconds["convert"] = sw.seconds();
    e0.record();
    direct_forces(pos4.data(), n, c.softening, c.eps, c.G, acc.data(), partial, sms);
    e1.record();
    st.seconds["direct"] = elapsed();
    st.pp = n > 0 ? static_cast<std::uint64_t>(n) * (n - 1) : 0;  // distinct pairs, as on the CPU
    return st;
  }

  ForceStats tree_forces_now() {
    ForceStats st;
    const Criterion used = criterion_for_call(c, have_forces);
    // keys: bounding box (CUB), cube, Morton keys on the device
    Stopwatch sw;
    const Box3 b = bounding_box(x.data(), y.data(), z.data(), n, temp);
    const double cx[2] = {b.lo[0], b.hi[0]}, cy[2] = {b.lo[1], b.hi[1]}, cz[2] = {b.lo[2], b.hi[2]};
    const BoundingCube cube = bounding_cube(cx, cy, cz, 2);
    morton_keys(x.data(), y.data(), z.data(), n, cube.lo_x, cube.lo_y, cube.lo_z, cube.side,
                keys.data());
    iota(index.data(), n);
    HOSHI_CUDA_CHECK(cudaDeviceSynchronize());
    st.seconds["keys"] = sw.seconds();
    // sort: CUB radix sort of (key, index) over the 63 key bits; gather the sorted particles
    sw.restart();
    sort_pairs(keys.data(), keys_sorted.data(), index.data(), order.data(), n, temp, nullptr, 63);
    DeviceBuffer<double>& xs = dtree.x();
    DeviceBuffer<double>& ys = dtree.y();
    DeviceBuffer<double>& zs = dtree.z();
    DeviceBuffer<double>& ms = dtree.m();
    xs.resize(n);
    ys.resize(n);
    zs.resize(n);
    ms.resize(n);
    gather_sorted(x.data(), y.data(), z.data(), m.data(), order.data(), n, xs.data(), ys.data(),
                  zs.data(), ms.data());
    HOSHI_CUDA_CHECK(cudaDeviceSynchronize());
    st.seconds["sort"] = sw.seconds();
    // download what the host build needs, into pinned buffers (full-rate copies, queued
    // together, one wait); the build reads them in place
    sw.restart();
    h_keys.resize(n);
    h_x.resize(n);
    h_y.resize(n);
    h_z.resize(n);
    h_m.resize(n);
    keys_sorted.download_async(h_keys.data(), n);
    xs.download_async(h_x.data(), n);
    ys.download_async(h_y.data(), n);
    zs.download_async(h_z.data(), n);
    ms.download_async(h_m.data(), n);
    if (c.eps == 0) {  // the coincidence check names particles by id
      h_order.resize(n);
      order.download_async(h_order.data(), n);
    }
    HOSHI_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    st.seconds["download"] = sw.seconds();
    // host build
    sw.restart();
    key_deep_cells(h_keys.data(), h_x.data(), h_y.data(), h_z.data(), h_m.data(), n, cube,
                   c.tree.n_leaf, deep);
    if (!deep.empty()) {  // the device's sorted arrays and order take the runs' new order
      if (c.eps != 0) {
        h_order.resize(n);
        order.download(h_order.data(), n);
      }
      deep.permute(h_x.data());
      deep.permute(h_y.data());
      deep.permute(h_z.data());
      deep.permute(h_m.data());
      deep.permute(h_order.data());
      xs.upload(h_x.data(), n);
      ys.upload(h_y.data(), n);
      zs.upload(h_z.data(), n);
      ms.upload(h_m.data(), n);
      order.upload(h_order.data(), n);
      HOSHI_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
    const int max_level = build_octree(h_keys.data(), n, cube, c.tree.n_leaf, nodes, &deep);
    compute_multipoles(nodes, h_x.data(), h_y.data(), h_z.data(), h_m.data(), used, c.tree.theta,
                       cell_kernel_radius(c.softening, c.eps));
    if (c.eps == 0)
      require_no_coincident(h_keys.data(), h_order.data(), h_x.data(), h_y.data(), h_z.data(), n,
                            id.data());
    st.seconds["build"] = sw.seconds();
    // upload the nodes
    sw.restart();
    // Through a pinned copy: the DMA engines read it at the link's rate, where the pageable
    // vector was copied at ~6.5 GB/s (4.5 ms for the 29 MB of nodes at 1M on an H200 host).
    h_nodes.resize(nodes.size());
    parallel_copy(h_nodes.data(), nodes.data(), nodes.size() * sizeof(TreeNode));
    TreeView v;  // the device tree's particle arrays stay those gathered above
    v.nodes = h_nodes.data();
    v.n_nodes = static_cast<std::uint32_t>(nodes.size());
    v.n_particles = n;
    v.lo_x = cube.lo_x;
    v.lo_y = cube.lo_y;
    v.lo_z = cube.lo_z;
    v.side = cube.side;
    v.max_level = static_cast<std::uint32_t>(max_level);
    dtree.upload_nodes(v);
    if (c.tree.walk == WalkKind::group) dtree.upload_groups(nodes);
    const float* d_alpha = nullptr;
    if (used == Criterion::relative) {
      alpha_a.resize(n);
      relative_alpha(acc.data(), order.data(), n, c.tree.alpha / c.G, alpha_a.data());
      d_alpha = alpha_a.data();
    }
    HOSHI_CUDA_CHECK(cudaDeviceSynchronize());
    st.seconds["upload"] = sw.seconds();
    // walk
    e0.record();
    const InteractionCounts counts = dtree.walk(c.tree.walk, walk_params_for(c, used), d_alpha, c.G,
                                                order.data(), acc.data(), counters);
    e1.record();
    st.seconds["walk"] = elapsed();
    st.pp = counts.pp;
    st.pc = counts.pc;
    return st;
  }
};

DeviceStepper::DeviceStepper(const SolverConfig& config, const ParticleSet& p) {
  validate(config);
  require_device("DeviceStepper (--backend cuda)");
  if (config.precision == Precision::float64)
    throw std::invalid_argument("--precision double: device-resident stepping is float32 only");
  const std::size_t n = p.size();
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("DeviceStepper: N = " + std::to_string(n) +
                                " exceeds the 2^32 particles of one device");
  // The device keeps the run's units (make_solver's solvers rescale a set far from unit size
  // and mass; the device-resident state is not rescaled): refuse a set whose float32 terms
  // would leave float's range rather than step it with flushed or infinite terms. The
  // softening counts as a length (make_solver's rule: a softening far beyond the system's size
  // sets the unit).
  if (const ScaleExponents k = scale_exponents(p, config.eps); !k.in_range())
    throw std::invalid_argument(
        "--backend cuda: device-resident steps need a system whose size (or softening, where "
        "larger) and mass are within 2^" +
        std::to_string(kMaxUnscaledExponent) +
        " of 1 in the run's units, and its extent "
        "(escapers included) within 2^" +
        std::to_string(k.max_extent) + " (here 2^" + std::to_string(k.length) + ", 2^" +
        std::to_string(k.mass) + " and 2^" + std::to_string(k.extent) +
        "); use other units (--units galaxy, or rescaled input) or --backend cpu");
  impl_ = std::make_unique<Impl>();
  Impl& s = *impl_;
  // "auto" tree settings for CUDA (a configuration filled in for --backend auto holds the CPU
  // group walk's theta and alpha until the backend is known).
  s.c = resolve_auto(config, Backend::cuda);
  s.n = n;
  s.kind = config.solver;
  if (s.kind == SolverKind::automatic)
    s.kind = n < direct_tree_crossover_n(Backend::cuda) ? SolverKind::direct : SolverKind::tree;
  s.sms = sm_count();
  s.id = p.id;
  s.mass = p.m;
  if (config.eps == 0 && s.kind == SolverKind::direct) require_distinct_positions(p);
  s.x.upload(p.x.data(), n);
  s.y.upload(p.y.data(), n);
  s.z.upload(p.z.data(), n);
  s.vx.upload(p.vx.data(), n);
  s.vy.upload(p.vy.data(), n);
  s.vz.upload(p.vz.data(), n);
  s.m.upload(p.m.data(), n);
  s.acc.resize(n);
  if (n > 0 && p.ax.size() == n && has_accelerations(p)) {
    // A continued run: p's accelerations and potentials (float values stored as doubles, so
    // exact) are those of its state, and the relative criterion's |a_old|; computing them
    // again would differ from the uninterrupted run's (solvers take |a_old| from p the same way).
    std::vector<float4> a(n);
    for (std::size_t i = 0; i < n; ++i)
      a[i] = make_float4(static_cast<float>(p.ax[i]), static_cast<float>(p.ay[i]),
                         static_cast<float>(p.az[i]),
                         p.pot.size() == n ? static_cast<float>(p.pot[i]) : 0.0f);
    s.acc.upload(a.data(), n);
    s.have_forces = true;
  } else if (n > 0) {
    HOSHI_CUDA_CHECK(cudaMemsetAsync(s.acc.data(), 0, n * sizeof(float4)));
  }
  if (s.kind == SolverKind::direct) {
    s.pos4.resize(n);
  } else {
    s.keys.resize(n);
    s.keys_sorted.resize(n);
    s.index.resize(n);
    s.order.resize(n);
  }
  HOSHI_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceStepper::~DeviceStepper() = default;

std::size_t DeviceStepper::size() const {
  return impl_->n;
}

std::string DeviceStepper::solver_name() const {
  return impl_->kind == SolverKind::direct ? "direct" : "tree";
}

ForceStats DeviceStepper::compute_forces() {
  Impl& s = *impl_;
  Stopwatch total;
  ForceStats st;
  if (s.n > 0) st = s.kind == SolverKind::direct ? s.direct_forces_now() : s.tree_forces_now();
  // The relative criterion's first evaluation bootstraps as the solvers' do
  // (tree/tree_solver.hpp): the barnes94 pass above gave |a_old|, now the relative pass.
  if (s.n > 0 && !s.have_forces && s.kind == SolverKind::tree &&
      s.c.tree.criterion == Criterion::relative) {
    s.have_forces = true;
    const ForceStats first = st;
    st = s.tree_forces_now();
    for (const auto& [phase, t] : first.seconds) st.seconds[phase] += t;
  }
  s.have_forces = s.n > 0;
  st.total_seconds = total.seconds();
  return st;
}

void DeviceStepper::kick(double dt) {
  Impl& s = *impl_;
  s.e0.record();
  gpu::kick(s.vx.data(), s.vy.data(), s.vz.data(), s.acc.data(), s.n, dt);
  s.e1.record();
  s.integrate["kick"] += s.elapsed();
}

void DeviceStepper::drift(double dt) {
  Impl& s = *impl_;
  s.e0.record();
  gpu::drift(s.x.data(), s.y.data(), s.z.data(), s.vx.data(), s.vy.data(), s.vz.data(), s.n, dt);
  s.e1.record();
  s.integrate["drift"] += s.elapsed();
}

DeviceEnergies DeviceStepper::energies() {
  Impl& s = *impl_;
  DeviceEnergies e;
  e.kinetic = kinetic_energy(s.vx.data(), s.vy.data(), s.vz.data(), s.m.data(), s.n, s.temp);
  e.potential = potential_energy(s.m.data(), s.acc.data(), s.n, s.temp);
  return e;
}

double DeviceStepper::max_acceleration2() {
  Impl& s = *impl_;
  return gpu::max_acceleration2(s.acc.data(), s.n, s.temp);
}

void DeviceStepper::download(ParticleSet& p) const {
  const Impl& s = *impl_;
  const std::size_t n = s.n;
  p.resize(n);
  p.id = s.id;
  p.m = s.mass;
  s.x.download(p.x.data(), n);
  s.y.download(p.y.data(), n);
  s.z.download(p.z.data(), n);
  s.vx.download(p.vx.data(), n);
  s.vy.download(p.vy.data(), n);
  s.vz.download(p.vz.data(), n);
  std::vector<float4> a(n);
  s.acc.download(a.data(), n);
  static_assert(sizeof(float4) == 4 * sizeof(float));
  store_packed_forces(reinterpret_cast<const float*>(a.data()), n, p);
}

const PhaseTimes& DeviceStepper::integrate_seconds() const {
  return impl_->integrate;
}

}  // namespace hoshi::gpu
