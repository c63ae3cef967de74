#include "io/particle_io.hpp"

#include <filesystem>
#include <stdexcept>

#include "io/csv.hpp"
#include "io/snapshot_io.hpp"
#include "io/validate.hpp"

namespace hoshi::io {

namespace {
std::string extension(const std::string& path) {
  return std::filesystem::path(path).extension().string();
}
}  // namespace

ParticleSet read_particles(const std::string& path, LoadedSnapshot* meta) {
  if (meta) *meta = LoadedSnapshot{};
  require_input_file(path);
  // CSV by extension (.csv, .txt) unless the content says it is a binary format.
  const auto format = detect_snapshot_format(path);
  const std::string ext = extension(path);
  if ((ext == ".csv" || ext == ".txt") && (!format || *format == SnapshotFormat::csv)) {
    if (meta) meta->format = SnapshotFormat::csv;
    return read_csv(path);
  }
  LoadedSnapshot s = load_snapshot(path);
  ParticleSet p = std::move(s.particles);
  if (meta) *meta = std::move(s);
  return p;
}

SnapshotFormat output_format(const std::string& path) {
  const auto format = format_from_extension(path);
  if (!format)
    throw std::invalid_argument(
        path + ": unknown output format '" + extension(path) +
        "' (supported: .csv, .hdf5/.h5/.hdf, .tipsy/.std/.bin, .gadget/.g1/.g2/.dat)");
  return *format;
}

void write_particles(const std::string& path, const ParticleSet& p, const SnapshotInfo& info,
                     const WriteOptions& options) {
  save_snapshot(path, output_format(path), p, info, options);
}

}  // namespace hoshi::io
