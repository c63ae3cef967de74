#include "solver/solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bounds.hpp"
#include "core/checks.hpp"
#include "core/number_text.hpp"
#include "core/set_size.hpp"
#include "direct/direct.hpp"
#include "direct/simd.hpp"
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
  ForceStats compute(ParticleSet& p) override { return compute_for(p, nullptr); }
  // The float32 kernel skips its chunks of targets without an active particle; the double sum
  // takes the active particles as its targets.
  ForceStats compute_active(ParticleSet& p, const std::vector<std::uint8_t>& active) override {
    require_active_flags(active, p);
    return compute_for(p, &active);
  }
  std::string name() const override { return "direct"; }
  std::string backend() const override { return "cpu"; }

 private:
  ForceStats compute_for(ParticleSet& p, const std::vector<std::uint8_t>* active) {
    ForceStats st;
    Stopwatch sw;
    // With eps = 0 coincident particles are an error. direct_float detects them itself at no
    // cost (a non-finite result) and names them; the double kernel needs the O(N log N) check.
    if (c_.eps == 0 && c_.precision == Precision::float64) require_distinct_positions(p);
    const std::size_t n = p.size();
    if (c_.precision == Precision::float64) {
      std::size_t summed = n;
      if (active) {
        std::vector<std::size_t> targets;
        for (std::size_t i = 0; i < n; ++i)
          if ((*active)[i]) targets.push_back(i);
        ForceArrays f;
        direct_reference(p, c_.G, c_.softening, c_.eps, targets, f);
        for (std::size_t t = 0; t < targets.size(); ++t) {
          const std::size_t i = targets[t];
          p.ax[i] = f.ax[t], p.ay[i] = f.ay[t], p.az[i] = f.az[t], p.pot[i] = f.pot[t];
        }
        summed = targets.size();
      } else {
        direct_reference(p, c_.G, c_.softening, c_.eps);
      }
      st.pp = n > 0 ? static_cast<std::uint64_t>(summed) * (n - 1) : 0;
      // Rescaled to the set's size and mass, the sum leaves double's range only for a pair far
      // closer than that size (m / r^3 above 1e308 in those units) or a force beyond 1e308:
      // an error, as the float32 solvers' (a run went on with NaN and exited 0).
      for (std::size_t i = 0; i < n; ++i)
        if ((!active || (*active)[i]) && !std::isfinite(p.ax[i] + p.ay[i] + p.az[i] + p.pot[i])) {
          std::ostringstream m;
          m << "direct float64 reference: non-finite force on particle id " << p.id[i]
            << " with softening " << c_.eps
            << " (beyond double's range even in units of the system's size and mass: m / r^3 of "
               "a pair some 1e-100 of that size apart, or a force above 1e308"
            << (c_.eps == 0 ? "; use --softening > 0)" : ")");
          throw std::invalid_argument(m.str());
        }
    } else {
      st.pp = direct_float(p, c_.G, c_.softening, c_.eps, active);
    }
    st.total_seconds = st.seconds["direct"] = sw.seconds();
    return st;
  }
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

void require_active_flags(const std::vector<std::uint8_t>& active, const ParticleSet& p) {
  if (active.size() != p.size())
    throw std::invalid_argument("compute_active: " + std::to_string(active.size()) + " flags for " +
                                std::to_string(p.size()) + " particles");
}

