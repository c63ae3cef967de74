#include "core/packed_forces.hpp"

namespace hoshi {

void store_packed_forces(const float* xyzw, std::size_t n, ParticleSet& p) {
  double* ax = p.ax.data();
  double* ay = p.ay.data();
  double* az = p.az.data();
  double* pot = p.pot.data();
  const std::ptrdiff_t nn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (n >= 65536)
  for (std::ptrdiff_t i = 0; i < nn; ++i) {
    const float* a = xyzw + 4 * i;
    ax[i] = a[0];
    ay[i] = a[1];
    az[i] = a[2];
    pot[i] = a[3];
  }
}

}  // namespace hoshi
