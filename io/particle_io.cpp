#include "io/particle_io.hpp"

#include <filesystem>
#include <stdexcept>

#include "io/csv.hpp"

namespace hoshi::io {

namespace {
std::string extension(const std::string& path) {
  return std::filesystem::path(path).extension().string();
}
}  // namespace

ParticleSet read_particles(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::invalid_argument(path + ": no such file");
  const std::string ext = extension(path);
  if (ext == ".csv" || ext == ".txt") return read_csv(path);
  throw std::invalid_argument(path + ": unknown file format (supported: .csv)");
}

void write_particles(const std::string& path, const ParticleSet& p) {
  const std::string ext = extension(path);
  if (ext == ".csv") return write_csv(path, p);
  throw std::invalid_argument(path + ": unknown output format '" + ext + "' (supported: .csv)");
}

}  // namespace hoshi::io