std::size_t direct_tree_crossover_n(Backend backend) {
  // H200, 2026-11-29: the direct kernel took 2.59 ms at 2^16 (N^2: 10.4 ms at 2^17), the
  // group-mode walk 6.7 ms at 2^16 and 7.4 ms at 2^18; the times meet near 1.1e5.
  if (backend == Backend::cuda) return 110000;
  // 2 threads, `hoshi bench --solver direct|tree --softening 0.01`. AVX-512: the tree faster
  // from ~1500 in early rounds (2026-11-30), direct faster to 4096 on 2026-12-02 (eighteenth
  // session: 3.06 against 3.42 ms; the tree at 6144, 4.55 against 5.61): 4096, the middle,
  // within ~20% of the faster (it was 2048, where direct summation was then 1.6x faster).
  // AVX2 (sixteenth session): direct faster to 3072 (3.81 against 3.86 ms), the tree at 4096
  // (5.51 against 6.72). Builds without either (scalar) unmeasured.
  return simd::kWidth >= 16 ? 4096 : 3072;
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
  // At most 2^16: the SIMD group kernels compare particle indices within a group as float32
  // (exact below 2^24), and each thread holds buffers of 28 B per group member.
  if (c.tree.n_leaf < 1 || c.tree.n_leaf > kMaxGroupSize)
    bad("--n-leaf", c.tree.n_leaf, "must be >= 1 and <= 65536");
  if (c.tree.n_group < 1 || c.tree.n_group > kMaxGroupSize)
    bad("--n-group", c.tree.n_group, "must be >= 1 and <= 65536");
  if (!(c.tree.local_ratio >= 0 && c.tree.local_ratio < 1))
    bad("--local-ratio", c.tree.local_ratio, "must be >= 0 and < 1");
}

namespace {

ScaleExponents exponents_of(const SetSize& s) {
  const auto exponent = nearest_power_of_two;
  // How far past the unit the box may reach: a pair term m / r^3 of the lightest particle across
  // it must stay a normal float, 3 (extent - unit) <= 124 + log2(m_min / M) in the rescaled
  // units (masses / 2^k_mass), or log2(m_min) in the caller's for a set run as it is; from 0
  // (the box as the unit, as before 2026-12-01) to kMaxExtentExponent. A body of 1e15 beside a
  // unit cluster 1e10 away got no force from it at all (each cluster particle's term flushed).
  const int k_mass = exponent(s.mass), k_extent = exponent(s.extent);
  const auto reach = [&](double log2_m) {
    if (!(s.min_mass > 0)) return kMaxExtentExponent;
    return std::clamp(static_cast<int>(std::floor((124 + log2_m) / 3)), 0, kMaxExtentExponent);
  };
  const double log2_min = s.min_mass > 0 ? std::log2(s.min_mass) : 0;
  const int reach_scaled = reach(log2_min - k_mass), reach_unscaled = reach(log2_min);
  // The bulk sets the length unit: scaled by the box, a far escaper shrank a cluster's pairs
  // (m / r^3 of a pair 6.6e-4 apart, beside an escaper at 1e11: 2^-37 times the separation,
  // past float's range) and refused the set as unresolved. Unless the box would then pass the
  // far terms' reach.
  ScaleExponents k;
  k.length = std::max(exponent(s.bulk), k_extent - reach_scaled);
  k.mass = k_mass;
  k.extent = k_extent;
  k.max_extent = std::min(reach_scaled, reach_unscaled);
  return k;
}

// out[i] = in[i] 2^k (exact), out resized to in's size.
void ldexp_into(std::vector<double>& out, const std::vector<double>& in, int k) {
  out.resize(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = std::ldexp(in[i], k);
}

// v[i] = v[i] 2^k: a multiplication by the power of two (the same correctly rounded result as
// ldexp, vectorised) while 2^k is a normal double, ldexp beyond. Parallel.
void scale_in_place(std::vector<double>& v, int k) {
  if (k == 0) return;
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(v.size());
  double* a = v.data();
  if (std::abs(k) <= 1000) {
    const double s = std::ldexp(1.0, k);
#pragma omp parallel for simd schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) a[i] *= s;
  } else {
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) a[i] = std::ldexp(a[i], k);
  }
}

// Whether scaling by 2^-k and back by 2^k returns every element exactly: no value leaves
// double's normal range on the way (k > 0: a nonzero |v| below 2^(k - 1022) would become
// subnormal and lose bits; k < 0: |v| >= 2^(1024 + k) would overflow). Parallel.
bool round_trips(const std::vector<double>& v, int k) {
  if (k == 0) return true;
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(v.size());
  const double* a = v.data();
  std::ptrdiff_t bad = 0;
  if (k > 0) {
    const double lo = std::ldexp(1.0, k - 1022);
#pragma omp parallel for simd reduction(+ : bad) schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) bad += a[i] != 0 && std::abs(a[i]) < lo;
  } else {
    const double hi = std::ldexp(1.0, 1024 + k);
#pragma omp parallel for simd reduction(+ : bad) schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) bad += std::abs(a[i]) >= hi;
  }
  return bad == 0;
}

// The solver for an already resolved configuration (backend, kind and "auto" values set).
std::unique_ptr<GravitySolver> make_resolved(const SolverConfig& c, SolverKind kind,
                                             Backend backend) {
#ifdef HOSHI_HAVE_CUDA
  if (backend == Backend::cuda)
    return kind == SolverKind::direct ? gpu::make_cuda_direct_solver(c)
                                      : gpu::make_cuda_tree_solver(c);
#else
  (void)backend;
#endif
  if (kind == SolverKind::direct) return std::make_unique<DirectCpuSolver>(c);
  return std::make_unique<TreeSolver>(c);
}

// The float32 kernels see the particles in the caller's units: intermediates such as m / r^3
// leave float's range (below 1e-38 they are flushed to zero inside the walks, above 3e38 they
// are inf) when the system's size or mass is far from 1 (a Plummer sphere of 1e11 length units
// and masses 2e-4 lost 26% of its accelerations at p99; quadrupoles of 1e30-sized systems
// overflow). This wrapper hands such a set to the solver rescaled by powers of two, x / 2^kL,
// m / 2^kM, eps / 2^kL and |a_old| 2^(2 kL - kM) for the relative criterion, and scales the
// results back, a 2^(kM - 2 kL) and pot 2^(kM - kL). Powers of two are exact in double and
// commute with every rounding to float (while nothing underflows), so the result is the one the
// solver computes for the same system in units where its size and mass are of order one;
// for a set that is already near them (ScaleExponents::in_range) the solver runs on it
// directly. The rescaling is done in place (positions and masses scaled, the solver run, the
// results and then positions and masses scaled back, exactly; also when the solver throws, after
// which the accelerations and potentials are unspecified): a copy of the set would cost 72 B
// per particle more at every call (7 GB at 1e8). A set with a value that would leave double's
// normal range on the way (a coordinate of 1e-300 in a system of size 1e30) goes through a copy.
class ScaledSolver final : public GravitySolver {
 public:
  ScaledSolver(const SolverConfig& c, SolverKind kind, Backend backend)
      : c_(c), kind_(kind), backend_(backend), unscaled_(make_resolved(c, kind, backend)) {}

