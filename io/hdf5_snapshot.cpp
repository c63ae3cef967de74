#include "io/hdf5_snapshot.hpp"

#include <hdf5.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <regex>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/number_text.hpp"
#include "io/atomic_file.hpp"
#include "io/validate.hpp"

namespace hoshi::io {

namespace {

constexpr hssize_t kMaxTypes = 16;

// ---- RAII handles ------------------------------------------------------------------------

class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  ~Handle() {
    if (id_ >= 0 && close_) close_(id_);
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// Silences the HDF5 error stack printer for the lifetime of the object: hoshi reports its
// own one-line errors.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// While a file is read: a crash of the HDF5 library (a segmentation fault or bus error) ends the
// process with one line naming the file and exit 2, as any other bad input. HDF5 1.10.8 crashed
// on a file with four bytes of an attribute message changed (an audit's fuzzing: exit 139, no
// word): its clean-up of a half-built attribute table closes entries it never set, in
// H5Aiterate2 and H5Aget_name_by_idx alike, which no call of ours can avoid. Only write(2) and
// _exit in the handler (async-signal-safe); the message is made before the reading starts.
// Outputs are written through temporaries and renamed, so none is left half-written. Not
// reentrant: the reads run on one thread, and an inner guard restores the outer one.
char g_crash_message[1024];
std::size_t g_crash_length = 0;

extern "C" void on_hdf5_crash(int) {
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, g_crash_message, g_crash_length);
  ::_exit(2);
}

class Hdf5CrashGuard {
 public:
  explicit Hdf5CrashGuard(const std::string& path) {
    std::memcpy(saved_, g_crash_message, sizeof saved_);
    saved_length_ = g_crash_length;
    const std::string text = "hoshi: error: " + path.substr(0, 600) +
                             ": the HDF5 library crashed reading it (the file is corrupt)\n";
    g_crash_length = std::min(text.size(), sizeof g_crash_message);
    std::memcpy(g_crash_message, text.data(), g_crash_length);
    struct sigaction act {};
    act.sa_handler = on_hdf5_crash;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESETHAND;
    for (int k = 0; k < 2; ++k) sigaction(kSignals[k], &act, &old_[k]);
  }
  ~Hdf5CrashGuard() {
    for (int k = 0; k < 2; ++k) sigaction(kSignals[k], &old_[k], nullptr);
    std::memcpy(g_crash_message, saved_, sizeof saved_);
    g_crash_length = saved_length_;
  }
  Hdf5CrashGuard(const Hdf5CrashGuard&) = delete;
  Hdf5CrashGuard& operator=(const Hdf5CrashGuard&) = delete;

 private:
  static constexpr int kSignals[2] = {SIGSEGV, SIGBUS};
  struct sigaction old_[2]{};
  char saved_[sizeof g_crash_message];
  std::size_t saved_length_ = 0;
};

void check(herr_t rc, const std::string& what) {
  if (rc < 0) throw std::runtime_error(what);
}

// ---- writing -----------------------------------------------------------------------------

void write_attr(hid_t loc, const char* name, hid_t mem_type, hid_t file_type, const void* data,
                hsize_t n, bool scalar, const std::string& file) {
  Handle space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle attr(H5Acreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) throw std::runtime_error(file + ": cannot create attribute " + name);
  check(H5Awrite(attr.get(), mem_type, data), file + ": cannot write attribute " + name);
}

void attr_double(hid_t loc, const char* name, double v, const std::string& file) {
  write_attr(loc, name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, &v, 1, true, file);
}
void attr_int(hid_t loc, const char* name, std::int32_t v, const std::string& file) {
  write_attr(loc, name, H5T_NATIVE_INT32, H5T_STD_I32LE, &v, 1, true, file);
}
void attr_int64(hid_t loc, const char* name, std::int64_t v, const std::string& file) {
  write_attr(loc, name, H5T_NATIVE_INT64, H5T_STD_I64LE, &v, 1, true, file);
}
// Fixed-length, null-terminated string (yt's format detection fails on variable-length ones).
void attr_string(hid_t loc, const char* name, const std::string& v, const std::string& file) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(v.size(), 1));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  std::string buf = v.empty() ? std::string(1, '\0') : v;
  write_attr(loc, name, type.get(), type.get(), buf.data(), 1, true, file);
}

// One parameter (integer, double or string) as an attribute of its HDF5 type.
void attr_param(hid_t loc, const char* name, const ParamValue& value, const std::string& file) {
  if (const auto* i = std::get_if<std::int64_t>(&value))
    attr_int64(loc, name, *i, file);
  else if (const auto* d = std::get_if<double>(&value))
    attr_double(loc, name, *d, file);
  else
    attr_string(loc, name, std::get<std::string>(value), file);
}

struct Scaling {
  double length, mass, velocity, to_cgs;
};

// Rows per hyperslab when writing or reading: bounds the temporary buffers (24 MB for 3
// doubles per row) however large the snapshot.
constexpr std::uint64_t kChunkRows = 1u << 20;

