// One entry point for the snapshot formats: detection from content (then extension), and
// reading/writing with the time, units and parameters each format can carry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/particle_set.hpp"
#include "io/hdf5_snapshot.hpp"
#include "io/parameters.hpp"
#include "io/units.hpp"

namespace hoshi::io {

enum class SnapshotFormat { csv, hdf5, tipsy, gadget };

std::string to_string(SnapshotFormat f);
// "csv", "hdf5", "tipsy", "gadget"; throws std::invalid_argument naming the value.
SnapshotFormat parse_snapshot_format(const std::string& name);

// From the extension alone: .csv; .hdf5 .h5 .hdf; .tipsy .std .bin; .gadget .g1 .g2 .dat
// (and a trailing .K of a multi-file member is ignored). nullopt when unknown.
std::optional<SnapshotFormat> format_from_extension(const std::string& path);

// From the content (HDF5 signature, tipsy header consistent with the file size, Gadget
// record markers), then the extension; nullopt when neither tells.
std::optional<SnapshotFormat> detect_snapshot_format(const std::string& path);

struct LoadedSnapshot {
  ParticleSet particles;
  double time = 0;
  // The file's units (HDF5: /Units; tipsy: G = 1 units from its units file; Gadget binary and CSV
  // carry none: the code's, henon).
  UnitSystem units;
  // The file declared its units (else `units` is henon by default, and the commands take the
  // file to be in their run's units: Gadget binary, CSV, HDF5 without /Units, tipsy without
  // a units file, io::tipsy_units_file).
  bool units_known = false;
  ParamList parameters;
  // A Gadget-4 or AREPO run's softening (gadget_softening), for a file that is not hoshi's.
  std::optional<GadgetSoftening> gadget_softening;
  SnapshotFormat format = SnapshotFormat::hdf5;
  std::string note;  // what was skipped (gas), or empty
};

// Reads an HDF5, tipsy, Gadget binary or CSV snapshot. Throws
// std::invalid_argument "FILE: field F: value V (why)" for bad input, also when the format
// cannot be recognised.
LoadedSnapshot load_snapshot(const std::string& path);

// The one softening a Gadget-4 or AREPO run gave the particle types a file holds, from its
// /Parameters: type t's class c = SofteningClassOfPartType<t> (AREPO: SofteningTypeOfPartType<t>),
// its softening SofteningComovingClass<c> (SofteningComovingType<c>), in a run with
// ComovingIntegrationOn limited to SofteningMaxPhysClass<c> / a with a = `time`, the scale factor
// (Gadget-4's rule, in comoving units: the positions' units). Gadget's forces use its cubic spline
// kernel, with this Plummer-equivalent length (hoshi's --kernel spline). `loaded`: particles per
// type. nullopt when the file names no softening class (not such a run's file); otherwise `eps`
// is the softening where every loaded type has the same one, and `text` says where it came from
// ("Gadget-4's SofteningComovingClass1 for PartType1 and PartType2") or why none was taken
// ("PartType1 0.044, PartType2 0.1": a softening per type, and hoshi takes one for all;
// io::GadgetSoftening, io/parameters.hpp). A value that is not a number >= 0 (a class that is
// not an integer 0..63) gives no eps and `error`, "PATH: field F: value V (why)", which the
// commands raise only where they would take the softening (not with --softening).
std::optional<GadgetSoftening> gadget_softening(const ParamList& params,
                                                const std::vector<std::uint64_t>& loaded,
                                                double time, const std::string& path);

// The gravitational constant the particles were made with: the run's G as hoshi records it
// (/Parameters GravityConstantInternal or G), else that of the file's units (HDF5 /Units;
// tipsy files are in G = 1 units), else `fallback` (a file without units: Gadget binary, CSV).
double snapshot_G(const LoadedSnapshot& s, double fallback = 1.0);

// What a file of `format` written from `info` cannot record, as advice on reading it back in the
// same system: Gadget binary and CSV carry no units or G, so a reader takes them in its own
// run's units with their G. Returns e.g. "read it with --units galaxy", "read it with -G 2",
// "read it with --units galaxy -G 2"; for a custom unit system (neither henon nor galaxy),
// which no option names, its scalings and "write HDF5 to keep them"; "" when nothing is lost
// (HDF5, tipsy; henon units with G = 1; units unknown and no G).
std::string unrecorded_units(SnapshotFormat format, const SnapshotInfo& info);

// An HDF5 file written from a run whose G is not its unit system's (-G): hoshi reads the G
// from /Parameters/GravityConstantInternal, but yt and pynbody take masses from /Units alone,
// which imply the unit system's G. Returns that advice ("its /Units imply G = 1, this run's
// G = 2 is in /Parameters/GravityConstantInternal: ..."), or "" when there is nothing to say
// (other formats, units unknown, G that of the units).
std::string units_imply_another_G(SnapshotFormat format, const SnapshotInfo& info);

// Choices of the formats that have them. Gadget binary: by default float32 positions,
// velocities and masses and 32-bit ids, what Gadget-2, Gadget-4, GIZMO and AREPO read as
// initial conditions unless built with INPUT_IN_DOUBLEPRECISION and LONGIDS (IDS_64BIT);
// hoshi's reader takes every variant from the record lengths.
struct WriteOptions {
  bool gadget_double = false;    // --gadget-precision double: float64 positions, velocities, masses
  bool gadget_long_ids = false;  // --gadget-ids 64: uint64 ids (else an id >= 2^31 is an error)
  std::string tipsy_units_file;  // tipsy: the units file (write_tipsy; empty: PATH.param)
};

// Writes in `format` (atomically). tipsy converts to G = 1 units (see io/tipsy.hpp).
// Gadget binary (format 2; format 1 for .g1; `options`) and CSV carry no units or parameters.
void save_snapshot(const std::string& path, SnapshotFormat format, const ParticleSet& p,
                   const SnapshotInfo& info, const WriteOptions& options = {});
// Throws the error save_snapshot would throw for particles it cannot write in `format` with
// `options` (Gadget binary: an id >= 2^31 with 32-bit ids, a block over 4 GiB; tipsy: over
// 2^31 - 1 particles): a run checks before it starts, not at its first snapshot.
void require_writable(SnapshotFormat format, const ParticleSet& p,
                      const WriteOptions& options = {});

}  // namespace hoshi::io