  ForceStats compute(ParticleSet& p) override { return compute_checked(p, nullptr); }
  // The same scaling for the whole set (the tree holds every particle); only the active
  // particles' results are specified, and checked.
  ForceStats compute_active(ParticleSet& p, const std::vector<std::uint8_t>& active) override {
    require_active_flags(active, p);
    return compute_checked(p, &active);
  }
  std::string name() const override { return unscaled_->name(); }
  std::string backend() const override { return unscaled_->backend(); }

 private:
  // What went out of float's range, for the one-line error (the rescaling has taken care of
  // the system's size and mass).
  std::string nonfinite_message(const ParticleSet& p, std::size_t i) const {
    std::ostringstream m;
    m << to_string(kind_) << " float32 kernels: non-finite force on particle id " << p.id[i]
      << " with softening " << c_.eps;
    if (c_.eps > 0)
      m << " (a softening this far from the system's size leaves float32's range: m / eps^3 "
           "when it is tiny, eps^2 when it is huge; use one near the interparticle distance, 0 "
           "for none, or --solver direct --precision double)";
    else
      m << " (particles closer than float32 resolves; use --softening > 0 or --solver direct "
           "--precision double)";
    return m.str();
  }

  // active: nullptr for compute(), else compute_active's flags.
  using Active = const std::vector<std::uint8_t>*;
  static ForceStats run(GravitySolver& s, ParticleSet& p, Active active) {
    return active ? s.compute_active(p, *active) : s.compute(p);
  }

  ForceStats compute_checked(ParticleSet& p, Active active) {
    const ForceStats st = compute_scaled(p, scale_exponents(p, c_.eps), active);
    for (std::size_t i = 0; i < p.size(); ++i)
      if ((!active || (*active)[i]) && !std::isfinite(p.ax[i] + p.ay[i] + p.az[i] + p.pot[i]))
        throw std::invalid_argument(nonfinite_message(p, i));
    return st;
  }