// Writes dataset `name` (n rows of cols.size() columns, column k from *cols[k]) through
// row-chunked hyperslabs, then Gadget-4's scaling attributes.
template <class T>
void write_columns(hid_t group, const char* name, hid_t mem_type, hid_t file_type, std::uint64_t n,
                   std::initializer_list<const std::vector<T>*> cols, const Scaling& s,
                   const std::string& file) {
  const hsize_t ncol = cols.size();
  const hsize_t dims[2] = {n, ncol};
  const int rank = ncol == 1 ? 1 : 2;
  Handle space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  // No modification times in the object headers: the same snapshot gives the same bytes.
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_obj_track_times(dcpl.get(), false);
  Handle dset(H5Dcreate2(group, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
              H5Dclose);
  if (!dset.valid()) throw std::runtime_error(file + ": cannot create dataset " + name);
  std::vector<T> buf;
  for (std::uint64_t r0 = 0; r0 < n; r0 += kChunkRows) {
    const hsize_t rows = std::min<std::uint64_t>(kChunkRows, n - r0);
    buf.resize(rows * ncol);
    hsize_t k = 0;
    for (const auto* c : cols) {
      for (hsize_t r = 0; r < rows; ++r) buf[r * ncol + k] = (*c)[r0 + r];
      ++k;
    }
    const hsize_t start[2] = {r0, 0}, count[2] = {rows, ncol};
    Handle mem(H5Screate_simple(rank, count, nullptr), H5Sclose);
    check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
          file + ": cannot select rows of " + name);
    check(H5Dwrite(dset.get(), mem_type, mem.get(), space.get(), H5P_DEFAULT, buf.data()),
          file + ": cannot write dataset " + name + " (disk full?)");
  }
  // Gadget-4's scaling attributes: value in cgs = value * to_cgs * a^a_scaling *
  // h^h_scaling; hoshi's runs are not cosmological, so a_scaling = h_scaling = 0.
  attr_double(dset.get(), "a_scaling", 0.0, file);
  attr_double(dset.get(), "h_scaling", 0.0, file);
  attr_double(dset.get(), "length_scaling", s.length, file);
  attr_double(dset.get(), "mass_scaling", s.mass, file);
  attr_double(dset.get(), "velocity_scaling", s.velocity, file);
  attr_double(dset.get(), "to_cgs", s.to_cgs, file);
}

