// CSV particle files: a header naming the columns (hoshi writes `id,x,y,z,vx,vy,vz,m`), one
// particle per line.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "core/particle_set.hpp"

namespace hoshi::io {

// Reads a particle CSV. Blank lines and lines starting with "#" are skipped anywhere; the header
// may follow a "#" (numpy.savetxt(..., header="id,x,y,z,vx,vy,vz,m", delimiter=",") writes it
// so) and a UTF-8 byte order mark. The header names the columns x, y, z, vx, vy, vz, m in any
// order, an optional id (without it, particles are numbered 0, 1, ... in file order) and
// others, which are skipped. Throws std::invalid_argument "FILE:LINE: field F: value V (why)"
// for a missing header or column, a wrong number of fields, a malformed or non-finite number,
// a negative mass, duplicate ids, or zero total mass.
ParticleSet read_csv(const std::string& path);
// The same from a stream (`path` names it in the messages): what read_csv parses, and the fuzz
// target's entry point.
ParticleSet parse_csv(std::istream& in, const std::string& path);

// True when the first bytes of a file hold the particle CSV header before anything but blank
// and "#" lines (spaces and tabs ignored, as read_csv does): the content signature of format
// detection.
bool looks_like_csv(const unsigned char* data, std::size_t size);

// Writes particles as CSV (shortest round-trip decimal representation), atomically.
void write_csv(const std::string& path, const ParticleSet& p);

// Writes forces as CSV with header `id,ax,ay,az,pot`, atomically.
void write_forces_csv(const std::string& path, const ParticleSet& p);

}  // namespace hoshi::io