  ForceStats compute_scaled(ParticleSet& p, const ScaleExponents& k, Active active) {
    const std::size_t n = p.size();
    if (n == 0 || k.in_range()) return run(*unscaled_, p, active);
    const int kL = k.length, kM = k.mass;
    if (!round_trips(p.x, kL) || !round_trips(p.y, kL) || !round_trips(p.z, kL) ||
        !round_trips(p.m, kM))
      return compute_copy(p, kL, kM, active);
    // Puts positions and masses back when it goes out of scope, results and exceptions alike.
    struct Restore {
      ParticleSet& p;
      int kL, kM;
      ~Restore() {
        scale_in_place(p.x, kL);
        scale_in_place(p.y, kL);
        scale_in_place(p.z, kL);
        scale_in_place(p.m, kM);
      }
    };
    scale_in_place(p.x, -kL);
    scale_in_place(p.y, -kL);
    scale_in_place(p.z, -kL);
    scale_in_place(p.m, -kM);
    const Restore restore{p, kL, kM};
    scale_in_place(p.ax, 2 * kL - kM);  // |a_old| of the relative criterion
    scale_in_place(p.ay, 2 * kL - kM);
    scale_in_place(p.az, 2 * kL - kM);
    // The inactive particles' potentials come back unchanged too (scaled there and back).
    if (active) scale_in_place(p.pot, kL - kM);
    const ForceStats st = compute_rescaled(p, kL, kM, active);
    scale_in_place(p.ax, kM - 2 * kL);
    scale_in_place(p.ay, kM - 2 * kL);
    scale_in_place(p.az, kM - 2 * kL);
    scale_in_place(p.pot, kM - kL);
    return st;
  }

  // The rescaled set's forces, in its units, from the solver for its softening.
  ForceStats compute_rescaled(ParticleSet& q, int kL, int kM, Active active) {
    if (!scaled_ || scaled_kL_ != kL) {
      SolverConfig c = c_;
      c.eps = std::ldexp(c_.eps, -kL);
      scaled_ = make_resolved(c, kind_, backend_);
      scaled_kL_ = kL;
    }
    try {
      return run(*scaled_, q, active);
    } catch (const std::invalid_argument& e) {
      // The inner solver speaks of the rescaled set (its softening is eps 2^-kL).
      std::ostringstream m;
      m << e.what() << " [in units rescaled by 2^" << -kL << " in length and 2^" << -kM
        << " in mass for float32; the softening given is " << c_.eps << "]";
      throw std::invalid_argument(m.str());
    }
  }

  // compute_scaled through a rescaled copy of the set.
  ForceStats compute_copy(ParticleSet& p, int kL, int kM, Active active) {
    const std::size_t n = p.size();
    ParticleSet q;
    q.resize(n);
    q.id = p.id;
    ldexp_into(q.x, p.x, -kL);
    ldexp_into(q.y, p.y, -kL);
    ldexp_into(q.z, p.z, -kL);
    ldexp_into(q.m, p.m, -kM);
    if (p.ax.size() == n && p.ay.size() == n && p.az.size() == n) {  // |a_old|
      ldexp_into(q.ax, p.ax, 2 * kL - kM);
      ldexp_into(q.ay, p.ay, 2 * kL - kM);
      ldexp_into(q.az, p.az, 2 * kL - kM);
    }
    if (active && p.pot.size() == n) ldexp_into(q.pot, p.pot, kL - kM);
    const ForceStats st = compute_rescaled(q, kL, kM, active);
    ldexp_into(p.ax, q.ax, kM - 2 * kL);
    ldexp_into(p.ay, q.ay, kM - 2 * kL);
    ldexp_into(p.az, q.az, kM - 2 * kL);
    ldexp_into(p.pot, q.pot, kM - kL);
    return st;
  }

  SolverConfig c_;
  SolverKind kind_;
  Backend backend_;
  std::unique_ptr<GravitySolver> unscaled_, scaled_;
  int scaled_kL_ = 0;
};

}  // namespace

ScaleExponents scale_exponents(const ParticleSet& p) {
  return exponents_of(set_size(p));
}