void write_file(const std::string& tmp, const std::string& file, const ParticleSet& p,
                const SnapshotInfo& info) {
  QuietHdf5 quiet;
  Handle f(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) throw std::runtime_error(file + ": cannot create HDF5 file " + tmp);
  const UnitSystem& u = info.units;
  const auto n = static_cast<std::uint64_t>(p.size());
  const double time_gyr = info.time * u.time_s() / kGyrInS;

  {  // /Header
    Handle h(H5Gcreate2(f.get(), "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    std::int64_t this_file[6] = {0, static_cast<std::int64_t>(n), 0, 0, 0, 0};
    std::uint32_t total[6] = {0, static_cast<std::uint32_t>(n & 0xffffffffu), 0, 0, 0, 0};
    std::uint32_t high[6] = {0, static_cast<std::uint32_t>(n >> 32), 0, 0, 0, 0};
    double mass_table[6] = {0, 0, 0, 0, 0, 0};  // per-particle masses in /PartType1/Masses
    write_attr(h.get(), "NumPart_ThisFile", H5T_NATIVE_INT64, H5T_STD_I64LE, this_file, 6, false,
               file);
    write_attr(h.get(), "NumPart_Total", H5T_NATIVE_UINT32, H5T_STD_U32LE, total, 6, false, file);
    write_attr(h.get(), "NumPart_Total_HighWord", H5T_NATIVE_UINT32, H5T_STD_U32LE, high, 6, false,
               file);
    write_attr(h.get(), "MassTable", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, mass_table, 6, false, file);
    attr_double(h.get(), "Time", info.time, file);
    attr_double(h.get(), "Redshift", info.redshift, file);
    attr_double(h.get(), "BoxSize", info.box_size, file);
    attr_int(h.get(), "NumFilesPerSnapshot", 1, file);
    attr_double(h.get(), "Omega0", 0.0, file);
    attr_double(h.get(), "OmegaLambda", 0.0, file);
    attr_double(h.get(), "HubbleParam", 1.0, file);
    for (const char* flag : {"Flag_Sfr", "Flag_Cooling", "Flag_StellarAge", "Flag_Metals",
                             "Flag_Feedback", "Flag_Entropy_ICs", "Flag_IC_Info"})
      attr_int(h.get(), flag, 0, file);
    attr_int(h.get(), "Flag_DoublePrecision", 1, file);
    // In the time unit /Units implies (Henon units: 1 kpc / 1 km/s, as for the physical ones):
    // without it pynbody takes the age of an empty universe, 9.78 Gyr, for every snapshot.
    if (info.units_known) attr_double(h.get(), "Time_GYR", time_gyr, file);
    attr_string(h.get(), "Code", "hoshi", file);
    attr_string(h.get(), "hoshi_version", HOSHI_VERSION, file);
  }
  if (info.units_known) {  // /Units
    Handle g(H5Gcreate2(f.get(), "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    attr_double(g.get(), "UnitLength_in_cm", u.length_cm, file);
    attr_double(g.get(), "UnitMass_in_g", u.mass_g, file);
    attr_double(g.get(), "UnitVelocity_in_cm_per_s", u.velocity_cm_s, file);
    attr_double(g.get(), "UnitTime_in_s", u.time_s(), file);
    attr_double(g.get(), "UnitEnergy_in_cgs", u.mass_g * u.velocity_cm_s * u.velocity_cm_s, file);
    attr_double(g.get(), "UnitCurrent_in_cgs", 1.0, file);
    attr_double(g.get(), "UnitTemp_in_cgs", 1.0, file);
    // SWIFT's names: its IC reader opens each of these where /Units exists, and stops at the
    // first one missing (a hoshi file could not start a SWIFT run).
    attr_double(g.get(), "Unit length in cgs (U_L)", u.length_cm, file);
    attr_double(g.get(), "Unit mass in cgs (U_M)", u.mass_g, file);
    attr_double(g.get(), "Unit time in cgs (U_t)", u.time_s(), file);
    attr_double(g.get(), "Unit current in cgs (U_I)", 1.0, file);
    attr_double(g.get(), "Unit temperature in cgs (U_T)", 1.0, file);
  }
  {  // /Parameters: the run's parameters, then what Gadget-4 readers look up here
    Handle g(H5Gcreate2(f.get(), "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    bool has_units_name = false;
    for (const auto& [key, value] : info.parameters) {
      if (H5Aexists(g.get(), key.c_str()) > 0) continue;
      if (key == "units") has_units_name = true;
      attr_param(g.get(), key.c_str(), value, file);
    }
    if (!has_units_name && info.units_known) attr_string(g.get(), "units", u.name, file);
    auto put = [&](const char* key, double v) {
      if (H5Aexists(g.get(), key) <= 0) attr_double(g.get(), key, v, file);
    };
    put("Omega0", 0.0);
    put("OmegaLambda", 0.0);
    put("OmegaBaryon", 0.0);
    put("HubbleParam", 1.0);
    put("BoxSize", info.box_size);
    put("ComovingIntegrationOn", 0.0);
    if (info.units_known) {
      put("UnitLength_in_cm", u.length_cm);
      put("UnitMass_in_g", u.mass_g);
      put("UnitVelocity_in_cm_per_s", u.velocity_cm_s);
    }
    if (info.units_known || info.G > 0) put("GravityConstantInternal", info.G > 0 ? info.G : u.G());
    if (info.units_known) put("Time_GYR", time_gyr);
  }
  if (!info.state.empty()) {  // /RunState: what a checkpoint needs beyond the particles
    Handle g(H5Gcreate2(f.get(), "RunState", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    for (const auto& [key, value] : info.state) attr_param(g.get(), key.c_str(), value, file);
  }
  {  // /PartType1
    Handle g(H5Gcreate2(f.get(), "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    const double L = u.length_cm, V = u.velocity_cm_s, M = u.mass_g;
    const hid_t gd = g.get(), f64 = H5T_IEEE_F64LE, d = H5T_NATIVE_DOUBLE;
    write_columns<double>(gd, "Coordinates", d, f64, n, {&p.x, &p.y, &p.z}, {1, 0, 0, L}, file);
    write_columns<double>(gd, "Velocities", d, f64, n, {&p.vx, &p.vy, &p.vz}, {0, 0, 1, V}, file);
    write_columns<double>(gd, "Masses", d, f64, n, {&p.m}, {0, 1, 0, M}, file);
    write_columns<std::uint64_t>(gd, "ParticleIDs", H5T_NATIVE_UINT64, H5T_STD_U64LE, n, {&p.id},
                                 {0, 0, 0, 1}, file);
    write_columns<double>(gd, "Potential", d, f64, n, {&p.pot}, {0, 0, 2, V * V}, file);
    write_columns<double>(gd, "Acceleration", d, f64, n, {&p.ax, &p.ay, &p.az},
                          {-1, 0, 2, V * V / L}, file);
  }
  check(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), file + ": flush failed (disk full?)");
}

// ---- reading -----------------------------------------------------------------------------

// The attribute's values converted to double (any numeric type, any number of elements).
std::vector<double> read_attr_numbers(hid_t loc, const char* name, const std::string& file,
                                      const std::string& where) {
  Handle attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) throw_bad_field(file, where + "/" + name, "missing", "attribute not found");
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw_bad_field(file, where + "/" + name, "non-numeric", "expected a number");
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n <= 0 || n > 1024) throw_bad_field(file, where + "/" + name, n, "bad number of elements");
  std::vector<double> v(static_cast<std::size_t>(n));
  if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, v.data()) < 0)
    throw_bad_field(file, where + "/" + name, "unreadable", "cannot read attribute");
  return v;
}

// Per-type counts: 6 types (Gadget, GIZMO, AREPO) or 7 (SWIFT adds neutrinos); up to 16.
std::vector<std::uint64_t> read_attr_counts(hid_t loc, const char* name, const std::string& file) {
  Handle attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid())
    throw_bad_field(file, std::string("Header/") + name, "missing", "attribute not found");
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 6 || n > kMaxTypes)
    throw_bad_field(file, std::string("Header/") + name, n,
                    "expected 6 to 16 entries (one per type)");
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    throw_bad_field(file, std::string("Header/") + name, "non-integer", "expected integers");
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  if (H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()) < 0)
    throw_bad_field(file, std::string("Header/") + name, "unreadable", "cannot read attribute");
  std::vector<std::uint64_t> out(v.size());
  for (std::size_t t = 0; t < v.size(); ++t) {
    if (v[t] < 0)
      throw_bad_field(file, std::string("Header/") + name + "[" + std::to_string(t) + "]", v[t],
                      "negative particle count");
    out[t] = static_cast<std::uint64_t>(v[t]);
  }
  return out;
}

bool has_attr(hid_t loc, const char* name) {
  return H5Aexists(loc, name) > 0;
}

double attr_or(hid_t loc, const char* name, double fallback, const std::string& file,
               const std::string& where) {
  if (!has_attr(loc, name)) return fallback;
  return read_attr_numbers(loc, name, file, where).front();
}

std::string read_attr_string(hid_t loc, const char* name) {
  Handle attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return {};
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) return {};
  if (H5Tis_variable_str(type.get()) > 0) {  // h5py's str, read as a C string (one of them)
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 1) return {};
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    char* text = nullptr;
    if (H5Tset_size(mem.get(), H5T_VARIABLE) < 0 ||
        H5Tset_cset(mem.get(), H5Tget_cset(type.get())) < 0 ||  // h5py's are UTF-8
        H5Aread(attr.get(), mem.get(), &text) < 0)
      return {};
    // As a fixed-length one: longer than 4096 characters is no parameter hoshi reads.
    const std::size_t length = text ? strnlen(text, 4097) : 0;
    std::string v = length <= 4096 ? std::string(text ? text : "", length) : std::string();
    H5free_memory(text);
    return v;
  }
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > 4096) return {};
  std::string buf(size, '\0');
  if (H5Aread(attr.get(), type.get(), buf.data()) < 0) return {};
  return std::string(buf.c_str());
}

