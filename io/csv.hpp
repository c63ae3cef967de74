// CSV particle files: header `id,x,y,z,vx,vy,vz,m`, one particle per line.
#pragma once

#include <string>

#include "core/particle_set.hpp"

namespace hoshi::io {

// Reads a particle CSV. Throws std::invalid_argument "FILE:LINE: field F: value V (why)" for a
// wrong header, a wrong number of fields, a malformed or non-finite number, a negative mass,
// duplicate ids, or zero total mass.
ParticleSet read_csv(const std::string& path);

// Writes particles as CSV (shortest round-trip decimal representation), atomically.
void write_csv(const std::string& path, const ParticleSet& p);

// Writes forces as CSV with header `id,ax,ay,az,pot`, atomically.
void write_forces_csv(const std::string& path, const ParticleSet& p);

}  // namespace hoshi::io
