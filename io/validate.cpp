#include "io/validate.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/checks.hpp"

namespace hoshi::io {

void require_unique_ids(const ParticleSet& p, const std::string& file) {
  std::vector<std::size_t> idx(p.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return p.id[a] != p.id[b] ? p.id[a] < p.id[b] : a < b;
  });
  for (std::size_t k = 1; k < idx.size(); ++k)
    if (p.id[idx[k]] == p.id[idx[k - 1]])
      throw_bad_field(file, "id", p.id[idx[k]],
                      "duplicate particle id: particles " + std::to_string(idx[k - 1]) + " and " +
                          std::to_string(idx[k]) + " share it");
}

void validate_loaded(const ParticleSet& p, const std::string& file) {
  require_valid_particles(p, file);
  require_unique_ids(p, file);
}

}  // namespace hoshi::io