bool has_link(hid_t loc, const std::string& name) {
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;
}

// Checks that dataset `field` (`space`) has n rows of ncol columns (the header count); returns
// its rank.
int require_shape(hid_t space, const std::string& field, hsize_t ncol, std::uint64_t n,
                  const std::string& file) {
  const int rank = H5Sget_simple_extent_ndims(space);
  hsize_t dims[2] = {0, 0};
  if (rank < 1 || rank > 2 || H5Sget_simple_extent_dims(space, dims, nullptr) < 0)
    throw_bad_field(file, field, "rank " + std::to_string(rank), "expected a 1-d or 2-d array");
  const hsize_t cols = rank == 2 ? dims[1] : 1;
  if (cols != ncol)
    throw_bad_field(file, field, std::to_string(dims[0]) + "x" + std::to_string(cols),
                    "expected " + std::to_string(ncol) + " column(s)");
  if (dims[0] != n)
    throw_bad_field(file, field, dims[0],
                    "length differs from the header count NumPart_ThisFile = " + std::to_string(n));
  return rank;
}

// The shape check of read_columns alone, for a dataset of `group` (where present), before the
// particles' arrays are sized from the header: a 6 KB file whose header claimed 3e8 particles
// of four stored rows took ~30 GB before read_columns found the mismatch.
void require_dataset_shape(hid_t group, const std::string& gname, const std::string& name,
                           hsize_t ncol, std::uint64_t n, const std::string& file) {
  if (!has_link(group, name)) return;
  Handle dset(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw_bad_field(file, gname + "/" + name, "missing", "dataset not found");
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  require_shape(space.get(), gname + "/" + name, ncol, n, file);
}

// Why a dataset's read failed: a compression filter this HDF5 library lacks (h5py's lzf,
// blosc, bitshuffle: it said "truncated or corrupt file?"), else damage.
std::string unreadable_why(hid_t dset) {
  Handle plist(H5Dget_create_plist(dset), H5Pclose);
  const int nf = plist.get() >= 0 ? H5Pget_nfilters(plist.get()) : 0;
  for (int i = 0; i < nf; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nelem = 0;
    char name[256] = {0};
    const H5Z_filter_t id = H5Pget_filter2(plist.get(), static_cast<unsigned>(i), &flags, &nelem,
                                           nullptr, sizeof name, name, &config);
    if (id >= 0 && H5Zfilter_avail(id) <= 0)
      return "compressed with HDF5 filter " + std::to_string(id) +
             (name[0] ? " (" + std::string(name) + ")" : std::string()) +
             ", which this HDF5 library does not have; rewrite it uncompressed or with gzip";
  }
  return "cannot read data (truncated or corrupt file?)";
}

// Reads dataset `name` of `group` (n rows of outs.size() columns; any numeric type converted
// to mem_type) in row chunks into outs[k][base + row], checking the shape against the header
// count `n` first.
template <class T>
void read_columns(hid_t group, const std::string& gname, const std::string& name, hid_t mem_type,
                  std::uint64_t n, std::initializer_list<std::vector<T>*> outs, std::size_t base,
                  const std::string& file) {
  const std::string field = gname + "/" + name;
  const hsize_t ncol = outs.size();
  Handle dset(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw_bad_field(file, field, "missing", "dataset not found");
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  const int rank = require_shape(space.get(), field, ncol, n, file);
  Handle type(H5Dget_type(dset.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw_bad_field(file, field, "non-numeric type", "expected numbers");
  // Ids stored as signed integers or floats: HDF5's conversion to uint64 clamps a negative
  // one to 0 and truncates a fraction (reported as a duplicate id 0, or not at all). Read them
  // as they are and refuse what is not a non-negative integer.
  if constexpr (std::is_same_v<T, std::uint64_t>) {
    const bool is_signed = cls == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_2;
    if (is_signed || cls == H5T_FLOAT) {
      std::vector<std::int64_t> ints(is_signed ? n : 0);
      std::vector<double> reals(is_signed ? 0 : n);
      if (is_signed)
        read_columns<std::int64_t>(group, gname, name, H5T_NATIVE_INT64, n, {&ints}, 0, file);
      else
        read_columns<double>(group, gname, name, H5T_NATIVE_DOUBLE, n, {&reals}, 0, file);
      auto* out = *outs.begin();
      for (std::uint64_t r = 0; r < n; ++r) {
        if (is_signed && ints[r] < 0) throw_bad_field(file, field, ints[r], "negative particle id");
        if (!is_signed && !(reals[r] >= 0 && reals[r] < 0x1p64 && reals[r] == std::floor(reals[r])))
          throw_bad_field(file, field, reals[r], "not a non-negative integer particle id");
        (*out)[base + r] =
            is_signed ? static_cast<std::uint64_t>(ints[r]) : static_cast<std::uint64_t>(reals[r]);
      }
      return;
    }
  }
  std::vector<T> buf;
  for (std::uint64_t r0 = 0; r0 < n; r0 += kChunkRows) {
    const hsize_t rows = std::min<std::uint64_t>(kChunkRows, n - r0);
    buf.resize(rows * ncol);
    const hsize_t start[2] = {r0, 0}, count[2] = {rows, ncol};
    Handle mem(H5Screate_simple(rank, count, nullptr), H5Sclose);
    if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(dset.get(), mem_type, mem.get(), space.get(), H5P_DEFAULT, buf.data()) < 0)
      throw_bad_field(file, field, "unreadable", unreadable_why(dset.get()));
    hsize_t k = 0;
    for (auto* out : outs) {
      for (hsize_t r = 0; r < rows; ++r) (*out)[base + r0 + r] = buf[r * ncol + k];
      ++k;
    }
  }
}

// The file's units; nullopt when it has none (Gadget-2's HDF5 writer, many IC generators).
std::optional<UnitSystem> read_units(hid_t f, const std::string& file) {
  // hoshi and Gadget-2/3 keep units in /Units, Gadget-4 in /Parameters, SWIFT in /Units with
  // its own names (velocity from length / time), AREPO also in /Header, GIZMO in /Header with
  // its own names.
  for (const char* gname : {"Units", "Parameters", "Header"}) {
    if (!has_link(f, gname)) continue;
    Handle g(H5Gopen2(f, gname, H5P_DEFAULT), H5Gclose);
    // A unit must be positive and finite: 0 collapsed every position, a negative one flipped
    // the masses' sign (reported as a bad mass, not as the bad unit).
    const auto unit = [&](const char* key) {
      const double v = attr_or(g.get(), key, 0, file, gname);
      if (!(v > 0 && std::isfinite(v)))
        throw_bad_field(file, std::string(gname) + "/" + key, v,
                        "a unit must be positive and finite");
      return v;
    };
    // A /Units group with only some of Gadget's three scalings was taken as no units at all
    // (the file then read in the run's units, whatever the one scaling said).
    if (std::string(gname) == "Units") {
      const char* keys[] = {"UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s"};
      int present = 0;
      for (const char* key : keys) present += has_attr(g.get(), key) ? 1 : 0;
      if (present > 0 && present < 3)
        for (const char* key : keys)
          if (!has_attr(g.get(), key))
            throw_bad_field(file, std::string("Units/") + key, "missing",
                            "a /Units group needs UnitLength_in_cm, UnitMass_in_g and "
                            "UnitVelocity_in_cm_per_s, or none of them");
    }
    if (has_attr(g.get(), "UnitLength_in_cm") && has_attr(g.get(), "UnitMass_in_g") &&
        has_attr(g.get(), "UnitVelocity_in_cm_per_s")) {
      // The Header's copy (AREPO) is taken only when it is usable: other writers may leave
      // placeholders there, which must not turn a readable file into an error.
      if (std::string(gname) == "Header")
        for (const char* key : {"UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s"})
          if (const double v = attr_or(g.get(), key, 0, file, gname); !(v > 0 && std::isfinite(v)))
            return std::nullopt;
      return units_from_cgs(unit("UnitLength_in_cm"), unit("UnitMass_in_g"),
                            unit("UnitVelocity_in_cm_per_s"));
    }
    // GIZMO: /Header, its own spelling (and G as Gravitational_Constant_In_Code_Inits).
    if (has_attr(g.get(), "UnitLength_In_CGS") && has_attr(g.get(), "UnitMass_In_CGS") &&
        has_attr(g.get(), "UnitVelocity_In_CGS"))
      return units_from_cgs(unit("UnitLength_In_CGS"), unit("UnitMass_In_CGS"),
                            unit("UnitVelocity_In_CGS"));
    if (has_attr(g.get(), "Unit length in cgs (U_L)") &&
        has_attr(g.get(), "Unit mass in cgs (U_M)") &&
        has_attr(g.get(), "Unit time in cgs (U_t)")) {
      const double L = unit("Unit length in cgs (U_L)");
      const double t = unit("Unit time in cgs (U_t)");
      return units_from_cgs(L, unit("Unit mass in cgs (U_M)"), L / t);
    }
  }
  return std::nullopt;
}

ParamList read_parameters(hid_t f, const char* group, const std::string& file) {
  ParamList out;
  if (!has_link(f, group)) return out;
  Handle g(H5Gopen2(f, group, H5P_DEFAULT), H5Gclose);
  std::vector<std::string> names;
  hsize_t idx = 0;
  // A damaged attribute table fails the iteration: an error (its attributes were skipped, and
  // the file read without them). HDF5 1.10.8 may also crash on one (Hdf5CrashGuard).
  const herr_t status = H5Aiterate2(
      g.get(), H5_INDEX_NAME, H5_ITER_INC, &idx,
      [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
        auto* v = static_cast<std::vector<std::string>*>(data);
        v->emplace_back(name);
        return v->size() < 4096 ? 0 : 1;
      },
      &names);
  if (status < 0)
    throw_bad_field(
        file, std::string("/") + group, "unreadable",
        "its attribute table is corrupt (" + std::to_string(names.size()) + " attributes read)");
  for (const std::string& name_s : names) {
    Handle attr(H5Aopen(g.get(), name_s.c_str(), H5P_DEFAULT), H5Aclose);
    if (!attr.valid()) continue;
    const char* name = name_s.c_str();
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.get()) != 1) continue;
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls == H5T_INTEGER) {
      std::int64_t v = 0;
      if (H5Aread(attr.get(), H5T_NATIVE_INT64, &v) >= 0) out.emplace_back(name, v);
    } else if (cls == H5T_FLOAT) {
      double v = 0;
      if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v) >= 0) out.emplace_back(name, v);
    } else if (cls == H5T_STRING) {
      out.emplace_back(name, read_attr_string(g.get(), name));
    }
  }
  return out;
}

