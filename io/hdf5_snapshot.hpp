// HDF5 snapshots in the Gadget-4 layout (DESIGN.md decision 8), readable unchanged by yt,
// pynbody, h5py and the IC readers of Gadget, GIZMO and SWIFT.
//
//   /Header      NumPart_ThisFile (int64[6]), NumPart_Total and NumPart_Total_HighWord
//                (uint32[6]), MassTable (double[6]), Time, Redshift, BoxSize,
//                NumFilesPerSnapshot, Omega0 = 0, OmegaLambda = 0, HubbleParam = 1, Flag_*,
//                Time_GYR (physical units only)
//   /Units       UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s, UnitTime_in_s
//   /Parameters  every effective run parameter (numbers or fixed-length strings) plus the
//                cosmology and time attributes Gadget-4 readers look for there
//   /PartType1   Coordinates, Velocities (double[N][3]), Masses (double[N]), ParticleIDs
//                (uint64[N]), Potential (double[N]), Acceleration (double[N][3]); each with
//                a_scaling, h_scaling, length_scaling, mass_scaling, velocity_scaling, to_cgs
//
// hoshi's particles are all collisionless and written as PartType1.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/particle_set.hpp"
#include "io/parameters.hpp"
#include "io/units.hpp"

namespace hoshi::io {

struct SnapshotInfo {
  double time = 0;      // simulated time, code units
  double redshift = 0;  // always 0 for hoshi's (non-cosmological) runs
  double box_size = 0;  // 0: not periodic
  double omega0 = 0;    // read: > 0 for a cosmological run's snapshot (Header or Parameters)
  UnitSystem units;     // written into /Units
  // false: the particles came from a file without units (Gadget binary, CSV, an HDF5 or
  // tipsy file without them): no /Units, no unit parameters, no physical time are written, so
  // that a reader takes the file in its own run's units instead of in `units` (henon).
  bool units_known = true;
  double G = 0;          // the run's gravitational constant in these units (0: units.G())
  ParamList parameters;  // written into /Parameters
  ParamList state;       // run state of a checkpoint, written into /RunState when not empty
  // read (hoshi ic, bench, accuracy): a Gadget-4 or AREPO file's softening (io::LoadedSnapshot)
  std::optional<GadgetSoftening> gadget_softening;
};

struct SnapshotData {
  ParticleSet particles;  // the collisionless particles (types 1..5, in type order)
  SnapshotInfo info;
  // Per particle type (6 entries, or as many as the file has: SWIFT writes 7).
  std::vector<std::uint64_t> loaded = std::vector<std::uint64_t>(6, 0);   // loaded
  std::vector<std::uint64_t> skipped = std::vector<std::uint64_t>(6, 0);  // skipped (gas, type 0)
  // Types whose Masses dataset (used) disagrees with a nonzero MassTable entry (Gadget-2's
  // binary reader would have taken the table): "PartType2 (MassTable[2] = 0.5)".
  std::vector<std::string> mass_table_ignored;
  // Types without a ParticleIDs dataset (a hand-made file), whose particles get ids in load
  // order (file and type order): 0, 1, ... when no type has ParticleIDs, else counting on from
  // the largest stored id + 1 (assigned_from), so that the two never collide: "PartType1".
  std::vector<std::string> ids_assigned;
  std::uint64_t assigned_from = 0;
  // The loaded set's ranges [begin, end) whose ids were assigned (for the renumbering above).
  std::vector<std::pair<std::size_t, std::size_t>> assigned_ranges;
};

// Writes `p` to `path` atomically (temporary file + rename). Throws std::runtime_error when
// the file cannot be written.
void write_hdf5_snapshot(const std::string& path, const ParticleSet& p, const SnapshotInfo& info);

// Reads a Gadget-layout HDF5 file (hoshi, Gadget-2/3/4, GIZMO, AREPO, SWIFT; multi-file sets
// NAME.0.hdf5, NAME.1.hdf5, ... when given any one of them). Types 1 and up (1..5; SWIFT's
// 7-type files also 6, neutrinos) are loaded; gas
// (type 0) is skipped and counted in `skipped`. Masses come from the Masses dataset or the
// MassTable. Bad input throws std::invalid_argument "FILE: field F: value V (why)".
// Accelerations and potentials are read when present.
SnapshotData read_hdf5_snapshot(const std::string& path);

// True when the file starts with the HDF5 signature.
bool is_hdf5_file(const std::string& path);

// The /Header attribute Code of an HDF5 file ("hoshi" for hoshi's snapshots and checkpoints);
// empty when the file, the group or the attribute is missing or unreadable.
std::string hdf5_code(const std::string& path);

}  // namespace hoshi::io
