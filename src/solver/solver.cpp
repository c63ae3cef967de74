#include "solver/solver.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/checks.hpp"
#include "direct/direct.hpp"
#include "tree/tree_solver.hpp"
#ifdef HOSHI_HAVE_CUDA
#include "gpu/cuda_solvers.hpp"
#include "gpu/device.hpp"
#endif

namespace hoshi {

namespace {

class DirectCpuSolver final : public GravitySolver {
 public:
  explicit DirectCpuSolver(const SolverConfig& c) : c_(c) {}
  ForceStats compute(ParticleSet& p) override {
    ForceStats st;
    Stopwatch sw;
    // With eps = 0 coincident particles are an error. direct_float detects them itself at no
    // cost (a non-finite result) and names them; the double kernel needs the O(N log N) check.
    if (c_.eps == 0 && c_.precision == Precision::float64) require_distinct_positions(p);
    const std::size_t n = p.size();
    if (c_.precision == Precision::float64) {
      direct_reference(p, c_.G, c_.softening, c_.eps);
      st.pp = n > 0 ? static_cast<std::uint64_t>(n) * (n - 1) : 0;
    } else {
      st.pp = direct_float(p, c_.G, c_.softening, c_.eps);
    }
    st.total_seconds = st.seconds["direct"] = sw.seconds();
    return st;
  }
  std::string name() const override { return "direct"; }
  std::string backend() const override { return "cpu"; }