// Reads one file of a snapshot into `out`; returns NumFilesPerSnapshot.
std::uint64_t read_one_file(const std::string& file, SnapshotData& out, bool first) {
  const Hdf5CrashGuard crash(file);  // a member of a set named as itself
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid())
    throw_bad_field(file, "file", "unreadable", "not an HDF5 file, or truncated or corrupt");
  if (!has_link(f.get(), "Header"))
    throw_bad_field(file, "Header", "missing", "not a Gadget-layout snapshot: no /Header group");
  Handle h(H5Gopen2(f.get(), "Header", H5P_DEFAULT), H5Gclose);
  const auto counts = read_attr_counts(h.get(), "NumPart_ThisFile", file);
  const std::size_t ntypes = counts.size();
  std::vector<double> mass_table(ntypes, 0.0);
  if (has_attr(h.get(), "MassTable")) {
    mass_table = read_attr_numbers(h.get(), "MassTable", file, "Header");
    if (mass_table.size() != ntypes)
      throw_bad_field(file, "Header/MassTable", mass_table.size(),
                      "expected " + std::to_string(ntypes) + " entries like NumPart_ThisFile");
  }
  if (out.loaded.size() < ntypes) out.loaded.resize(ntypes), out.skipped.resize(ntypes);
  const double nfiles = attr_or(h.get(), "NumFilesPerSnapshot", 1, file, "Header");
  if (!(nfiles >= 1 && nfiles <= 1e6))
    throw_bad_field(file, "Header/NumFilesPerSnapshot", nfiles, "must be >= 1");
  if (nfiles == 1 && has_attr(h.get(), "NumPart_Total")) {
    const auto total = read_attr_counts(h.get(), "NumPart_Total", file);
    std::vector<std::uint64_t> high(ntypes, 0);
    if (has_attr(h.get(), "NumPart_Total_HighWord"))
      high = read_attr_counts(h.get(), "NumPart_Total_HighWord", file);
    if (total.size() != ntypes || high.size() != ntypes)
      throw_bad_field(
          file, "Header/NumPart_Total", total.size(),
          "entries differ in number from NumPart_ThisFile (" + std::to_string(ntypes) + ")");
    for (std::size_t t = 0; t < ntypes; ++t) {
      const std::uint64_t all = total[t] + (high[t] << 32);
      if (all != counts[t])
        throw_bad_field(file, "Header/NumPart_Total[" + std::to_string(t) + "]", all,
                        "differs from NumPart_ThisFile = " + std::to_string(counts[t]) +
                            " in a single-file snapshot");
    }
  }
  if (first) {
    out.info.time = attr_or(h.get(), "Time", 0, file, "Header");
    if (!std::isfinite(out.info.time))
      throw_bad_field(file, "Header/Time", out.info.time, "must be finite");
    out.info.redshift = attr_or(h.get(), "Redshift", 0, file, "Header");
    out.info.box_size = attr_or(h.get(), "BoxSize", 0, file, "Header");  // SWIFT: 3 entries
    out.info.omega0 = attr_or(h.get(), "Omega0", 0, file, "Header");
    const std::optional<UnitSystem> units = read_units(f.get(), file);
    out.info.units = units.value_or(units_henon());
    out.info.units_known = units.has_value();
    out.info.parameters = read_parameters(f.get(), "Parameters", file);
    if (const ParamValue* v = find_param(out.info.parameters, "Omega0"))  // Gadget-4's place
      if (const double* d = std::get_if<double>(v); d && *d > out.info.omega0) out.info.omega0 = *d;
    // GIZMO's cosmology and G are in /Header under its names, SWIFT's cosmology in /Cosmology.
    out.info.omega0 =
        std::max(out.info.omega0, attr_or(h.get(), "Omega_Matter", 0, file, "Header"));
    if (has_link(f.get(), "Cosmology")) {
      Handle c(H5Gopen2(f.get(), "Cosmology", H5P_DEFAULT), H5Gclose);
      if (attr_or(c.get(), "Cosmological run", 0, file, "Cosmology") > 0)
        out.info.omega0 =
            std::max(out.info.omega0, attr_or(c.get(), "Omega_m", 0, file, "Cosmology"));
    }
    if (!find_param(out.info.parameters, "GravityConstantInternal"))
      if (const double g =
              attr_or(h.get(), "Gravitational_Constant_In_Code_Inits", 0, file, "Header");
          g > 0 && std::isfinite(g))
        out.info.parameters.emplace_back("GravityConstantInternal", g);
    out.info.state = read_parameters(f.get(), "RunState", file);
  }
  for (std::size_t t = 0; t < ntypes; ++t) {
    const std::uint64_t n = counts[t];
    const std::string gname = "PartType" + std::to_string(t);
    if (t == 0) {  // gas: not collisionless, reported and skipped
      out.skipped[0] += n;
      continue;
    }
    if (n == 0) {
      // Particles the header does not count would be dropped without a word.
      if (has_link(f.get(), gname)) {
        Handle g(H5Gopen2(f.get(), gname.c_str(), H5P_DEFAULT), H5Gclose);
        if (has_link(g.get(), "Coordinates")) {  // read_columns checks its length against 0
          std::vector<double> none;
          read_columns<double>(g.get(), gname, "Coordinates", H5T_NATIVE_DOUBLE, 0,
                               {&none, &none, &none}, 0, file);
        }
      }
      continue;
    }
    if (!has_link(f.get(), gname))
      throw_bad_field(file, gname, "missing",
                      "group not found although NumPart_ThisFile[" + std::to_string(t) +
                          "] = " + std::to_string(n));
    Handle g(H5Gopen2(f.get(), gname.c_str(), H5P_DEFAULT), H5Gclose);
    if (!has_link(g.get(), "Coordinates"))
      throw_bad_field(file, gname + "/Coordinates", "missing", "dataset not found");
    for (const auto& [name, ncol] : {std::pair<const char*, hsize_t>{"Coordinates", 3},
                                     {"Velocities", 3},
                                     {"ParticleIDs", 1},
                                     {"Masses", 1},
                                     {"Potential", 1},
                                     {"Acceleration", 3}})
      require_dataset_shape(g.get(), gname, name, ncol, n, file);
    ParticleSet& p = out.particles;
    const std::size_t base = p.size();
    p.resize(base + n);  // zero accelerations and potentials unless the file has them
    const hid_t gd = g.get(), d = H5T_NATIVE_DOUBLE;
    read_columns<double>(gd, gname, "Coordinates", d, n, {&p.x, &p.y, &p.z}, base, file);
    read_columns<double>(gd, gname, "Velocities", d, n, {&p.vx, &p.vy, &p.vz}, base, file);
    if (has_link(gd, "ParticleIDs")) {
      read_columns<std::uint64_t>(gd, gname, "ParticleIDs", H5T_NATIVE_UINT64, n, {&p.id}, base,
                                  file);
    } else {  // a hand-made file (h5py): ids are the particles' places in the loaded set
      std::iota(p.id.begin() + base, p.id.end(), std::uint64_t{base});
      out.assigned_ranges.emplace_back(base, base + n);
      if (std::find(out.ids_assigned.begin(), out.ids_assigned.end(), gname) ==
          out.ids_assigned.end())
        out.ids_assigned.push_back(gname);
    }
    const bool has_masses = has_link(gd, "Masses");
    if (has_masses) {
      read_columns<double>(gd, gname, "Masses", d, n, {&p.m}, base, file);
      if (mass_table[t] > 0 && std::any_of(p.m.begin() + base, p.m.end(),
                                           [&](double m) { return m != mass_table[t]; })) {
        const std::string ignored =
            gname + " (MassTable[" + std::to_string(t) + "] = " + number_text(mass_table[t]) + ")";
        auto& list = out.mass_table_ignored;
        if (std::find(list.begin(), list.end(), ignored) == list.end())  // once for a set
          list.push_back(ignored);
      }
    } else if (mass_table[t] > 0)
      std::fill(p.m.begin() + base, p.m.end(), mass_table[t]);
    else if (mass_table[t] == 0)
      throw_bad_field(file, gname + "/Masses", "missing",
                      "no Masses dataset and MassTable[" + std::to_string(t) + "] = 0");
    else  // negative or NaN: the masses of every particle of this type
      throw_bad_field(file, "Header/MassTable[" + std::to_string(t) + "]",
                      number_text(mass_table[t]),
                      "the mass of every " + gname + " particle (no Masses dataset): must be > 0");
    require_valid_rows(
        p, base, base + n, file,
        {gname + "/Coordinates", gname + "/Velocities",
         has_masses ? gname + "/Masses" : "Header/MassTable[" + std::to_string(t) + "]", 0,
         has_masses ? std::optional<std::size_t>(0) : std::nullopt});
    // Finite, as the positions: a run's relative criterion takes |a_old| from them, and a
    // restart continues with them (a nan was reported as a non-finite force of the softening).
    const auto require_finite = [&](const char* name,
                                    std::initializer_list<std::vector<double>*> cols) {
      int c = 0;
      for (const auto* col : cols) {
        for (std::size_t i = base; i < base + n; ++i)
          if (!std::isfinite((*col)[i]))
            throw_bad_field(file,
                            gname + "/" + name + "[" + std::to_string(i - base) +
                                (cols.size() > 1 ? ", " + std::to_string(c) : std::string()) + "]",
                            (*col)[i],
                            "particle id " + std::to_string(p.id[i]) + ": must be finite");
        ++c;
      }
    };
    if (has_link(gd, "Potential")) {
      read_columns<double>(gd, gname, "Potential", d, n, {&p.pot}, base, file);
      require_finite("Potential", {&p.pot});
    }
    if (has_link(gd, "Acceleration")) {
      read_columns<double>(gd, gname, "Acceleration", d, n, {&p.ax, &p.ay, &p.az}, base, file);
      require_finite("Acceleration", {&p.ax, &p.ay, &p.az});
    }
    out.loaded[t] += n;
  }
  return static_cast<std::uint64_t>(nfiles);
}

}  // namespace