ScaleExponents scale_exponents(const ParticleSet& p, double eps) {
  ScaleExponents k = scale_exponents(p);
  if (!(eps > 0) || !std::isfinite(eps) || p.size() == 0) return k;
  const int e = static_cast<int>(std::lround(std::log2(eps)));
  if (e <= k.length) return k;
  // Against the box, as before the bulk set the unit (a softening 2^92 times a unit Plummer
  // sphere was computed correctly, then refused).
  if (e - k.extent > kMaxSofteningOverSize)
    throw std::invalid_argument(
        "softening " + number_text(eps) + ": more than 2^" + std::to_string(kMaxSofteningOverSize) +
        " times the system's size (2^" + std::to_string(k.extent) +
        "), where every float32 force term underflows; use a softening near the interparticle "
        "distance, or --solver direct --precision double");
  k.length = e;
  return k;
}

namespace {

// make_solver's resolution: the configuration with its "auto" values set, the solver kind and
// the backend.
struct Resolved {
  SolverConfig c;
  SolverKind kind;
  Backend backend;
};

Resolved resolve(const SolverConfig& config, std::size_t n) {
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
  // The double-precision path is direct summation's only: auto takes it at every N (it took
  // the tree, and failed, from the crossover up).
  if (kind == SolverKind::automatic)
    kind = c.precision == Precision::float64 || n < direct_tree_crossover_n(backend)
               ? SolverKind::direct
               : SolverKind::tree;
  if (kind == SolverKind::tree && c.precision == Precision::float64)
    throw std::invalid_argument("--precision double is available with --solver direct only");
#ifdef HOSHI_HAVE_CUDA
  if (backend == Backend::cuda) {
    gpu::require_device("--backend cuda");
    if (c.precision == Precision::float64)
      throw std::invalid_argument(
          "--precision double: the CUDA backend is float32 only (use --backend cpu)");
  }
#endif
  return {c, kind, backend};
}

}  // namespace

std::unique_ptr<GravitySolver> make_solver(const SolverConfig& config, std::size_t n) {
  const auto [c, kind, backend] = resolve(config, n);
  // The double reference needs no rescaling (and is the yardstick for it).
  if (c.precision == Precision::float64) return make_resolved(c, kind, backend);
  return std::make_unique<ScaledSolver>(c, kind, backend);
}

std::string describe_forces(const SolverConfig& config, std::size_t n) {
  const auto [c, kind, backend] = resolve(config, n);
  std::string s = to_string(kind) + " " + to_string(backend) + " " +
                  (c.precision == Precision::float64 ? "float64" : "float32") +
                  " G=" + number_text(c.G) + " eps=" + number_text(c.eps) + " " +
                  to_string(c.softening);
  if (kind == SolverKind::tree) {
    const TreeParams& t = c.tree;
    s += " theta=" + number_text(t.theta) + " criterion=" + to_string(t.criterion);
    if (t.criterion == Criterion::relative) s += " alpha=" + number_text(t.alpha);
    s += " order=" + std::to_string(t.order) + " n_leaf=" + std::to_string(t.n_leaf);
    // What the walk uses: the CPU group walk its groups and local expansions, the CUDA group
    // mode its warp-sized groups, the per-particle walks neither.
    if (t.walk == WalkKind::group && backend == Backend::cpu)
      s += " n_group=" + std::to_string(t.n_group) + " local_ratio=" + number_text(t.local_ratio);
    else if (t.walk == WalkKind::group)
      s += " n_group=" + std::to_string(kCudaGroupSize);
    s += " walk=" + to_string(t.walk);
  }
  return s;
}

std::string to_string(SolverKind k) {
  return k == SolverKind::direct ? "direct" : k == SolverKind::tree ? "tree" : "auto";
}
SolverConfig resolve_auto(SolverConfig c, Backend backend) {
  c.backend = backend;
  if (c.tree.walk_auto)
    c.tree.walk = WalkKind::group;  // CPU: SIMD lists; CUDA: a warp per group (2.8x the
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
  // "auto" is the callers' (TreeParams::criterion_auto), named here so that the message lists it.
  if (s != "bh" && s != "barnes94" && s != "bmax" && s != "relative")
    throw std::invalid_argument("invalid --criterion '" + s +
                                "' (expected auto|bh|barnes94|bmax|relative)");
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
