// tipsy binary snapshots (ChaNGa, PKDGRAV, Gasoline, pynbody).
//
// Standard layout, big-endian (XDR): a 28-byte header {double time; int nbodies, ndim, nsph,
// ndark, nstar} padded to 32 bytes, then nsph gas records (12 floats: mass, pos[3], vel[3],
// rho, temp, hsmooth, metals, phi), ndark dark records (9 floats: mass, pos[3], vel[3], eps,
// phi) and nstar star records (11 floats: mass, pos[3], vel[3], metals, tform, eps, phi).
// Standard tipsy has no particle ids: particles are numbered 0, 1, ... in file order.
//
// Bonsai's native variant is little-endian; its header's padding word is a version, and with
// version 2 the last 8 bytes of each dark and star record (eps, phi) hold a 64-bit id. The
// byte order is detected from ndim == 3; little-endian files with another version are read
// with the standard record layout.
//
// Units: tipsy files use G = 1 with the length and mass units in a companion parameter file
// (dKpcUnit, dMsolUnit). write_tipsy converts to such G = 1 units (positions and masses keep
// their unit, velocities scale by 1/sqrt(G), times by sqrt(G)) and writes PATH.param so that
// pynbody attaches physical units.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/particle_set.hpp"
#include "io/units.hpp"

namespace hoshi::io {

struct TipsyData {
  ParticleSet particles;     // dark then star particles
  double time = 0;           // header time, in the file's (G = 1) units
  UnitSystem units;          // from PATH.param when present, else Henon
  bool units_known = false;  // PATH.param gave them
  bool big_endian = true;
  bool bonsai_ids = false;        // Bonsai version-2 64-bit ids
  std::uint64_t skipped_gas = 0;  // gas particles reported and skipped
  std::uint64_t n_dark = 0, n_star = 0;
  std::string units_note;  // a units file that names neither unit: said, not taken
};

// Parses a tipsy file held in memory (`name` is used in messages). Throws
// std::invalid_argument "NAME: field F: value V (why)" on truncated or inconsistent data.
TipsyData parse_tipsy(const unsigned char* data, std::size_t size, const std::string& name);

// Reads and validates (finite, masses >= 0, total mass > 0, unique ids) a tipsy file; its
// units (dKpcUnit, dMsolUnit: both, finite and > 0, or neither; std::invalid_argument naming
// the units file otherwise) from tipsy_units_file(path) when there is one.
TipsyData read_tipsy(const std::string& path);

// The units file of a run's tipsy snapshots, one for all in its output directory (yt refuses
// a directory with more than one *.param; a run wrote one per snapshot).
inline constexpr const char* kTipsyRunUnitsName = "snapshot.param";

// The units file of a tipsy file: PATH.param, else tipsy_param_path(path), else, for a run's
// snapshot (snapshot_NNN.tipsy, or a symbolic link to one), kTipsyRunUnitsName in its
// directory. Empty when there is none.
std::string tipsy_units_file(const std::string& path);

// Where write_tipsy puts the units file of `path` (unless given a shared one, a run's
// snapshot.param): beside the file the particles go to, TARGET.param for a symbolic link
// (output_target), else PATH.param. tipsy_units_file takes PATH.param, then this one.
std::string tipsy_param_path(const std::string& path);

// Writes a standard big-endian tipsy file, all particles as dark matter (eps = `eps`, phi =
// potential), converted from `units` to G = 1 units, plus PATH.param; both atomically.
// `time` is in `units`; G: the run's gravitational constant in `units` (0: units.G(); a run
// with -G other than its unit system's). Without `with_param` (particles whose units are not
// known) no PATH.param is written, and one already there (the replaced file's) is removed;
// with units through a symbolic link, a PATH.param beside the link is removed (the units go
// beside the target, and a reader takes PATH.param first). `units_file`, when given, is
// written instead of PATH.param (a run's OUT/snapshot.param for all its snapshots; yt
// refuses a directory with more than one *.param), and PATH.param is removed; not for a
// `path` that is a symbolic link, whose units go beside its target as without it.
// Throws std::invalid_argument before writing when a value leaves float32's range.
void write_tipsy(const std::string& path, const ParticleSet& p, double time,
                 const UnitSystem& units, double eps = 0.0, double G = 0.0, bool with_param = true,
                 const std::string& units_file = "");

// True when the first 32 bytes (`header`) look like a tipsy header in either byte order and
// the record sizes match `file_size`.
bool looks_like_tipsy(const unsigned char* header, std::size_t header_size,
                      std::uint64_t file_size);

}  // namespace hoshi::io