bool is_hdf5_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  return in.gcount() == 8 && std::memcmp(sig, "\x89HDF\r\n\x1a\n", 8) == 0;
}

std::string hdf5_code(const std::string& path) {
  if (!is_hdf5_file(path)) return {};
  QuietHdf5 quiet;
  const Hdf5CrashGuard crash(path);
  Handle f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid() || !has_link(f.get(), "Header")) return {};
  Handle h(H5Gopen2(f.get(), "Header", H5P_DEFAULT), H5Gclose);
  return h.valid() ? read_attr_string(h.get(), "Code") : std::string();
}

void write_hdf5_snapshot(const std::string& path, const ParticleSet& p, const SnapshotInfo& info) {
  write_atomically(path, [&](const std::string& tmp) { write_file(tmp, path, p, info); });
}

namespace {
// Header/NumPart_Total (with NumPart_Total_HighWord) of a file; empty when absent.
std::vector<std::uint64_t> header_totals(const std::string& file) {
  Handle f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  Handle h(H5Gopen2(f.get(), "Header", H5P_DEFAULT), H5Gclose);
  if (!has_attr(h.get(), "NumPart_Total")) return {};
  std::vector<std::uint64_t> total = read_attr_counts(h.get(), "NumPart_Total", file);
  if (has_attr(h.get(), "NumPart_Total_HighWord")) {
    const auto high = read_attr_counts(h.get(), "NumPart_Total_HighWord", file);
    for (std::size_t t = 0; t < total.size() && t < high.size(); ++t) total[t] += high[t] << 32;
  }
  return total;
}
}  // namespace

