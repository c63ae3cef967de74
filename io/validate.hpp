// Checks applied to every particle set a reader returns, and the one-line error format of
// the readers: "FILE: field F: value V (why)".
#pragma once

#include <initializer_list>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/particle_set.hpp"

namespace hoshi::io {

// A value read from a file as an error message shows it: control bytes (a NUL cut the message
// there) as \xNN, and beyond `max` bytes cut, with its length ("'1234...' (10000000 bytes)":
// a field of 1e7 digits made a 10 MB "one-line" error). A value in single quotes keeps them.
std::string shown_value(std::string_view text, std::size_t max = 64);

// Throws std::invalid_argument "FILE: field FIELD: value VALUE (WHY)", VALUE as shown_value
// shows it.
template <class V>
[[noreturn]] void throw_bad_field(const std::string& file, const std::string& field, const V& value,
                                  const std::string& why) {
  std::ostringstream v;
  v << value;
  std::ostringstream s;
  s << file << ": field " << field << ": value " << shown_value(v.str()) << " (" << why << ")";
  throw std::invalid_argument(s.str());
}

// An input file's path must name a regular file: throws "FILE: is a directory, not a file" for
// a directory and "FILE: field file: value missing (WHY)" for anything else ("no such file"
// by default).
void require_input_file(const std::string& path, const std::string& why = "no such file");

// For a missing NAME.EXT beside NAME.0.EXT, the first member of a multi-file set (Gadget's
// snapshot.0.hdf5, ...): "NAME.0.EXT is there: a multi-file set is read from any of its
// files"; otherwise "".
std::string multi_file_member(const std::string& path);

// The first pair of particles (in id order) that share an id, as (earlier index, later index);
// nullopt when every id is unique.
std::optional<std::pair<std::size_t, std::size_t>> first_shared_id(const ParticleSet& p);

// Two particles with the same id: throws naming the id and both indices.
void require_unique_ids(const ParticleSet& p, const std::string& file);

// Where particles [begin, end) of a set came from in a file, for value errors that name the
// file's own dataset or block (PartType1/Masses, MASS) and row instead of hoshi's field name.
struct FileColumns {
  std::string position, velocity, mass;  // "PartType1/Coordinates", ...; "POS", ...
  std::size_t row0 = 0;                  // the position and velocity row of particle `begin`
  // The mass row of particle `begin`; nullopt: one value for all (a mass table entry, whose
  // name is `mass`).
  std::optional<std::size_t> mass_row0 = 0;
};

// Finite positions, velocities and masses >= 0 over particles [begin, end): throws
// "FILE: field PartType1/Coordinates[3, 1]: value nan (particle id 3: must be finite)".
void require_valid_rows(const ParticleSet& p, std::size_t begin, std::size_t end,
                        const std::string& file, const FileColumns& columns);

// Finite positions, velocities and masses, masses >= 0, total mass > 0 and unique ids.
void validate_loaded(const ParticleSet& p, const std::string& file);

// A float32 writer's field, one column (mass) or three (x, y, z): values v[i] * scale, written
// as float, must stay finite; where `positive` (masses) a value > 0 must not round to 0
// either. Throws "FILE: field FIELD[i, c]: value V (particle id ID: beyond float32's range of
// +-3.4e38; ADVICE)" (FIELD[i] for one column), or "(... a mass that rounds to 0 in float32;
// ...)": the writers wrote inf or 0, and the file could not be read back.
void require_float32_field(const ParticleSet& p,
                           std::initializer_list<const std::vector<double>*> columns, double scale,
                           const std::string& file, const std::string& field, bool positive,
                           const std::string& advice);

}  // namespace hoshi::io
