// GravitySolver: the one interface through which every force backend is used
// (DESIGN.md "Data flow of one step").
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/particle_set.hpp"
#include "core/timer.hpp"
#include "physics/mac.hpp"
#include "physics/softening.hpp"

namespace hoshi {

enum class SolverKind { direct, tree, automatic };
enum class Backend { cpu, cuda, automatic };
enum class Precision { float32, float64 };
enum class WalkKind { group, particle };

// Default opening angles, measured (docs/perf-tree.md "Tuning"; barnes94, quadrupole, Plummer).
// The CPU group walk applies the criterion at the nearest point of a group's box, so at a given
// theta it is 2-3x more accurate than a per-particle walk: at theta 0.65 the group walk has a
// 99th-percentile acceleration error of 1.0e-3 (N = 1e6) and the per-particle walk 2.6e-3
// (N = 3e5), which keeps theta 0.5 (8.5e-4).
inline constexpr double kThetaGroupWalk = 0.65;
inline constexpr double kThetaParticleWalk = 0.5;
// The CUDA group mode (a warp per group of <= kCudaGroupSize particles, every lane walking the
// group's box; tree/walk_box.hpp): barnes94 at 0.6 has p99 9.7e-4 at N = 1e5 (its CPU mirror).
inline constexpr double kThetaCudaGroupWalk = 0.6;
inline constexpr int kCudaGroupSize = 32;

// Default criterion and tolerance ("--criterion auto", "--alpha auto"): Gadget's relative
// criterion for every walk (from the second evaluation on, when |a_old| exists; the first uses
// barnes94 at the walk's theta). CPU group walk, alpha 0.02: the error of barnes94 at theta
// 0.65 (p99 1.0e-3 at N = 1e6) with half the p-p and 40% fewer p-c terms, and a better tail at
// the centre of a cusp, where |a| is small. Per-particle walk and CUDA (the criterion applied
// per particle, not at a group box's nearest point), alpha 0.0015: p99 6.8e-4 .. 7.4e-4 at
// N = 1e5 .. 1e6, at most barnes94 theta 0.5's at every N and percentile above the median, with
// 0.53x its terms (0.61-0.67x its CPU time). docs/perf-tree.md, "Default criterion".
inline constexpr double kAlphaGroupWalk = 0.02;
inline constexpr double kAlphaParticleWalk = 0.0015;
// The CUDA group mode, measured on its CPU mirror (walk_tree_boxes, docs/perf-gpu.md): alpha
// 0.004 gives p99 6.6e-4 / 6.1e-4 at N = 1e5 / 2^20 with 1602 / 1486 terms per particle, the
// per-particle default's accuracy for 1.07-1.26x its terms, and no divergence within a warp.
inline constexpr double kAlphaCudaGroupWalk = 0.004;

// The CPU group walk evaluates accepted cells farther than (target radius) / rho from a group
// or one of its big ancestors through that target's local expansion (degree 5), with
// rho = kLocalRatio theta^((order + 1) / 5) (local_ratio_for, tree/tree_walk.hpp; for the
// relative criterion theta^3 -> 13.7 alpha): 0.29 at theta 0.65 and at alpha 0.02
// (docs/perf-tree.md, "Current state").
inline constexpr double kLocalRatio = 0.37;
// The largest --n-leaf and --n-group validate() accepts.
inline constexpr int kMaxGroupSize = 65536;

// Tree parameters (DESIGN.md decisions 4 and 5).
struct TreeParams {
  double theta = kThetaParticleWalk;
  bool theta_auto = false;  // true ("--theta auto"): make_solver sets theta = default_theta()
                            // for the backend and walk it actually uses
  Criterion criterion = Criterion::barnes94;
  bool criterion_auto = false;  // true ("--criterion auto"): make_solver sets default_criterion()
  int order = 2;                // 1 monopole, 2 monopole + quadrupole
  double alpha = kAlphaParticleWalk;  // relative criterion (Gadget's ErrTolForceAcc)
  bool alpha_auto = false;            // true ("--alpha auto"): make_solver sets default_alpha()
  int n_leaf = 16;                    // a node with <= n_leaf particles is a leaf
  int n_group = 128;                  // group walk: particles per group at most
  // Group walk: the coefficient R of local_ratio_for (above); 0 turns local expansions off.
  double local_ratio = kLocalRatio;
  WalkKind walk = WalkKind::group;
  // true (the default, "--walk auto"): resolve_auto sets walk to the group walk (on CUDA: the
  // group mode, measured faster than the per-particle kernel on an H200, docs/perf-gpu.md).
  // Code that sets walk itself sets walk_auto = false too.
  bool walk_auto = true;
};

struct SolverConfig {
  SolverKind solver = SolverKind::automatic;
  Backend backend = Backend::automatic;
  Precision precision = Precision::float32;  // float64: the double reference (direct only)
  double G = 1.0;
  double eps = 0.0;  // Plummer-equivalent softening length
  Softening softening = Softening::plummer;
  TreeParams tree;
};

// The opening angle of "--theta auto": kThetaGroupWalk for the CPU group walk,
// kThetaCudaGroupWalk for the CUDA group mode, kThetaParticleWalk for the per-particle walks
// (CPU and CUDA). make_solver calls it with the backend it resolved (cpu or cuda; automatic
// counts as cpu).
double default_theta(Backend backend, WalkKind walk);
// "--criterion auto" and "--alpha auto" (above): relative, with alpha kAlphaGroupWalk for the CPU
// group walk, kAlphaCudaGroupWalk for the CUDA group mode and kAlphaParticleWalk for the
// per-particle walks.
Criterion default_criterion(Backend backend, WalkKind walk);
double default_alpha(Backend backend, WalkKind walk);
// c with backend = `backend` (cpu or cuda) and its "auto" tree settings (walk_auto first, then
// theta_auto, criterion_auto, alpha_auto) set to the defaults above for that backend. make_solver
// and the device stepper call it: a configuration filled in for "--backend auto" holds the CPU's
// values until the backend is known.
SolverConfig resolve_auto(SolverConfig c, Backend backend);

// What one force evaluation did.
struct ForceStats {
  std::uint64_t pp = 0;   // particle-particle interactions, total
  std::uint64_t pc = 0;   // particle-cell interactions, total
  std::uint64_t m2l = 0;  // tree group walk: cells added to a local expansion, total
  PhaseTimes seconds;  // per phase: "keys", "sort", "permute", "build", "moments", "walk", "direct"
  double total_seconds = 0;
  // Tree solvers: the criterion of the evaluation's (last) pass; relative's first evaluation
  // bootstraps with a barnes94 pass and then reports relative. Direct solvers: unset.
  std::optional<Criterion> criterion;
};

class GravitySolver {
 public:
  virtual ~GravitySolver() = default;
  // Fills p.ax, p.ay, p.az (G included) and p.pot (potential per unit mass, G included,
  // self term excluded) for every particle, in the set's current order.
  virtual ForceStats compute(ParticleSet& p) = 0;
  // Fills ax, ay, az and pot of the particles with active[i] != 0 (sources: every particle),
  // as compute() would; the others' entries are unspecified afterwards (they keep their values
  // or get the forces of the current positions). active.size() == p.size(). The default
  // computes every particle's forces (compute(p)).
  virtual ForceStats compute_active(ParticleSet& p,
                                    [[maybe_unused]] const std::vector<std::uint8_t>& active) {
    return compute(p);
  }
  virtual std::string name() const = 0;     // "direct" or "tree"
  virtual std::string backend() const = 0;  // "cpu" or "cuda"
};

// compute_active's flags, one per particle: std::invalid_argument otherwise.
void require_active_flags(const std::vector<std::uint8_t>& active, const ParticleSet& p);

// Below this N, --solver auto uses direct summation on `backend` (cpu or cuda; automatic is
// taken as cpu): where direct summation, exact, is also the faster (measured;
// docs/perf-tree.md, docs/perf-gpu.md). With --precision double (Precision::float64, direct
// summation's only) auto takes it at every N.
std::size_t direct_tree_crossover_n(Backend backend);

// The solver that `config` asks for, resolving "auto" for `n` particles (and its precision).
// Throws std::invalid_argument for an impossible request (for example --backend cuda in a
// build without CUDA, or no device).
std::unique_ptr<GravitySolver> make_solver(const SolverConfig& config, std::size_t n);

// The forces make_solver(config, n) would compute, resolved ("auto" backend, solver, theta,
// criterion, alpha, walk) and named in one line: "tree cpu float32 G=1 eps=0.01 plummer
// theta=0.65 criterion=relative alpha=0.02 order=2 n_leaf=16 n_group=128 local_ratio=0.37
// walk=group", or "direct cpu float32 G=1 eps=0.01 plummer" (the tree settings do not apply).
// Two configurations with the same text compute the same forces. Throws as make_solver.
std::string describe_forces(const SolverConfig& config, std::size_t n);

// Validates parameters; throws std::invalid_argument naming the bad value.
void validate(const SolverConfig& config);

// The power-of-two exponents of a set's size and total mass, rounded. The size is its bulk's
// (the largest 5-95 percentile range of a coordinate, over a strided sample of 4096), or more
// where the bounding box would pass 2^32 in that unit (kMaxExtentExponent): one far
// escaper does not shrink a cluster out of float's range. make_solver's float32 solvers see a
// set with |k_length| or |k_mass| above
// kMaxUnscaledExponent rescaled by 2^-k (exactly), so that float's range holds every
// intermediate of the kernels in any consistent unit system. 0 for an empty or degenerate set.
inline constexpr int kMaxUnscaledExponent = 16;
// The bounding box stays within 2^kMaxExtentExponent of the length unit, and less where the
// lightest particle is lighter than 2^-27 of the total (N = 1e8): a pair term m / r^3 across
// it must stay a normal float (below 2^-126 the kernels flush it to zero: an escaper 2^80
// from a unit cluster, or a body of 1e15 1e10 from one, got no force from it).
inline constexpr int kMaxExtentExponent = 32;
struct ScaleExponents {
  int length = 0, mass = 0;
  int extent = 0;                       // the bounding box's largest side's, caller's units
  int max_extent = kMaxExtentExponent;  // how far past the unit the box may reach
  // Whether the set runs as it is: size and mass within 2^16 of 1, the box within max_extent
  // (an escaper 2^40 from a unit cluster: rescaled by 2^-8, its pair terms flushed unscaled).
  bool in_range() const {
    return std::abs(length) <= kMaxUnscaledExponent && std::abs(mass) <= kMaxUnscaledExponent &&
           extent <= max_extent;
  }
};
ScaleExponents scale_exponents(const ParticleSet& p);
// The same with the softening: the length unit is eps where eps is the larger (a cluster of 8
// ulp with eps 1e-3, scaled to unit size, had eps 2^39 and every m / eps^3 flushed to zero in
// the float walks). In units of eps, a pair's acceleration is ~ m (size / eps); past
// kMaxSofteningOverSize (with per-particle masses down to 2^-30 of the total, float's smallest
// normal 2^-126 is then near) std::invalid_argument names the softening.
constexpr int kMaxSofteningOverSize = 90;
ScaleExponents scale_exponents(const ParticleSet& p, double eps);

// Names used on the command line and in files.
std::string to_string(SolverKind);
std::string to_string(Backend);
std::string to_string(Criterion);
std::string to_string(Softening);
std::string to_string(WalkKind);
SolverKind parse_solver_kind(const std::string&);
Backend parse_backend(const std::string&);
Criterion parse_criterion(const std::string&);
Softening parse_softening(const std::string&);
WalkKind parse_walk(const std::string&);
Precision parse_precision(const std::string&);

}  // namespace hoshi