SnapshotData read_hdf5_snapshot(const std::string& path) {
  QuietHdf5 quiet;
  const Hdf5CrashGuard crash(path);
  require_input_file(path);
  SnapshotData out;
  const std::uint64_t nfiles = read_one_file(path, out, true);
  if (nfiles > 1) {
    // A multi-file set NAME.K.hdf5: read every member in order.
    static const std::regex member(R"((.*)\.(\d+)\.(hdf5|h5)$)");
    std::smatch m;
    if (!std::regex_match(path, m, member))
      throw_bad_field(path, "Header/NumFilesPerSnapshot", nfiles,
                      "a multi-file snapshot must be named NAME.K.hdf5");
    out = SnapshotData{};
    for (std::uint64_t k = 0; k < nfiles; ++k) {
      const std::string file = m[1].str() + "." + std::to_string(k) + "." + m[3].str();
      if (!std::filesystem::is_regular_file(file))
        throw_bad_field(
            file, "file", "missing",
            "member " + std::to_string(k) + " of a " + std::to_string(nfiles) + "-file snapshot");
      read_one_file(file, out, k == 0);
    }
    // The first member's header totals against what the members hold.
    const std::string first = m[1].str() + ".0." + m[3].str();
    const std::vector<std::uint64_t> total = header_totals(first);
    for (std::size_t t = 0; t < total.size(); ++t) {
      const std::uint64_t held =
          t < out.loaded.size() ? out.loaded[t] + out.skipped[t] : std::uint64_t{0};
      if (total[t] != held)
        throw_bad_field(first, "Header/NumPart_Total[" + std::to_string(t) + "]", total[t],
                        "differs from the members' NumPart_ThisFile sum = " + std::to_string(held));
    }
  }
  // Types without ParticleIDs beside types with them: the assigned ids count on from the
  // largest stored one (load positions 0, 1, ... collided with stored ids, and the file was
  // refused for a duplicate id it does not have).
  if (!out.assigned_ranges.empty()) {
    ParticleSet& p = out.particles;
    std::vector<char> assigned(p.size(), 0);
    for (const auto& [b, e] : out.assigned_ranges)
      std::fill(assigned.begin() + b, assigned.begin() + e, 1);
    std::uint64_t largest = 0, n_assigned = 0;
    bool stored = false;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (assigned[i]) {
        ++n_assigned;
      } else {
        largest = stored ? std::max(largest, p.id[i]) : p.id[i];
        stored = true;
      }
    }
    // (Stored ids so large that the count would wrap keep the load positions, and a clash is
    // then refused as a duplicate id.)
    if (stored && n_assigned <= std::numeric_limits<std::uint64_t>::max() - largest - 1) {
      out.assigned_from = largest + 1;
      std::uint64_t next = out.assigned_from;
      for (std::size_t i = 0; i < p.size(); ++i)
        if (assigned[i]) p.id[i] = next++;
    }
  }
  validate_loaded(out.particles, path);
  return out;
}

}  // namespace hoshi::io
