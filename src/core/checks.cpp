#include "core/checks.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace hoshi {

std::optional<std::pair<std::size_t, std::size_t>> find_coincident_pair(const ParticleSet& p) {
  std::vector<std::size_t> idx(p.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  auto key = [&](std::size_t i) { return std::make_tuple(p.x[i], p.y[i], p.z[i]); };
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (std::size_t k = 1; k < idx.size(); ++k)
    if (key(idx[k]) == key(idx[k - 1]))
      return std::pair(std::min(idx[k], idx[k - 1]), std::max(idx[k], idx[k - 1]));
  return std::nullopt;
}

void require_distinct_positions(const ParticleSet& p) {
  if (auto c = find_coincident_pair(p)) {
    std::ostringstream s;
    s << "particles with ids " << p.id[c->first] << " and " << p.id[c->second]
      << " are at the same position (" << p.x[c->first] << ", " << p.y[c->first] << ", "
      << p.z[c->first] << ") and the softening is 0: their force is infinite; use --softening > 0";
    throw std::invalid_argument(s.str());
  }
}

void require_valid_particles(const ParticleSet& p, const std::string& what) {
  double mass = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const std::pair<const char*, double> fields[] = {
        {"x", p.x[i]},   {"y", p.y[i]},   {"z", p.z[i]}, {"vx", p.vx[i]},
        {"vy", p.vy[i]}, {"vz", p.vz[i]}, {"m", p.m[i]}};
    for (const auto& [name, v] : fields) {
      if (!std::isfinite(v)) {
        std::ostringstream s;
        s << what << ": particle id " << p.id[i] << ": field " << name << ": value " << v
          << " (must be finite)";
        throw std::invalid_argument(s.str());
      }
    }
    if (p.m[i] < 0) {
      std::ostringstream s;
      s << what << ": particle id " << p.id[i] << ": field m: value " << p.m[i]
        << " (masses must be >= 0)";
      throw std::invalid_argument(s.str());
    }
    mass += p.m[i];
  }
  if (p.size() > 0 && !(mass > 0))
    throw std::invalid_argument(
        what + ": field m: value 0 for every particle (the total mass must be > 0)");
}

}  // namespace hoshi
