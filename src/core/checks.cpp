#include "core/checks.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/parallel_sort.hpp"

namespace hoshi {

namespace {
// A hash of a position in which equal positions (+0 and -0 included) hash equally.
std::uint64_t position_hash(double x, double y, double z) {
  auto mix = [](double v) {
    std::uint64_t b = std::bit_cast<std::uint64_t>(v + 0.0);  // -0 + 0 = +0
    b ^= b >> 33;                                             // splitmix64's finalizer
    b *= 0xff51afd7ed558ccdULL;
    b ^= b >> 33;
    b *= 0xc4ceb9fe1a85ec53ULL;
    return b ^ (b >> 33);
  };
  return mix(x) ^ std::rotl(mix(y), 21) ^ std::rotl(mix(z), 42);
}
}  // namespace

std::optional<std::pair<std::size_t, std::size_t>> find_coincident_pair(const ParticleSet& p) {
  // (hash, index) pairs sorted on every thread: an index sort comparing positions read from
  // three arrays took ~1 minute on one thread at 1e8 particles. Equal positions share a hash;
  // within a run of equal hashes (a run of two or more is rare otherwise) the positions are
  // compared. Of all coincident positions the smallest in (x, y, z) order is named, with its
  // two smallest indices.
  const std::size_t n = p.size();
  std::vector<std::pair<std::uint64_t, std::size_t>> h(n);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(n); ++i)
    h[i] = {position_hash(p.x[i], p.y[i], p.z[i]), static_cast<std::size_t>(i)};
  parallel_sort(h.begin(), h.end(), std::less<>());  // equal hashes in index order
  auto key = [&](std::size_t i) { return std::make_tuple(p.x[i], p.y[i], p.z[i]); };
  std::optional<std::pair<std::size_t, std::size_t>> best;
  std::vector<std::size_t> run;
  for (std::size_t a = 0; a < n;) {
    std::size_t b = a + 1;
    while (b < n && h[b].first == h[a].first) ++b;
    if (b - a > 1) {  // sorted by (position, index): a run of many coincident stays n log n
      run.clear();
      for (std::size_t i = a; i < b; ++i) run.push_back(h[i].second);
      std::sort(run.begin(), run.end(), [&](std::size_t u, std::size_t v) {
        return key(u) != key(v) ? key(u) < key(v) : u < v;
      });
      for (std::size_t k = 1; k < run.size(); ++k)
        if (key(run[k]) == key(run[k - 1])) {
          if (!best || key(run[k]) < key(best->first)) best = std::pair(run[k - 1], run[k]);
          break;
        }
    }
    a = b;
  }
  return best;
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
