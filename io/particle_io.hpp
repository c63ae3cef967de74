// Reading and writing particle files in any supported format, chosen from the file's
// extension (writing) or its content and extension (reading).
#pragma once

#include <string>

#include "core/particle_set.hpp"

namespace hoshi::io {

// Reads particles from `path`; throws std::invalid_argument naming the file, the field and
// the value for unreadable or invalid input (or a file without collisionless particles).
// `note`, if given, receives what the reader skipped ("N gas particles skipped ...", or empty).
ParticleSet read_particles(const std::string& path, std::string* note = nullptr);

// Writes particles to `path` (format from the extension), atomically.
void write_particles(const std::string& path, const ParticleSet& p);

}  // namespace hoshi::io
