// Reading and writing particle files in any supported format, chosen from the file's
// extension (writing) or its content and extension (reading).
#pragma once

#include <string>

#include "core/particle_set.hpp"
#include "io/snapshot_io.hpp"

namespace hoshi::io {

// Reads particles from `path`; throws std::invalid_argument naming the file, the field and
// the value for unreadable or invalid input (or a file without collisionless particles).
// `meta`, if given, receives the rest of what load_snapshot returns (time, units, format, and
// the note of what was skipped, "N gas particles skipped ...", or empty); not the particles.
ParticleSet read_particles(const std::string& path, LoadedSnapshot* meta = nullptr);

// The format write_particles gives `path` (from its extension); an unknown extension is a
// std::invalid_argument listing the known ones.
SnapshotFormat output_format(const std::string& path);

// Writes particles to `path` (format from the extension), atomically, with the time and units
// of `info` (default: t = 0, henon units) and the format's choices in `options`.
void write_particles(const std::string& path, const ParticleSet& p, const SnapshotInfo& info = {},
                     const WriteOptions& options = {});

}  // namespace hoshi::io
