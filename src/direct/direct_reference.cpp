#include <numeric>

#include "direct/direct.hpp"

namespace hoshi {

void direct_reference(const ParticleSet& p, double G, Softening kernel, double eps,
                      const std::vector<std::size_t>& targets, ForceArrays& out) {
  const auto s = SofteningParams<double>::make(kernel, eps);
  const std::size_t n = p.size();
  const std::ptrdiff_t nt = static_cast<std::ptrdiff_t>(targets.size());
  out.resize(targets.size());
#pragma omp parallel for schedule(dynamic, 16) if (nt * n > 100000)
  for (std::ptrdiff_t t = 0; t < nt; ++t) {
    const std::size_t i = targets[t];
    double ax = 0, ay = 0, az = 0, pot = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      pair_interaction(s, p.x[j] - p.x[i], p.y[j] - p.y[i], p.z[j] - p.z[i], p.m[j], true, ax, ay,
                       az, pot);
    }
    out.ax[t] = G * ax;
    out.ay[t] = G * ay;
    out.az[t] = G * az;
    out.pot[t] = G * pot;
  }
}

void direct_reference(ParticleSet& p, double G, Softening kernel, double eps) {
  std::vector<std::size_t> all(p.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  ForceArrays f;
  direct_reference(p, G, kernel, eps, all, f);
  p.ax.swap(f.ax);
  p.ay.swap(f.ay);
  p.az.swap(f.az);
  p.pot.swap(f.pot);
}

}  // namespace hoshi
