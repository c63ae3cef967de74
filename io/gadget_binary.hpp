// Gadget format 1 and format 2 binary snapshots / initial conditions (Gadget-2 users guide,
// section 6.2): Fortran-style records (a 4-byte length before and after each block), a
// 256-byte header, then POS, VEL, ID and, for types whose MassTable entry is 0, MASS blocks.
// Format 2 precedes every block with an 8-byte record holding a 4-character label ("HEAD",
// "POS ", "VEL ", "ID  ", "MASS") and the size of the next block.
//
// The byte order comes from the first record marker (256 or 8), float or double positions and
// velocities and 32- or 64-bit ids from the block lengths. Gas (type 0) is reported and
// skipped; types 1..5 are loaded. Blocks after MASS (gas properties) are ignored.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/particle_set.hpp"

namespace hoshi::io {

struct GadgetBinaryData {
  ParticleSet particles;
  double time = 0, redshift = 0, box_size = 0;
  double omega0 = 0;  // > 0: a cosmological run's snapshot (time is the scale factor)
  int format = 1;     // 1 or 2
  bool big_endian = false;
  bool double_precision = false;
  bool long_ids = false;
  int num_files = 1;
  std::array<std::uint64_t, 6> total{};  // the header's npartTotal (with the high words)
  std::array<std::uint64_t, 6> loaded{};
  std::array<std::uint64_t, 6> skipped{};
};

// Parses one Gadget binary file held in memory; throws std::invalid_argument
// "NAME: field F: value V (why)".
GadgetBinaryData parse_gadget_binary(const unsigned char* data, std::size_t size,
                                     const std::string& name);

// Reads and validates a Gadget binary file; a multi-file set NAME.0, NAME.1, ... is read
// whole when given any member.
GadgetBinaryData read_gadget_binary(const std::string& path);

struct GadgetWriteOptions {
  int format = 2;
  bool big_endian = false;
  bool double_precision = false;
  bool long_ids = false;
  bool mass_table = false;  // all masses equal: put them in the header's MassTable
};

// Throws std::invalid_argument when `p` cannot be written with `options`: a block over the
// 4 GiB a Fortran record holds, an id >= 2^31 with 32-bit ids, a value beyond float32's range
// (or a mass that rounds to 0) in float32 blocks.
void require_gadget_writable(const ParticleSet& p, const GadgetWriteOptions& options);

// Writes `p` as type-1 particles (atomically). For initial conditions read by Gadget, GIZMO
// and hoshi itself, and for tests of the reader.
void write_gadget_binary(const std::string& path, const ParticleSet& p, double time,
                         const GadgetWriteOptions& options = {});
// The same bytes in memory.
std::string gadget_binary_bytes(const ParticleSet& p, double time,
                                const GadgetWriteOptions& options);

// True when the file starts with a Gadget record marker (256, or 8 followed by "HEAD").
bool looks_like_gadget_binary(const unsigned char* data, std::size_t size);

}  // namespace hoshi::io