 private:
  SolverConfig c_;
};

template <class E>
E parse_enum(const std::string& s, std::initializer_list<std::pair<const char*, E>> names,
             const char* what) {
  std::string valid;
  for (const auto& [n, e] : names) {
    if (s == n) return e;
    valid += valid.empty() ? n : std::string("|") + n;
  }
  throw std::invalid_argument(std::string("invalid ") + what + " '" + s + "' (expected " + valid +
                              ")");
}

}  // namespace

std::size_t direct_tree_crossover_n() {
  return 2048;
}

void validate(const SolverConfig& c) {
  auto bad = [](const char* name, double v, const char* rule) {
    std::ostringstream s;
    s << "invalid " << name << " " << v << " (" << rule << ")";
    throw std::invalid_argument(s.str());
  };
  if (!(c.eps >= 0) || !std::isfinite(c.eps)) bad("--softening", c.eps, "must be >= 0");
  if (!(c.G > 0) || !std::isfinite(c.G)) bad("G", c.G, "must be > 0");
  if (!(c.tree.theta > 0) || !std::isfinite(c.tree.theta))
    bad("--theta", c.tree.theta, "must be > 0");
  if (c.tree.order != 1 && c.tree.order != 2) bad("--order", c.tree.order, "must be 1 or 2");
  if (!(c.tree.alpha > 0)) bad("--alpha", c.tree.alpha, "must be > 0");
  if (c.tree.n_leaf < 1) bad("--n-leaf", c.tree.n_leaf, "must be >= 1");
  if (c.tree.n_group < 1) bad("--n-group", c.tree.n_group, "must be >= 1");
  if (!(c.tree.local_ratio >= 0 && c.tree.local_ratio < 1))
    bad("--local-ratio", c.tree.local_ratio, "must be >= 0 and < 1");
}

std::unique_ptr<GravitySolver> make_solver(const SolverConfig& config, std::size_t n) {
  validate(config);
  SolverConfig c = config;
  Backend backend = c.backend;
#ifdef HOSHI_HAVE_CUDA
  // auto: CUDA when a device is present, except for the double reference (CPU only).
  if (backend == Backend::automatic)
    backend =
        gpu::device_count() > 0 && c.precision == Precision::float32 ? Backend::cuda : Backend::cpu;
#else
  if (backend == Backend::automatic) backend = Backend::cpu;
  if (backend == Backend::cuda)
    throw std::invalid_argument("--backend cuda: this build of hoshi has no CUDA backend");
#endif
  c = resolve_auto(c, backend);
  SolverKind kind = c.solver;
  if (kind == SolverKind::automatic)
    kind = n < direct_tree_crossover_n() ? SolverKind::direct : SolverKind::tree;
  if (kind == SolverKind::tree && c.precision == Precision::float64)
    throw std::invalid_argument("--precision double is available with --solver direct only");
#ifdef HOSHI_HAVE_CUDA
  if (backend == Backend::cuda) {
    gpu::require_device("--backend cuda");
    if (c.precision == Precision::float64)
      throw std::invalid_argument(
          "--precision double: the CUDA backend is float32 only (use --backend cpu)");
    return kind == SolverKind::direct ? gpu::make_cuda_direct_solver(c)
                                      : gpu::make_cuda_tree_solver(c);
  }
#endif
  if (kind == SolverKind::direct) return std::make_unique<DirectCpuSolver>(c);
  return std::make_unique<TreeSolver>(c);
}

std::string to_string(SolverKind k) {
  return k == SolverKind::direct ? "direct" : k == SolverKind::tree ? "tree" : "auto";
}
SolverConfig resolve_auto(SolverConfig c, Backend backend) {
  c.backend = backend;
  if (c.tree.walk_auto)
    c.tree.walk = WalkKind::group;  // CPU: SIMD lists; CUDA: a warp per group (2.2x the
                                    // per-particle kernel's speed at 2^20 on an H200)
  if (c.tree.theta_auto) c.tree.theta = default_theta(backend, c.tree.walk);
  if (c.tree.criterion_auto) c.tree.criterion = default_criterion(backend, c.tree.walk);
  if (c.tree.alpha_auto) c.tree.alpha = default_alpha(backend, c.tree.walk);
  return c;
}

double default_theta(Backend backend, WalkKind walk) {
  if (walk == WalkKind::particle) return kThetaParticleWalk;
  return backend == Backend::cuda ? kThetaCudaGroupWalk : kThetaGroupWalk;
}
Criterion default_criterion(Backend, WalkKind) {
  return Criterion::relative;  // every walk; the tolerance differs (default_alpha)
}
double default_alpha(Backend backend, WalkKind walk) {
  if (walk == WalkKind::particle) return kAlphaParticleWalk;
  return backend == Backend::cuda ? kAlphaCudaGroupWalk : kAlphaGroupWalk;
}

std::string to_string(Backend b) {
  return b == Backend::cpu ? "cpu" : b == Backend::cuda ? "cuda" : "auto";
}
std::string to_string(Criterion c) {
  switch (c) {
    case Criterion::bh:
      return "bh";
    case Criterion::barnes94:
      return "barnes94";
    case Criterion::bmax:
      return "bmax";
    case Criterion::relative:
      return "relative";
  }
  return "?";
}
std::string to_string(Softening s) {
  return s == Softening::plummer ? "plummer" : "spline";
}
std::string to_string(WalkKind w) {
  return w == WalkKind::group ? "group" : "particle";
}

SolverKind parse_solver_kind(const std::string& s) {
  return parse_enum<SolverKind>(
      s,
      {{"direct", SolverKind::direct}, {"tree", SolverKind::tree}, {"auto", SolverKind::automatic}},
      "--solver");
}
Backend parse_backend(const std::string& s) {
  return parse_enum<Backend>(
      s, {{"cpu", Backend::cpu}, {"cuda", Backend::cuda}, {"auto", Backend::automatic}},
      "--backend");
}
Criterion parse_criterion(const std::string& s) {
  return parse_enum<Criterion>(s,
                               {{"bh", Criterion::bh},
                                {"barnes94", Criterion::barnes94},
                                {"bmax", Criterion::bmax},
                                {"relative", Criterion::relative}},
                               "--criterion");
}
Softening parse_softening(const std::string& s) {
  return parse_enum<Softening>(s, {{"plummer", Softening::plummer}, {"spline", Softening::spline}},
                               "--kernel");
}
WalkKind parse_walk(const std::string& s) {
  // "auto" is the callers' (TreeParams::walk_auto), named here so that the message lists it.
  if (s != "group" && s != "particle")
    throw std::invalid_argument("invalid --walk '" + s + "' (expected auto|group|particle)");
  return s == "group" ? WalkKind::group : WalkKind::particle;
}
Precision parse_precision(const std::string& s) {
  return parse_enum<Precision>(s, {{"float", Precision::float32}, {"double", Precision::float64}},
                               "--precision");
}

}  // namespace hoshi
