// Round trips and layout checks of the snapshot formats: HDF5 (Gadget-4 layout), tipsy
// (standard XDR and Bonsai's little-endian variant) and Gadget binary formats 1 and 2.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/byte_reader.hpp"
#include "io/csv.hpp"
#include "io/gadget_binary.hpp"
#include "io/hdf5_snapshot.hpp"
#include "io/particle_io.hpp"
#include "io/snapshot_io.hpp"
#include "io/tipsy.hpp"
#include "io/units.hpp"
#include "io_test_util.hpp"

namespace hoshi::io {
namespace {

using test::ScratchDir;

// ---- units ---------------------------------------------------------------------------------

TEST(IoUnits, PresetsHaveTheDocumentedG) {
  EXPECT_DOUBLE_EQ(units_henon().G(), 1.0);
  // Gadget-2's value of G in kpc, km/s, 1e10 Msun with G_cgs = 6.672e-8: 43007.1 to the
  // 6 digits the Gadget manual gives.
  EXPECT_NEAR(units_galaxy().G(), 43007.1, 0.05);
  EXPECT_THROW(parse_units("cgs"), std::invalid_argument);
  // A G = 1 system built from kpc and the Henon mass unit is the Henon preset.
  EXPECT_EQ(units_g1(kKpcInCm, units_henon().mass_g).name, "henon");
}

TEST(IoUnits, ConvertUnitsPreservesPhysicalValues) {
  ParticleSet p = test::sample_particles(4);
  const ParticleSet orig = p;
  const UnitSystem from = units_galaxy(), to = units_henon();
  const double tscale = convert_units(p, from, to);
  for (std::size_t i = 0; i < p.size(); ++i) {
    // physical value = code value * unit: equal before and after to round-off (2 roundings).
    EXPECT_NEAR(p.x[i] * to.length_cm, orig.x[i] * from.length_cm,
                4e-16 * std::abs(orig.x[i] * from.length_cm));
    EXPECT_NEAR(p.vy[i] * to.velocity_cm_s, orig.vy[i] * from.velocity_cm_s,
                4e-16 * std::abs(orig.vy[i] * from.velocity_cm_s));
    EXPECT_NEAR(p.m[i] * to.mass_g, orig.m[i] * from.mass_g, 4e-16 * orig.m[i] * from.mass_g);
  }
  EXPECT_NEAR(tscale, from.time_s() / to.time_s(), 1e-15 * tscale);
}

// ---- HDF5 ------------------------------------------------------------------------------------

SnapshotInfo sample_info(const UnitSystem& u) {
  SnapshotInfo info;
  info.time = 1.25;
  info.units = u;
  info.parameters = {{"n", std::int64_t{100}}, {"theta", 0.5}, {"solver", std::string("tree")}};
  return info;
}

TEST(IoHdf5, RoundTripIsExact) {
  ScratchDir dir("h5");
  const ParticleSet p = test::sample_particles(100);
  write_hdf5_snapshot(dir.file("s.hdf5"), p, sample_info(units_galaxy()));
  const SnapshotData d = read_hdf5_snapshot(dir.file("s.hdf5"));
  ASSERT_EQ(d.particles.size(), p.size());
  // Doubles are stored as IEEE doubles: the round trip is bit-exact, every column.
  test::expect_columns(d.particles, p, test::kAllColumns);
  EXPECT_EQ(d.info.time, 1.25);
  EXPECT_EQ(d.info.units.name, "galaxy");
  EXPECT_EQ(d.loaded[1], 100u);
  const ParamValue* theta = find_param(d.info.parameters, "theta");
  ASSERT_NE(theta, nullptr);
  EXPECT_EQ(std::get<double>(*theta), 0.5);
  const ParamValue* solver = find_param(d.info.parameters, "solver");
  ASSERT_NE(solver, nullptr);
  EXPECT_EQ(std::get<std::string>(*solver), "tree");
  EXPECT_EQ(std::get<std::int64_t>(*find_param(d.info.parameters, "n")), 100);
}

// A variable-length string parameter (h5py's Python str, UTF-8) is read as written; it was
// read as "" (a file's kernel 'spline' was reported as "value ''", and a conversion blanked it).
TEST(IoHdf5, VariableLengthStringParametersAreRead) {
  ScratchDir dir("h5");
  const std::string path = dir.file("s.hdf5");
  write_hdf5_snapshot(path, test::sample_particles(10), sample_info(units_galaxy()));
  test::set_hdf5_string(path, "Parameters", "kernel", "spline", /*variable_length=*/true);
  test::set_hdf5_string(path, "Parameters", "solver", "direct", /*variable_length=*/true);
  const SnapshotData d = read_hdf5_snapshot(path);
  const ParamValue* kernel = find_param(d.info.parameters, "kernel");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(std::get<std::string>(*kernel), "spline");
  EXPECT_EQ(std::get<std::string>(*find_param(d.info.parameters, "solver")), "direct");
}

// The same snapshot written twice, a second apart, gives the same bytes (the datasets carried
// their creation times: six bytes differed).
TEST(IoHdf5, SameSnapshotSameBytes) {
  ScratchDir dir("h5");
  const ParticleSet p = test::sample_particles(50, 3);
  write_hdf5_snapshot(dir.file("a.hdf5"), p, sample_info(units_henon()));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  write_hdf5_snapshot(dir.file("b.hdf5"), p, sample_info(units_henon()));
  EXPECT_TRUE(test::read_all(dir.file("a.hdf5")) == test::read_all(dir.file("b.hdf5")));
}

TEST(IoHdf5, EmptySetRoundTrips) {
  ScratchDir dir("h5");
  write_hdf5_snapshot(dir.file("e.hdf5"), ParticleSet{}, sample_info(units_henon()));
  EXPECT_EQ(read_hdf5_snapshot(dir.file("e.hdf5")).particles.size(), 0u);
}

double read_scalar_attr(hid_t loc, const char* name) {
  const hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  double v = std::nan("");
  if (a >= 0) {
    H5Aread(a, H5T_NATIVE_DOUBLE, &v);
    H5Aclose(a);
  }
  return v;
}

// Every string attribute of `loc` must be fixed-length (yt's detection fails on variable-length
// strings); returns the number of attributes checked.
int count_fixed_strings(hid_t loc, bool& any_variable) {
  struct Ctx {
    bool* var;
    int n;
  } ctx{&any_variable, 0};
  hsize_t idx = 0;
  H5Aiterate2(
      loc, H5_INDEX_NAME, H5_ITER_INC, &idx,
      [](hid_t l, const char* name, const H5A_info_t*, void* data) -> herr_t {
        auto* c = static_cast<Ctx*>(data);
        const hid_t a = H5Aopen(l, name, H5P_DEFAULT);
        const hid_t t = H5Aget_type(a);
        if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) *c->var = true;
        ++c->n;
        H5Tclose(t);
        H5Aclose(a);
        return 0;
      },
      &ctx);
  return ctx.n;
}

TEST(IoHdf5, LayoutIsGadget4) {
  ScratchDir dir("h5");
  const ParticleSet p = test::sample_particles(10);
  const UnitSystem u = units_galaxy();
  write_hdf5_snapshot(dir.file("s.hdf5"), p, sample_info(u));
  const hid_t f = H5Fopen(dir.file("s.hdf5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  for (const char* name :
       {"NumPart_ThisFile", "NumPart_Total", "NumPart_Total_HighWord", "MassTable", "Time",
        "Redshift", "BoxSize", "NumFilesPerSnapshot", "Omega0", "OmegaLambda", "HubbleParam",
        "Flag_DoublePrecision", "Flag_Entropy_ICs", "Flag_Sfr", "Flag_Cooling", "Flag_Metals",
        "Flag_StellarAge", "Flag_Feedback", "Time_GYR"})
    EXPECT_GT(H5Aexists(h, name), 0) << name;
  std::int64_t counts[6] = {};
  const hid_t a = H5Aopen(h, "NumPart_ThisFile", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_INT64, counts);
  H5Aclose(a);
  EXPECT_EQ(counts[1], 10);
  EXPECT_EQ(counts[0] + counts[2] + counts[3] + counts[4] + counts[5], 0);
  EXPECT_EQ(read_scalar_attr(h, "HubbleParam"), 1.0);
  EXPECT_EQ(read_scalar_attr(h, "OmegaLambda"), 0.0);
  // Time_GYR = Time * (1 kpc / 1 km/s) / 1 Gyr, the unit of time written from constants.
  const double gyr = 1.25 * (3.085678e21 / 1e5) / 3.15576e16;
  EXPECT_NEAR(read_scalar_attr(h, "Time_GYR"), gyr, 1e-14 * gyr);
  bool variable = false;
  EXPECT_GT(count_fixed_strings(h, variable), 15);
  const hid_t units = H5Gopen2(f, "Units", H5P_DEFAULT);
  EXPECT_EQ(read_scalar_attr(units, "UnitLength_in_cm"), 3.085678e21);
  EXPECT_EQ(read_scalar_attr(units, "UnitMass_in_g"), 1.989e43);
  EXPECT_EQ(read_scalar_attr(units, "UnitVelocity_in_cm_per_s"), 1e5);
  // SWIFT's names too (its IC reader needs all five where /Units exists).
  EXPECT_EQ(read_scalar_attr(units, "Unit length in cgs (U_L)"), 3.085678e21);
  EXPECT_EQ(read_scalar_attr(units, "Unit mass in cgs (U_M)"), 1.989e43);
  EXPECT_EQ(read_scalar_attr(units, "Unit time in cgs (U_t)"), 3.085678e21 / 1e5);
  EXPECT_EQ(read_scalar_attr(units, "Unit current in cgs (U_I)"), 1.0);
  EXPECT_EQ(read_scalar_attr(units, "Unit temperature in cgs (U_T)"), 1.0);
  const hid_t params = H5Gopen2(f, "Parameters", H5P_DEFAULT);
  EXPECT_GT(count_fixed_strings(params, variable), 3);
  EXPECT_FALSE(variable) << "variable-length string attribute found";
  EXPECT_EQ(read_scalar_attr(params, "theta"), 0.5);
  // pynbody reads Time_GYR and HubbleParam from /Parameters when that group has attributes.
  EXPECT_NEAR(read_scalar_attr(params, "Time_GYR"), gyr, 1e-14 * gyr);
  for (const char* ds :
       {"Coordinates", "Velocities", "Masses", "ParticleIDs", "Potential", "Acceleration"}) {
    const hid_t d = H5Dopen2(f, (std::string("PartType1/") + ds).c_str(), H5P_DEFAULT);
    ASSERT_GE(d, 0) << ds;
    for (const char* at :
         {"a_scaling", "h_scaling", "length_scaling", "mass_scaling", "velocity_scaling", "to_cgs"})
      EXPECT_GT(H5Aexists(d, at), 0) << ds << "/" << at;
    EXPECT_EQ(read_scalar_attr(d, "a_scaling"), 0.0);
    EXPECT_EQ(read_scalar_attr(d, "h_scaling"), 0.0);
    H5Dclose(d);
  }
  H5Gclose(params);
  H5Gclose(units);
  H5Gclose(h);
  H5Fclose(f);
}

// Henon units' /Units (1 kpc, 1 km/s, G = 1) imply the same time unit as galaxy units: Time_GYR
// is written in it. Without it pynbody took the age of an empty universe (9.78 Gyr) as the time
// of every snapshot.
TEST(IoHdf5, HenonUnitsWriteTheTimeTheirUnitsImply) {
  ScratchDir dir("h5");
  const SnapshotInfo info = sample_info(units_henon());
  ASSERT_GT(info.time, 0);
  write_hdf5_snapshot(dir.file("s.hdf5"), test::sample_particles(3), info);
  const hid_t f = H5Fopen(dir.file("s.hdf5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const double gyr = info.time * kKpcInCm / 1e5 / kGyrInS;
  for (const char* group : {"Header", "Parameters"}) {
    const hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
    EXPECT_NEAR(read_scalar_attr(g, "Time_GYR"), gyr, 1e-14 * gyr) << group;
    H5Gclose(g);
  }
  H5Fclose(f);
  EXPECT_EQ(read_hdf5_snapshot(dir.file("s.hdf5")).info.units.name, "henon");
}

// Gadget-2's HDF5 writer has no /Units: such a file is read as units unknown (the commands take
// it in their run's units), and written on without /Units. AREPO also keeps its units in
// /Header.
TEST(IoHdf5, UnitsAreKnownOnlyWhenTheFileHasThem) {
  ScratchDir dir("h5");
  SnapshotInfo none;
  none.units_known = false;
  write_hdf5_snapshot(dir.file("n.hdf5"), test::sample_particles(3), none);
  const LoadedSnapshot n = load_snapshot(dir.file("n.hdf5"));
  EXPECT_FALSE(n.units_known);
  EXPECT_EQ(snapshot_G(n), 1.0);
  {
    const hid_t f = H5Fopen(dir.file("n.hdf5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT_EQ(H5Lexists(f, "Units", H5P_DEFAULT), 0);
    H5Fclose(f);
  }
  // Units written into /Header only (AREPO's copy of them): galaxy units, G = 43007.1.
  const UnitSystem g = units_galaxy();
  test::set_hdf5_double(dir.file("n.hdf5"), "Header", "UnitLength_in_cm", g.length_cm);
  test::set_hdf5_double(dir.file("n.hdf5"), "Header", "UnitMass_in_g", g.mass_g);
  test::set_hdf5_double(dir.file("n.hdf5"), "Header", "UnitVelocity_in_cm_per_s", g.velocity_cm_s);
  const LoadedSnapshot a = load_snapshot(dir.file("n.hdf5"));
  EXPECT_TRUE(a.units_known);
  EXPECT_EQ(a.units.name, "galaxy");
  EXPECT_NEAR(snapshot_G(a), g.G(), 1e-9 * g.G());
  // Placeholders (0) in the Header are no units, and no error either.
  write_hdf5_snapshot(dir.file("z.hdf5"), test::sample_particles(3), none);
  for (const char* name : {"UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s"})
    test::set_hdf5_double(dir.file("z.hdf5"), "Header", name, 0.0);
  EXPECT_FALSE(load_snapshot(dir.file("z.hdf5")).units_known);
  // GIZMO's spelling in /Header, with its G (parsec, solar mass, m/s): were not read, so its
  // files were taken as unitless with G = 1 (a run in galaxy units kept parsecs as kiloparsecs).
  write_hdf5_snapshot(dir.file("gizmo.hdf5"), test::sample_particles(3), none);
  const double pc = 3.0856775814913673e18, msun = 1.989e33;
  test::set_hdf5_double(dir.file("gizmo.hdf5"), "Header", "UnitLength_In_CGS", pc);
  test::set_hdf5_double(dir.file("gizmo.hdf5"), "Header", "UnitMass_In_CGS", msun);
  test::set_hdf5_double(dir.file("gizmo.hdf5"), "Header", "UnitVelocity_In_CGS", 100.0);
  test::set_hdf5_double(dir.file("gizmo.hdf5"), "Header", "Gravitational_Constant_In_Code_Inits",
                        4300.71);
  test::set_hdf5_double(dir.file("gizmo.hdf5"), "Header", "Omega_Matter", 0.0);
  const LoadedSnapshot gz = load_snapshot(dir.file("gizmo.hdf5"));
  EXPECT_TRUE(gz.units_known);
  EXPECT_DOUBLE_EQ(gz.units.length_cm, pc);
  EXPECT_DOUBLE_EQ(gz.units.mass_g, msun);
  EXPECT_DOUBLE_EQ(gz.units.velocity_cm_s, 100.0);
  EXPECT_EQ(snapshot_G(gz), 4300.71);
  // hoshi's own snapshots have them.
  write_hdf5_snapshot(dir.file("s.hdf5"), test::sample_particles(3), sample_info(units_galaxy()));
  EXPECT_TRUE(load_snapshot(dir.file("s.hdf5")).units_known);
}

// A type the header counts as empty must have no particles in the file (they were dropped).
TEST(IoHdf5, ParticlesOfATypeTheHeaderCountsAsEmptyAreAnError) {
  ScratchDir dir("h5");
  write_hdf5_snapshot(dir.file("z.hdf5"), test::sample_particles(4), SnapshotInfo{});
  const hid_t f = H5Fopen(dir.file("z.hdf5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t g = H5Gopen2(f, "Header", H5P_DEFAULT);
  const std::int64_t counts[6] = {0, 0, 0, 0, 0, 0};
  for (const char* name : {"NumPart_ThisFile", "NumPart_Total"}) {
    const hid_t a = H5Aopen(g, name, H5P_DEFAULT);
    ASSERT_GE(a, 0) << name;
    EXPECT_GE(H5Awrite(a, H5T_NATIVE_INT64, counts), 0) << name;
    H5Aclose(a);
  }
  H5Gclose(g);
  H5Fclose(f);
  const std::string msg =
      test::invalid_argument_message([&] { load_snapshot(dir.file("z.hdf5")); });
  EXPECT_NE(msg.find("field PartType1/Coordinates: value 4 (length differs from the header count "
                     "NumPart_ThisFile = 0)"),
            std::string::npos)
      << msg;
}

// A file shaped like SWIFT output: 7 particle types, gas (type 0), halo (1), stars (4) and
// neutrinos (6) with float coordinates, 32-bit ids, star masses only in the MassTable, a
// 3-element BoxSize and SWIFT's unit names (Mpc, 1e10 Msun, time unit Mpc / (km/s)).
void write_multi_type(const std::string& path) {
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  auto attr = [&](const char* name, hid_t type, const void* v, hsize_t n) {
    const hid_t s = H5Screate_simple(1, &n, nullptr);
    const hid_t a = H5Acreate2(h, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, v);
    H5Aclose(a);
    H5Sclose(s);
  };
  const std::int32_t counts[7] = {5, 4, 0, 0, 3, 0, 2};
  const double table[7] = {0, 0, 0, 0, 0.25, 0, 0};
  const double box[3] = {10, 10, 10};
  const double time = 0.5;
  const std::int32_t one = 1;
  attr("NumPart_ThisFile", H5T_NATIVE_INT32, counts, 7);
  attr("NumPart_Total", H5T_NATIVE_INT32, counts, 7);
  attr("MassTable", H5T_NATIVE_DOUBLE, table, 7);
  attr("BoxSize", H5T_NATIVE_DOUBLE, box, 3);
  attr("Time", H5T_NATIVE_DOUBLE, &time, 1);
  attr("NumFilesPerSnapshot", H5T_NATIVE_INT32, &one, 1);
  H5Gclose(h);
  {
    const hid_t u = H5Gcreate2(f, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const std::pair<const char*, double> units[] = {{"Unit length in cgs (U_L)", 3.08567758e24},
                                                    {"Unit mass in cgs (U_M)", 1.98841e43},
                                                    {"Unit time in cgs (U_t)", 3.08567758e19}};
    for (const auto& [name, v] : units) {
      const hid_t sp = H5Screate(H5S_SCALAR);
      const hid_t a = H5Acreate2(u, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
      H5Aclose(a);
      H5Sclose(sp);
    }
    H5Gclose(u);
  }
  auto group = [&](int type, int n, bool masses) {
    const std::string g = "PartType" + std::to_string(type);
    const hid_t gid = H5Gcreate2(f, g.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    std::vector<float> xyz(3 * n), m(n, 0.5f);
    std::vector<std::uint32_t> id(n);
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < 3; ++k) xyz[3 * i + k] = float(type * 10 + i) + 0.25f * k;
      id[i] = std::uint32_t(type * 100 + i);
    }
    auto ds = [&](const char* name, hid_t type_id, const void* data, int cols) {
      const hsize_t dims[2] = {hsize_t(n), hsize_t(cols)};
      const hid_t s = H5Screate_simple(cols == 1 ? 1 : 2, dims, nullptr);
      const hid_t d = H5Dcreate2(gid, name, type_id, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, type_id, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
      H5Dclose(d);
      H5Sclose(s);
    };
    std::vector<float> v(xyz);  // minus the coordinates: a reader that took one for the other
    for (float& c : v) c = -c;  // fails
    ds("Coordinates", H5T_NATIVE_FLOAT, xyz.data(), 3);
    ds("Velocities", H5T_NATIVE_FLOAT, v.data(), 3);
    ds("ParticleIDs", H5T_NATIVE_UINT32, id.data(), 1);
    if (masses) ds("Masses", H5T_NATIVE_FLOAT, m.data(), 1);
    H5Gclose(gid);
  };
  group(0, 5, true);
  group(1, 4, true);
  group(4, 3, false);
  group(6, 2, true);
  H5Fclose(f);
}

TEST(IoHdf5, ReadsSwiftStyleMultiTypeFilesSkippingGas) {
  ScratchDir dir("h5");
  write_multi_type(dir.file("m.hdf5"));
  const SnapshotData d = read_hdf5_snapshot(dir.file("m.hdf5"));
  EXPECT_EQ(d.skipped[0], 5u);
  EXPECT_EQ(d.loaded[1], 4u);
  EXPECT_EQ(d.loaded[4], 3u);
  ASSERT_EQ(d.loaded.size(), 7u);
  EXPECT_EQ(d.loaded[6], 2u);
  ASSERT_EQ(d.particles.size(), 9u);
  EXPECT_EQ(d.particles.id[7], 600u);
  // SWIFT units: velocity = U_L / U_t = 1e5 cm/s.
  EXPECT_EQ(d.info.units.length_cm, 3.08567758e24);
  EXPECT_NEAR(d.info.units.velocity_cm_s, 1e5, 1e-10);
  EXPECT_EQ(d.particles.id[0], 100u);
  EXPECT_EQ(d.particles.id[4], 400u);
  EXPECT_EQ(d.particles.m[0], 0.5);   // from the Masses dataset
  EXPECT_EQ(d.particles.m[6], 0.25);  // from the MassTable
  EXPECT_EQ(d.particles.x[5], 41.0);
  EXPECT_EQ(d.particles.z[5], 41.5);
  EXPECT_EQ(d.particles.vx[5], -41.0);  // km/s: the units' velocity is 1e5 cm/s
  EXPECT_EQ(d.particles.vy[5], -41.25);
  EXPECT_EQ(d.info.box_size, 10.0);
  EXPECT_EQ(d.info.time, 0.5);
}

// A Gadget-4 or AREPO run's softening (its /Parameters) for the types the file holds: one for
// every loaded type, or none with the softenings by type said; in a comoving run limited to
// max_phys / a; gas (skipped) does not count; a bad value is an error naming the field.
TEST(IoHdf5, GadgetSofteningOfTheLoadedTypes) {
  ScratchDir dir("h5");
  const std::string path = dir.file("g.hdf5");
  write_multi_type(path);  // types 1 (4 particles), 4 (3) and 6 (2), gas skipped; Time 0.5
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Gclose(H5Gcreate2(f, "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Fclose(f);
  }
  EXPECT_FALSE(load_snapshot(path).gadget_softening);  // names no softening class
  const auto set = [&](const char* key, double v) {
    test::set_hdf5_double(path, "Parameters", key, v);
  };
  set("SofteningClassOfPartType0", 3);  // gas: another class, not loaded
  set("SofteningComovingClass3", 0.5);
  for (const char* t :
       {"SofteningClassOfPartType1", "SofteningClassOfPartType4", "SofteningClassOfPartType6"})
    set(t, 1);
  set("SofteningComovingClass1", 0.044);
  set("SofteningMaxPhysClass1", 0.01);
  std::optional<GadgetSoftening> g = load_snapshot(path).gadget_softening;
  ASSERT_TRUE(g && g->eps);
  EXPECT_EQ(*g->eps, 0.044);
  EXPECT_EQ(g->code, "Gadget-4");
  EXPECT_EQ(g->text, "Gadget-4's SofteningComovingClass1 for PartType1, PartType4 and PartType6");
  // Comoving at a = 0.5: min(0.044, 0.01 / 0.5) in comoving units.
  set("ComovingIntegrationOn", 1);
  g = load_snapshot(path).gadget_softening;
  ASSERT_TRUE(g && g->eps);
  EXPECT_EQ(*g->eps, 0.01 / 0.5);
  EXPECT_EQ(g->text,
            "Gadget-4's SofteningMaxPhysClass1 / a (0.01 / 0.5) for PartType1, PartType4 and "
            "PartType6");
  set("SofteningMaxPhysClass1", 0.05);  // 0.044 a = 0.022 < 0.05: the comoving one
  EXPECT_EQ(*load_snapshot(path).gadget_softening->eps, 0.044);
  set("ComovingIntegrationOn", 0);
  // A class per type: none taken, the softenings said.
  set("SofteningClassOfPartType4", 2);
  set("SofteningComovingClass2", 0.1);
  g = load_snapshot(path).gadget_softening;
  ASSERT_TRUE(g);
  EXPECT_FALSE(g->eps);
  EXPECT_EQ(g->text, "Gadget-4 softenings by type: PartType1 and PartType6 0.044, PartType4 0.1");
  set("SofteningComovingClass2", 0.044);  // two classes, one softening: taken
  g = load_snapshot(path).gadget_softening;
  ASSERT_TRUE(g && g->eps);
  EXPECT_EQ(g->text,
            "Gadget-4's SofteningComovingClass1 for PartType1 and PartType6 and Gadget-4's "
            "SofteningComovingClass2 for PartType4");
  // A loaded type without a class, a class without a softening: none taken.
  test::remove_hdf5_attribute(path, "Parameters", "SofteningClassOfPartType6");
  g = load_snapshot(path).gadget_softening;
  ASSERT_TRUE(g);
  EXPECT_FALSE(g->eps);
  EXPECT_EQ(g->text,
            "Gadget-4 softening classes without SofteningClassOfPartType6 for the "
            "particles of PartType6");
  set("SofteningClassOfPartType6", 5);
  EXPECT_EQ(load_snapshot(path).gadget_softening->text,
            "Gadget-4 softening classes without SofteningComovingClass5 for PartType6");
  // A bad value: no eps, and the error for the commands to raise where they would take the
  // softening (the file still loads: with --softening, or for analyze and render).
  set("SofteningClassOfPartType6", 1.5);
  g = load_snapshot(path).gadget_softening;
  ASSERT_TRUE(g);
  EXPECT_FALSE(g->eps);
  EXPECT_EQ(g->error, path +
                          ": field /Parameters/SofteningClassOfPartType6: value 1.5 (a softening "
                          "class: an integer 0 to 63)");
  set("SofteningClassOfPartType6", 1);
  set("SofteningComovingClass1", -1);
  EXPECT_EQ(load_snapshot(path).gadget_softening->error,
            path +
                ": field /Parameters/SofteningComovingClass1: value -1 (a softening: must be a "
                "number >= 0; give --softening)");
  // hoshi's own file keeps its softening as softening and kernel: its types are all PartType1.
  const std::string own = dir.file("own.hdf5");
  write_hdf5_snapshot(own, test::sample_particles(8), SnapshotInfo{});
  test::set_hdf5_double(own, "Parameters", "SofteningClassOfPartType1", 0);
  test::set_hdf5_double(own, "Parameters", "SofteningComovingClass0", 0.1);
  EXPECT_FALSE(load_snapshot(own).gadget_softening);
}

// AREPO names its classes "types": SofteningTypeOfPartType<t>, SofteningComovingType<c>.
TEST(IoHdf5, ArepoSoftening) {
  ScratchDir dir("h5");
  const std::string path = dir.file("a.hdf5");
  write_multi_type(path);
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Gclose(H5Gcreate2(f, "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Fclose(f);
  }
  for (const char* t :
       {"SofteningTypeOfPartType1", "SofteningTypeOfPartType4", "SofteningTypeOfPartType6"})
    test::set_hdf5_double(path, "Parameters", t, 0);
  test::set_hdf5_double(path, "Parameters", "SofteningComovingType0", 0.25);
  const std::optional<GadgetSoftening> g = load_snapshot(path).gadget_softening;
  ASSERT_TRUE(g && g->eps);
  EXPECT_EQ(*g->eps, 0.25);
  EXPECT_EQ(g->code, "AREPO");
}

// Masses come from the Masses dataset where a type has one; a nonzero MassTable entry that
// disagrees with it (Gadget-2's binary reader would have taken the table) is named in the note.
TEST(IoHdf5, MassesThatDisagreeWithTheMassTableAreNoted) {
  ScratchDir dir("h5");
  const std::string path = dir.file("m.hdf5");
  write_multi_type(path);
  EXPECT_TRUE(read_hdf5_snapshot(path).mass_table_ignored.empty());
  const auto set_table = [&](double type1) {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
    const hid_t a = H5Aopen(h, "MassTable", H5P_DEFAULT);
    const double table[7] = {0, type1, 0, 0, 0.25, 0, 0};
    H5Awrite(a, H5T_NATIVE_DOUBLE, table);
    H5Aclose(a);
    H5Gclose(h);
    H5Fclose(f);
  };
  set_table(0.5);  // the same masses as the dataset: nothing to say
  EXPECT_TRUE(read_hdf5_snapshot(path).mass_table_ignored.empty());
  set_table(0.75);
  const SnapshotData d = read_hdf5_snapshot(path);
  EXPECT_EQ(d.particles.m[0], 0.5);  // still the dataset's
  ASSERT_EQ(d.mass_table_ignored.size(), 1u);
  EXPECT_EQ(d.mass_table_ignored[0], "PartType1 (MassTable[1] = 0.75)");
  const LoadedSnapshot s = load_snapshot(path);
  EXPECT_NE(s.note.find("masses from the Masses dataset, which differs from a nonzero MassTable "
                        "entry: PartType1 (MassTable[1] = 0.75)"),
            std::string::npos)
      << s.note;
}

TEST(IoHdf5, ReadsMultiFileSets) {
  ScratchDir dir("h5");
  ParticleSet a = test::sample_particles(6, 1), b = test::sample_particles(4, 2);
  for (std::size_t i = 0; i < b.size(); ++i) b.id[i] += 100000;
  write_hdf5_snapshot(dir.file("snap.0.hdf5"), a, sample_info(units_henon()));
  write_hdf5_snapshot(dir.file("snap.1.hdf5"), b, sample_info(units_henon()));
  // Every member: two files, and the set's totals (10 of type 1).
  const auto set_header = [&](std::uint32_t total1) {
    for (const char* name : {"snap.0.hdf5", "snap.1.hdf5"}) {
      const hid_t f = H5Fopen(dir.file(name).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
      const hid_t at = H5Aopen(h, "NumFilesPerSnapshot", H5P_DEFAULT);
      const std::int32_t two = 2;
      H5Awrite(at, H5T_NATIVE_INT32, &two);
      H5Aclose(at);
      const hid_t tot = H5Aopen(h, "NumPart_Total", H5P_DEFAULT);
      const std::uint32_t total[6] = {0, total1, 0, 0, 0, 0};
      H5Awrite(tot, H5T_NATIVE_UINT32, total);
      H5Aclose(tot);
      H5Gclose(h);
      H5Fclose(f);
    }
  };
  // Header totals that disagree with what the members hold are an error (they were not checked
  // for sets).
  set_header(11);
  const std::string bad =
      test::invalid_argument_message([&] { read_hdf5_snapshot(dir.file("snap.1.hdf5")); });
  EXPECT_NE(bad.find("snap.0.hdf5: field Header/NumPart_Total[1]: value 11"), std::string::npos)
      << bad;
  set_header(10);
  // Any member names the set; particles come in file order.
  const SnapshotData d = read_hdf5_snapshot(dir.file("snap.1.hdf5"));
  ASSERT_EQ(d.particles.size(), 10u);
  EXPECT_EQ(d.particles.id[0], a.id[0]);
  EXPECT_EQ(d.particles.id[6], b.id[0]);
  EXPECT_EQ(d.particles.x[9], b.x[3]);
  std::filesystem::remove(dir.file("snap.0.hdf5"));
  const std::string msg =
      test::invalid_argument_message([&] { read_hdf5_snapshot(dir.file("snap.1.hdf5")); });
  EXPECT_NE(msg.find("snap.0.hdf5"), std::string::npos) << msg;
}

// ---- atomic writes ----------------------------------------------------------------------------

TEST(IoAtomic, FailedWriteLeavesPreviousFileAndNoTemporary) {
  ScratchDir dir("atomic");
  const std::string path = dir.file("out.bin");
  write_stream_atomically(path, [](std::ostream& s) { s << "first"; });
  EXPECT_EQ(test::read_all(path), "first");
  EXPECT_THROW(write_stream_atomically(path,
                                       [](std::ostream& s) {
                                         s << "half";
                                         throw std::runtime_error("disk full");
                                       }),
               std::runtime_error);
  EXPECT_EQ(test::read_all(path), "first");
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1) << "temporary file left behind";
  write_stream_atomically(path, [](std::ostream& s) { s << "second"; });
  EXPECT_EQ(test::read_all(path), "second");
}

TEST(IoAtomic, StaleTemporariesOfKilledWritersAreRemoved) {
  ScratchDir dir("atomic");
  test::write_all(dir.file(".checkpoint.hdf5.tmp.999999999.3"), "half");
  const std::string mine = temporary_path(dir.file("snap.hdf5"));  // this process: kept
  test::write_all(mine, "in progress");
  test::write_all(dir.file("checkpoint.hdf5"), "whole");
  test::write_all(dir.file(".hidden.tmp"), "not ours");
  EXPECT_EQ(remove_stale_temporaries(dir.path().string()), 1);
  EXPECT_FALSE(std::filesystem::exists(dir.file(".checkpoint.hdf5.tmp.999999999.3")));
  EXPECT_TRUE(std::filesystem::exists(mine));
  EXPECT_TRUE(std::filesystem::exists(dir.file("checkpoint.hdf5")));
  EXPECT_TRUE(std::filesystem::exists(dir.file(".hidden.tmp")));
  // A writer that is alive (pid 1 always is) keeps its temporary.
  test::write_all(dir.file(".snap.hdf5.tmp.1.0"), "someone else's, in progress");
  EXPECT_EQ(remove_stale_temporaries(dir.path().string()), 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file(".snap.hdf5.tmp.1.0")));
}

TEST(IoAtomic, StreamedOutputRemovesItsOwnStaleTemporariesOnly) {
  ScratchDir dir("atomic");
  // A killed `hoshi accuracy --errors` left its temporary; another file's is not ours.
  test::write_all(dir.file(".errors.csv.tmp.999999999.0"), "");
  test::write_all(dir.file(".other.csv.tmp.999999999.0"), "");
  {
    TemporaryOutput out(dir.file("errors.csv"), "--errors");
    out.out << "a,b\n";
    out.commit();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file(".errors.csv.tmp.999999999.0")));
  EXPECT_TRUE(std::filesystem::exists(dir.file(".other.csv.tmp.999999999.0")));
  EXPECT_EQ(test::read_all(dir.file("errors.csv")), "a,b\n");
}

// An output path that is a symbolic link: the rename replaced the link by a regular file and
// left its target as it was (an analysis audit, 2026-12-01). Now the target is replaced and
// the link kept, through a chain of relative links too; a dangling link's target is created.
TEST(IoAtomic, SymbolicLinksAreWrittenThrough) {
  ScratchDir dir("atomic");
  namespace fs = std::filesystem;
  fs::create_directory(dir.file("sub"));
  test::write_all(dir.file("sub/real.csv"), "old");
  fs::create_symlink("sub/real.csv", dir.file("link.csv"));
  fs::create_symlink("link.csv", dir.file("link2.csv"));  // a link to a link
  write_stream_atomically(dir.file("link2.csv"), [](std::ostream& s) { s << "new"; });
  EXPECT_TRUE(fs::is_symlink(dir.file("link2.csv")));
  EXPECT_TRUE(fs::is_symlink(dir.file("link.csv")));
  EXPECT_EQ(test::read_all(dir.file("sub/real.csv")), "new");
  EXPECT_EQ(output_target(dir.file("link2.csv")), dir.file("sub/real.csv"));
  fs::create_symlink("sub/made.csv", dir.file("dangling.csv"));
  {
    TemporaryOutput out(dir.file("dangling.csv"), "--errors");
    out.out << "a,b\n";
    out.commit();
  }
  EXPECT_TRUE(fs::is_symlink(dir.file("dangling.csv")));
  EXPECT_EQ(test::read_all(dir.file("sub/made.csv")), "a,b\n");
  // No temporary left beside the links or the targets.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 6);  // sub, real.csv, made.csv and the three links
  fs::create_symlink("loop", dir.file("loop"));
  EXPECT_THROW(output_target(dir.file("loop")), std::runtime_error);
}

// A device or FIFO (/dev/stdout, /dev/null, a pipe) is written in place: renaming a temporary
// over /dev/stdout replaced it by a regular file, for every process of the machine when root.
TEST(IoAtomic, FifosAndDevicesAreWrittenInPlace) {
  ScratchDir dir("atomic");
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(written_in_place(fifo));
  EXPECT_FALSE(written_in_place(dir.file("absent.csv")));
  EXPECT_FALSE(written_in_place(dir.path().string()));
  test::write_all(dir.file("regular.csv"), "x");  // any regular file but this process's stdout
  EXPECT_FALSE(written_in_place(dir.file("regular.csv")));
  std::filesystem::remove(dir.file("regular.csv"));
  // Under /dev too (every existing path there was taken in place, skipping --overwrite).
  const std::string shm = "/dev/shm/hoshi_test_" + std::to_string(::getpid()) + ".csv";
  if (std::filesystem::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0) {
    test::write_all(shm, "x");
    EXPECT_FALSE(written_in_place(shm));
    std::filesystem::remove(shm);
  }
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the writer can open
  ASSERT_GE(reader, 0);
  write_stream_atomically(fifo, [](std::ostream& s) { s << "through the pipe"; });
  char buf[64] = {};
  const ssize_t got = ::read(reader, buf, sizeof buf - 1);
  ::close(reader);
  EXPECT_EQ(std::string(buf, got > 0 ? static_cast<std::size_t>(got) : 0), "through the pipe");
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1) << "temporary file left behind";
}

TEST(IoAtomic, OutputDirectoryIsNotReusedWithoutOverwrite) {
  ScratchDir dir("atomic");
  const std::string out = dir.file("run");
  prepare_output_dir(out, false);  // created
  EXPECT_TRUE(std::filesystem::is_directory(out));
  prepare_output_dir(out, false);  // empty: fine
  test::write_all(out + "/energy.csv", "x");
  const std::string msg = test::invalid_argument_message([&] { prepare_output_dir(out, false); });
  EXPECT_NE(msg.find(out), std::string::npos) << msg;
  EXPECT_NE(msg.find("--overwrite"), std::string::npos) << msg;
  EXPECT_NO_THROW(prepare_output_dir(out, true));
  EXPECT_EQ(test::read_all(out + "/energy.csv"), "x");  // preparing never deletes
}

// ---- tipsy ------------------------------------------------------------------------------------

// A tipsy file written through a symbolic link: its units file goes beside the target (it went
// beside the link, so that the target read alone had no units), and reading through the link
// finds it.
TEST(IoTipsy, UnitsFileGoesBesideTheTargetOfALink) {
  ScratchDir dir("tipsy");
  std::filesystem::create_directory(dir.file("sub"));
  std::filesystem::create_symlink("sub/real.std", dir.file("link.std"));
  // A units file beside the link (another file's: henon) is read before the target's: it goes.
  test::write_all(dir.file("link.std.param"), "dKpcUnit = 1\ndMsolUnit = 1\n");
  write_tipsy(dir.file("link.std"), test::sample_particles(10), 0.5, units_galaxy());
  EXPECT_TRUE(std::filesystem::exists(dir.file("sub/real.std.param")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("link.std.param")));
  EXPECT_NEAR(read_tipsy(dir.file("link.std")).units.mass_g / units_galaxy().mass_g, 1.0, 1e-12);
  EXPECT_TRUE(read_tipsy(dir.file("sub/real.std")).units_known);
  EXPECT_TRUE(read_tipsy(dir.file("link.std")).units_known);
  EXPECT_EQ(tipsy_param_path(dir.file("link.std")), dir.file("sub/real.std.param"));
}

// Particles without units replacing a tipsy file that had them: the old file's .param goes
// (it stayed, and the new particles were read back in its units: masses 4.3e4 times larger).
TEST(IoTipsy, AFileWithoutUnitsRemovesTheReplacedFilesParam) {
  ScratchDir dir("tipsy");
  const ParticleSet p = test::sample_particles(10);
  write_tipsy(dir.file("s.tipsy"), p, 0.0, units_galaxy());
  ASSERT_TRUE(read_tipsy(dir.file("s.tipsy")).units_known);
  write_tipsy(dir.file("s.tipsy"), p, 0.0, units_henon(), 0.0, 0.0, /*with_param=*/false);
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.tipsy.param")));
  const TipsyData d = read_tipsy(dir.file("s.tipsy"));
  EXPECT_FALSE(d.units_known);
  EXPECT_EQ(d.particles.m[3], double(float(p.m[3])));
}

// A units file named after the stem (d.param for d.tipsy) is not read, and said not to be (it
// was silently not read: a conversion after it took masses 43007 times off; an audit).
TEST(IoTipsy, AUnitsFileNamedAfterTheStemIsSaidNotToBeRead) {
  ScratchDir dir("tipsy");
  write_tipsy(dir.file("d.tipsy"), test::sample_particles(10), 0.0, units_galaxy());
  EXPECT_EQ(load_snapshot(dir.file("d.tipsy")).note, "");
  std::filesystem::rename(dir.file("d.tipsy.param"), dir.file("d.param"));
  const LoadedSnapshot s = load_snapshot(dir.file("d.tipsy"));
  EXPECT_FALSE(s.units_known);
  EXPECT_EQ(s.note, "no units file " + dir.file("d.tipsy") + ".param; " + dir.file("d.param") +
                        " is not read (copy it there if it holds this file's units)");
}

// A run's tipsy snapshots share one units file, OUT/snapshot.param (yt refuses a directory with
// two *.param, and a run wrote one per snapshot): a run's snapshot (snapshot_NNN.tipsy, or a
// link to one) without its own PATH.param takes it; no other file does (a converted file
// without units, written without PATH.param so that no reader takes another file's units,
// took the run's from the directory's only *.param). Written through a symbolic link, the units
// go beside the target (the shared file serves its own directory; the target's .param was
// removed and it had none).
TEST(IoTipsy, ARunsSnapshotsShareTheirUnitsFile) {
  namespace fs = std::filesystem;
  ScratchDir dir("tipsy");
  const ParticleSet p = test::sample_particles(10);
  const std::string shared = dir.file("snapshot.param");
  test::write_all(dir.file("snapshot_001.tipsy.param"), "dKpcUnit = 7\ndMsolUnit = 7\n");  // goes
  write_tipsy(dir.file("snapshot_001.tipsy"), p, 0.0, units_galaxy(), 0.0, 0.0, true, shared);
  EXPECT_FALSE(fs::exists(dir.file("snapshot_001.tipsy.param")));
  const std::string param = test::read_all(shared);
  EXPECT_NE(param.find("bPeriodic = 0"), std::string::npos) << param;  // yt: periodic
  EXPECT_EQ(tipsy_units_file(dir.file("snapshot_001.tipsy")), shared);
  const TipsyData d = read_tipsy(dir.file("snapshot_001.tipsy"));
  ASSERT_TRUE(d.units_known);
  EXPECT_NEAR(d.units.mass_g / units_galaxy().mass_g, 1.0, 1e-12);
  // Another file there, without units or with its own: not the run's.
  write_tipsy(dir.file("c.tipsy"), p, 0.0, units_henon(), 0.0, 0.0, /*with_param=*/false);
  EXPECT_EQ(tipsy_units_file(dir.file("c.tipsy")), "");
  EXPECT_FALSE(read_tipsy(dir.file("c.tipsy")).units_known);
  write_tipsy(dir.file("h.tipsy"), p, 0.0, units_henon());
  EXPECT_EQ(read_tipsy(dir.file("h.tipsy")).units.name, "henon");
  // Read through a link from elsewhere: the target's directory's.
  fs::create_directory(dir.file("elsewhere"));
  fs::create_symlink(dir.file("snapshot_001.tipsy"), dir.file("elsewhere/latest.tipsy"));
  EXPECT_TRUE(read_tipsy(dir.file("elsewhere/latest.tipsy")).units_known);
  // Written through a link: beside the target, which keeps its units.
  fs::create_symlink(dir.file("elsewhere/t.tipsy"), dir.file("snapshot_002.tipsy"));
  write_tipsy(dir.file("snapshot_002.tipsy"), p, 0.0, units_galaxy(), 0.0, 0.0, true, shared);
  EXPECT_TRUE(fs::exists(dir.file("elsewhere/t.tipsy.param")));
  EXPECT_NEAR(read_tipsy(dir.file("elsewhere/t.tipsy")).units.mass_g / units_galaxy().mass_g, 1.0,
              1e-12);
}

// A units file with a bad or partial pair of units is an error naming it, the field and the
// value (it was ignored, and the file read in the run's units without a word).
TEST(IoTipsy, BadOrPartialUnitsAreErrors) {
  ScratchDir dir("tipsy");
  write_tipsy(dir.file("s.tipsy"), test::sample_particles(10), 0.0, units_henon());
  const std::string param = dir.file("s.tipsy.param");
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
           {"dKpcUnit = -1\ndMsolUnit = 1e10\n", "field dKpcUnit: value '-1'"},
           {"dKpcUnit = abc\ndMsolUnit = 1e10\n", "field dKpcUnit: value 'abc'"},
           {"dKpcUnit = 1\ndMsolUnit = nan\n", "field dMsolUnit: value 'nan'"},
           {"dKpcUnit = 1\ndMsolUnit = 0\n", "field dMsolUnit: value '0'"},
           {"dKpcUnit = 1 # kpc\n", "field dMsolUnit: value missing"},
           // A unit's name without "=", in another case, given twice or in hexadecimal (each
           // was skipped, and the file read in the run's units).
           {"dKpcUnit: 1\ndMsolUnit = 1e10\n",
            "field dKpcUnit: value 'dKpcUnit: 1' (a unit is given as dKpcUnit = VALUE)"},
           {"dkpcunit = 1\ndMsolUnit = 1e10\n", "field dKpcUnit: value 'dkpcunit = 1'"},
           {"dKpcUnit = 1\ndMsolUnit = 1e10\ndKpcUnit = 2\n",
            "field dKpcUnit: value '2' (given twice: also 1)"},
           {"dKpcUnit = 0x10\ndMsolUnit = 1e10\n", "field dKpcUnit: value '0x10'"},
       }) {
    test::write_all(param, text);
    const std::string msg =
        test::invalid_argument_message([&] { read_tipsy(dir.file("s.tipsy")); });
    EXPECT_NE(msg.find(param + ": " + expect), std::string::npos) << text << msg;
  }
  test::write_all(param, "# no units\nbComove = 0\n");
  EXPECT_FALSE(read_tipsy(dir.file("s.tipsy")).units_known);
  // Said: a file named as the units file that names neither unit.
  EXPECT_NE(
      load_snapshot(dir.file("s.tipsy")).note.find(param + " names neither dKpcUnit nor dMsolUnit"),
      std::string::npos);
}

// Float32 records: a value beyond float32's range is refused before anything is written (it
// was written as inf, and the file could not be read back); so is a mass that rounds to 0.
TEST(IoTipsy, ValuesBeyondFloat32AreRefused) {
  ScratchDir dir("tipsy");
  test::write_all(dir.file("s.tipsy"), "old");
  ParticleSet p = test::sample_particles(10);
  p.vy[4] = 1e39;
  const std::string msg = test::invalid_argument_message(
      [&] { write_tipsy(dir.file("s.tipsy"), p, 0.0, units_henon()); });
  EXPECT_NE(msg.find(dir.file("s.tipsy") + ": field vel[4, 1]: value 1e+39 (particle id " +
                     std::to_string(p.id[4]) +
                     ": "
                     "beyond float32's range"),
            std::string::npos)
      << msg;
  p.vy[4] = 0;
  p.m[2] = 1e-50;
  const std::string tiny = test::invalid_argument_message(
      [&] { write_tipsy(dir.file("s.tipsy"), p, 0.0, units_henon()); });
  EXPECT_NE(tiny.find("field mass[2]: value 1e-50 (particle id " + std::to_string(p.id[2]) +
                      ": a mass that "
                      "rounds to 0 in float32"),
            std::string::npos)
      << tiny;
  EXPECT_EQ(test::read_all(dir.file("s.tipsy")), "old");
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.tipsy.param")));
}

TEST(IoTipsy, StandardRoundTripBigEndian) {
  ScratchDir dir("tipsy");
  const ParticleSet p = test::sample_particles(50);
  write_tipsy(dir.file("s.tipsy"), p, 2.0, units_henon(), 0.01);
  const std::string bytes = test::read_all(dir.file("s.tipsy"));
  ASSERT_EQ(bytes.size(), 32u + 50u * 36u);
  // XDR: ndim = 3 is stored big-endian at bytes 12..15, ndark = 50 at bytes 20..23.
  EXPECT_EQ(std::memcmp(bytes.data() + 12, "\0\0\0\3", 4), 0);
  EXPECT_EQ(static_cast<unsigned char>(bytes[23]), 50);
  const TipsyData d = read_tipsy(dir.file("s.tipsy"));
  EXPECT_TRUE(d.big_endian);
  EXPECT_FALSE(d.bonsai_ids);
  EXPECT_EQ(d.time, 2.0);
  EXPECT_EQ(d.n_dark, 50u);
  EXPECT_EQ(d.units.name, "henon");  // from s.tipsy.param
  ASSERT_EQ(d.particles.size(), 50u);
  // Records are float32: values come back rounded to float, exactly, every column a dark
  // record holds (no accelerations).
  test::expect_columns(d.particles, p,
                       test::kPositions | test::kVelocities | test::kMasses | test::kPotentials,
                       true);
  for (std::size_t i = 0; i < 50; ++i)
    EXPECT_EQ(d.particles.id[i], i);  // standard tipsy has no ids: file order
}

TEST(IoTipsy, GalaxyUnitsAreWrittenAsGEqualsOne) {
  ScratchDir dir("tipsy");
  const ParticleSet p = test::sample_particles(5);
  const UnitSystem u = units_galaxy();
  write_tipsy(dir.file("g.tipsy"), p, 1.0, u);
  const TipsyData d = read_tipsy(dir.file("g.tipsy"));
  const double sg = std::sqrt(u.G());
  // v_file = v / sqrt(G) rounded to float: relative error <= 2^-24 (+ one double rounding).
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_NEAR(d.particles.vx[i] * sg, p.vx[i], 1.2e-7 * std::abs(p.vx[i]));
  EXPECT_NEAR(d.time, sg, 1e-15 * sg);
  // The file's units: kpc, 1e10 Msun, velocity sqrt(G_cgs M / L) = sqrt(G) km/s.
  EXPECT_NEAR(d.units.length_cm, kKpcInCm, 1e-9 * kKpcInCm);
  EXPECT_NEAR(d.units.velocity_cm_s, sg * 1e5, 1e-9 * sg * 1e5);
  const std::string param = test::read_all(dir.file("g.tipsy.param"));
  EXPECT_NE(param.find("dMsolUnit = 10000000000"), std::string::npos) << param;
}

// Bonsai's native tipsy: little-endian, version 2 in the header pad, 64-bit ids in place of
// eps and phi; gas records (standard layout) come first and are skipped.
std::string bonsai_file() {
  std::string b;
  const bool le = false;
  put_bytes(b, 3.5, le);
  for (std::int32_t v : {4, 3, 1, 2, 1, 2}) put_bytes(b, v, le);  // nbodies..nstar, version
  for (int k = 0; k < 12; ++k) put_bytes(b, 1.0f, le);            // one gas record
  const std::uint64_t ids[3] = {(1ull << 40) + 5, 7, 200000000000ull};
  for (int i = 0; i < 3; ++i) {
    put_bytes(b, 0.5f, le);                                              // mass
    for (int k = 0; k < 6; ++k) put_bytes(b, float(i + 0.125 * k), le);  // pos, vel
    if (i == 2) put_bytes(b, 0.02f, le), put_bytes(b, 1.0f, le);         // star: metals, tform
    put_bytes(b, ids[i], le);
  }
  return b;
}

TEST(IoTipsy, ReadsBonsaiLittleEndianWith64BitIds) {
  const std::string b = bonsai_file();
  ASSERT_EQ(b.size(), 32u + 48u + 2 * 36u + 44u);
  const TipsyData d =
      parse_tipsy(reinterpret_cast<const unsigned char*>(b.data()), b.size(), "bonsai");
  EXPECT_FALSE(d.big_endian);
  EXPECT_TRUE(d.bonsai_ids);
  EXPECT_EQ(d.skipped_gas, 1u);
  ASSERT_EQ(d.particles.size(), 3u);
  EXPECT_EQ(d.particles.id[0], (1ull << 40) + 5);
  EXPECT_EQ(d.particles.id[2], 200000000000ull);
  EXPECT_EQ(d.particles.y[2], 2.125);
  EXPECT_EQ(d.particles.vz[1], 1.625);  // i + 0.125 * 5
  EXPECT_EQ(d.time, 3.5);
}

TEST(IoTipsy, StandardWithGasDarkAndStars) {
  // Big-endian, 2 gas + 1 dark + 2 stars (ChaNGa layout): gas skipped, stars keep their
  // potential (the last float of the 11-float star record).
  std::string b;
  put_bytes(b, 0.25, true);
  for (std::int32_t v : {5, 3, 2, 1, 2, 0}) put_bytes(b, v, true);
  for (int k = 0; k < 24; ++k) put_bytes(b, 9.0f, true);  // two gas records
  for (float v : {0.5f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 0.01f, -7.f}) put_bytes(b, v, true);
  for (int i = 0; i < 2; ++i)
    for (float v : {0.25f, float(10 + i), 0.f, 0.f, 0.f, 0.f, 1.f, 0.02f, 3.f, 0.01f, -8.f - i})
      put_bytes(b, v, true);
  const TipsyData d = parse_tipsy(reinterpret_cast<const unsigned char*>(b.data()), b.size(), "c");
  EXPECT_TRUE(d.big_endian);
  EXPECT_EQ(d.skipped_gas, 2u);
  EXPECT_EQ(d.n_dark, 1u);
  EXPECT_EQ(d.n_star, 2u);
  ASSERT_EQ(d.particles.size(), 3u);
  EXPECT_EQ(d.particles.z[0], 3.0);
  EXPECT_EQ(d.particles.pot[0], -7.0);
  EXPECT_EQ(d.particles.x[2], 11.0);
  EXPECT_EQ(d.particles.vz[2], 1.0);
  EXPECT_EQ(d.particles.pot[2], -9.0);
  EXPECT_EQ(d.particles.id[0], 2u);  // the file position, the two gas records counted (iOrder)
  EXPECT_EQ(d.particles.id[2], 4u);
}

// ---- Gadget binary ------------------------------------------------------------------------------

TEST(IoGadget, AllVariantsRoundTrip) {
  ScratchDir dir("gadget");
  const ParticleSet p = test::sample_particles(20);
  for (int format : {1, 2})
    for (bool big : {false, true})
      for (bool dbl : {false, true})
        for (bool long_ids : {false, true}) {
          SCOPED_TRACE(testing::Message() << "format " << format << " big " << big << " double "
                                          << dbl << " long ids " << long_ids);
          GadgetWriteOptions o{format, big, dbl, long_ids, false};
          const std::string path = dir.file("ic.gadget");
          write_gadget_binary(path, p, 0.75, o);
          const GadgetBinaryData d = read_gadget_binary(path);
          EXPECT_EQ(d.format, format);
          EXPECT_EQ(d.big_endian, big);
          EXPECT_EQ(d.double_precision, dbl);
          EXPECT_EQ(d.long_ids, long_ids);
          EXPECT_EQ(d.time, 0.75);
          // Every column the blocks hold (POS, VEL, ID, MASS), in float32 unless double.
          test::expect_columns(d.particles, p,
                               test::kPositions | test::kVelocities | test::kMasses | test::kIds,
                               !dbl);
        }
}

// save_snapshot (hoshi ic, run --snapshot-format gadget) wrote double positions and 64-bit ids,
// which a Gadget-2, Gadget-4, GIZMO or AREPO built with the defaults cannot read as initial
// conditions. By default it now writes float32 and 32-bit ids; WriteOptions selects double and
// 64-bit ids (the header's flag_doubleprecision says which). Block lengths: format 2, five blocks
// (HEAD POS VEL ID MASS), each 16 bytes of label record and 8 of markers around its data.
// Float32 blocks: a value beyond float32's range is refused (it was written as inf: a file in
// cgs units, masses of 1e43 g); double precision takes it.
TEST(IoGadget, Float32BlocksRefuseValuesBeyondTheirRange) {
  ScratchDir dir("gadget");
  ParticleSet p = test::sample_particles(10);
  for (double& m : p.m) m = 2e43;
  p.m[7] = 3e43;  // not all equal: a MASS block, not the MassTable
  GadgetWriteOptions o;
  const std::string msg =
      test::invalid_argument_message([&] { write_gadget_binary(dir.file("s.gadget"), p, 0, o); });
  EXPECT_NE(
      msg.find(dir.file("s.gadget") + ": Gadget binary: field MASS[0]: value 2e+43 (particle id " +
               std::to_string(p.id[0]) +
               ": beyond "
               "float32's range of +-3.4e38; write double precision"),
      std::string::npos)
      << msg;
  EXPECT_FALSE(std::filesystem::exists(dir.file("s.gadget")));
  p.m.assign(p.size(), 2e43);  // equal: the MassTable is a double
  p.z[5] = -4e38;
  const std::string pos =
      test::invalid_argument_message([&] { write_gadget_binary(dir.file("s.gadget"), p, 0, o); });
  EXPECT_NE(pos.find("field POS[5, 2]: value -4e+38"), std::string::npos) << pos;
  o.double_precision = true;
  write_gadget_binary(dir.file("s.gadget"), p, 0, o);
  EXPECT_EQ(read_gadget_binary(dir.file("s.gadget")).particles.z[5], -4e38);
}

TEST(IoGadget, SnapshotsAreWhatADefaultGadgetReadsUnlessAskedOtherwise) {
  ScratchDir dir("gadget");
  ParticleSet p = test::sample_particles(20);
  p.m[4] *= 2;  // unequal masses: a MASS block (equal ones: the MassTable, below)
  const std::size_t n = p.size();
  const auto flag_double = [](const std::string& path) {  // header byte 196, after 16 + 4
    const std::string b = test::read_all(path);
    std::int32_t f = -1;
    std::memcpy(&f, b.data() + 16 + 4 + 196, 4);
    return f;
  };
  for (const bool dbl : {false, true})
    for (const bool long_ids : {false, true}) {
      SCOPED_TRACE(testing::Message() << "double " << dbl << " long ids " << long_ids);
      WriteOptions w;
      w.gadget_double = dbl;
      w.gadget_long_ids = long_ids;
      const std::string path =
          dir.file(std::string("s") + (dbl ? "d" : "f") + (long_ids ? "64" : "32") + ".gadget");
      save_snapshot(path, SnapshotFormat::gadget, p, SnapshotInfo{}, w);
      const std::size_t real = dbl ? 8 : 4, id = long_ids ? 8 : 4;
      EXPECT_EQ(std::filesystem::file_size(path), 5 * 24 + 256 + n * (7 * real + id));
      EXPECT_EQ(flag_double(path), dbl ? 1 : 0);
      const GadgetBinaryData d = read_gadget_binary(path);
      EXPECT_EQ(d.double_precision, dbl);
      EXPECT_EQ(d.long_ids, long_ids);
      for (std::size_t i = 0; i < n; ++i) {
        const auto r = [&](double v) { return dbl ? v : double(float(v)); };
        ASSERT_EQ(d.particles.y[i], r(p.y[i]));
        ASSERT_EQ(d.particles.vx[i], r(p.vx[i]));
        ASSERT_EQ(d.particles.m[i], r(p.m[i]));
        ASSERT_EQ(d.particles.id[i], p.id[i]);
      }
    }
  // Equal masses: the header's MassTable (a double, exact) and no MASS block, as Gadget's own
  // initial conditions have them.
  const ParticleSet equal = test::sample_particles(20);
  save_snapshot(dir.file("eq.gadget"), SnapshotFormat::gadget, equal, SnapshotInfo{});
  EXPECT_EQ(std::filesystem::file_size(dir.file("eq.gadget")), 4 * 24 + 256 + n * (6 * 4 + 4));
  const GadgetBinaryData eq = read_gadget_binary(dir.file("eq.gadget"));
  double table = 0;
  std::memcpy(&table, test::read_all(dir.file("eq.gadget")).data() + 16 + 4 + 24 + 8, 8);
  EXPECT_EQ(table, equal.m[0]);  // MassTable[1]
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(eq.particles.m[i], equal.m[0]);
  // An id that 32 bits cannot hold is refused (it was about to wrap) and no file is left, and so
  // is one from 2^31 on (Gadget-4 keeps the top bit); 64-bit ids keep it.
  ParticleSet big = p;
  big.id[7] = (std::uint64_t{1} << 31) - 1;
  require_writable(SnapshotFormat::gadget, big, WriteOptions{});
  big.id[7] = std::uint64_t{1} << 31;
  EXPECT_NE(test::invalid_argument_message([&] {
              require_writable(SnapshotFormat::gadget, big, WriteOptions{});
            }).find("field ID: value 2147483648 (particle 7) is 2^31 or more"),
            std::string::npos);
  big.id[7] = (std::uint64_t{1} << 32) + 5;
  const std::string path = dir.file("big.gadget");
  const std::string msg = test::invalid_argument_message(
      [&] { save_snapshot(path, SnapshotFormat::gadget, big, SnapshotInfo{}); });
  EXPECT_NE(msg.find("field ID: value 4294967301 (particle 7) is 2^31 or more, beyond 32-bit "
                     "Gadget ids"),
            std::string::npos)
      << msg;
  // The same check before the run, and the file named when one is written (it was not).
  EXPECT_EQ(path + ": " + test::invalid_argument_message([&] {
              require_writable(SnapshotFormat::gadget, big, WriteOptions{});
            }),
            msg);
  EXPECT_FALSE(std::filesystem::exists(path));
  WriteOptions w64;
  w64.gadget_long_ids = true;
  require_writable(SnapshotFormat::gadget, big, w64);
  save_snapshot(path, SnapshotFormat::gadget, big, SnapshotInfo{}, w64);
  EXPECT_EQ(read_gadget_binary(path).particles.id[7], big.id[7]);
  // Other formats hold 64-bit ids.
  require_writable(SnapshotFormat::hdf5, big, WriteOptions{});
}

// The Gadget and CSV writers built the whole file in memory (1e8 particles: 3.2 GB of Gadget
// float32, ~16 GB of CSV text); they now write it in pieces of ~1 MiB. Files of several pieces
// read back whole.
TEST(IoWriters, FilesOfManyPiecesReadBackWhole) {
  ScratchDir dir("pieces");
  const ParticleSet p = test::sample_particles(40000);  // Gadget 1.3 MB, CSV ~5 MB
  write_gadget_binary(dir.file("a.gadget"), p, 0.5, GadgetWriteOptions{});
  write_csv(dir.file("a.csv"), p);
  EXPECT_EQ(std::filesystem::file_size(dir.file("a.gadget")), 5 * 24 + 256 + p.size() * 32);
  const GadgetBinaryData g = read_gadget_binary(dir.file("a.gadget"));
  const ParticleSet c = read_csv(dir.file("a.csv"));
  ASSERT_EQ(g.particles.size(), p.size());
  ASSERT_EQ(c.size(), p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(g.particles.z[i], double(float(p.z[i]))) << i;
    ASSERT_EQ(g.particles.m[i], double(float(p.m[i]))) << i;
    ASSERT_EQ(g.particles.id[i], p.id[i]) << i;
    ASSERT_EQ(c.z[i], p.z[i]) << i;  // shortest round-trip text: exact
    ASSERT_EQ(c.vy[i], p.vy[i]) << i;
    ASSERT_EQ(c.id[i], p.id[i]) << i;
  }
}

// ParticleSet::append reserved exactly the combined size on every call, so a multi-file snapshot
// of K members copied everything K times (2e6 particles in 250 files: 14.6 s instead of 1 s).
// Appends now grow by at least 1.5x: few reallocations for many appends, and one append onto
// a set (the galaxy models' components) still allocates the combined size when it is 1.5x or
// more.
TEST(ParticleSetAppend, GrowsGeometricallyOverManyAppends) {
  ParticleSet all, one;
  one.push_back(1, 2, 3, 0, 0, 0, 1, 0);
  int reallocations = 0;
  const double* data = nullptr;
  for (int k = 0; k < 1000; ++k) {
    one.id[0] = static_cast<std::uint64_t>(k);
    all.append(one);
    if (all.x.data() != data) ++reallocations, data = all.x.data();
  }
  ASSERT_EQ(all.size(), 1000u);
  EXPECT_EQ(all.id[999], 999u);
  EXPECT_LE(reallocations, 20);  // 1.5x growth: log(1000) / log(1.5) = 17
  ParticleSet a = test::sample_particles(1000), b = test::sample_particles(600);
  a.append(b);
  EXPECT_EQ(a.x.capacity(), 1600u);
  EXPECT_EQ(a.id.capacity(), 1600u);
  a.shrink_to_fit();
  EXPECT_EQ(a.pot.capacity(), a.size());
}

// A two-file set NAME.0, NAME.1 (format 1, little-endian: num_files at byte 128, npartTotal[1]
// at byte 104): read in member order; header totals that disagree with the members are an error
// (they were not checked for sets).
// A cosmological run's snapshot (Omega0 > 0: comoving positions, Gadget's v / sqrt(a), the
// scale factor as time) is read as it is, and the commands say so: HDF5 with Omega0 in its
// Header (Gadget-2/3) or Parameters (Gadget-4), Gadget binary in its header.
TEST(IoGadget, CosmologicalSnapshotsAreNoted) {
  ScratchDir dir("cosmo");
  const ParticleSet p = test::sample_particles(8);
  const double omega0 = 0.3;
  // Gadget format 1: the header starts after the 4-byte record marker; Omega0 follows npart,
  // mass, time, redshift, two flags, npartTotal, flag_cooling, num_files and BoxSize.
  GadgetWriteOptions o;
  o.format = 1;
  o.double_precision = true;
  write_gadget_binary(dir.file("c.g1"), p, 0.5, o);
  EXPECT_EQ(load_snapshot(dir.file("c.g1")).note, "");
  std::string bytes = test::read_all(dir.file("c.g1"));
  std::memcpy(bytes.data() + 4 + 24 + 48 + 8 + 8 + 8 + 24 + 4 + 4 + 8, &omega0, 8);
  test::write_all(dir.file("c.g1"), bytes);
  const LoadedSnapshot g = load_snapshot(dir.file("c.g1"));
  EXPECT_NE(g.note.find("cosmological snapshot (Omega0 0.3, Time 0.5"), std::string::npos)
      << g.note;
  EXPECT_EQ(g.particles.x, p.x);  // taken as they are
  // HDF5: hoshi's own snapshot says Omega0 = 0; with 0.3 in its Header it is noted.
  write_hdf5_snapshot(dir.file("c.hdf5"), p, SnapshotInfo{});
  EXPECT_EQ(load_snapshot(dir.file("c.hdf5")).note, "");
  test::set_hdf5_double(dir.file("c.hdf5"), "Header", "Omega0", omega0);
  EXPECT_NE(load_snapshot(dir.file("c.hdf5")).note.find("cosmological snapshot (Omega0 0.3"),
            std::string::npos);
}

TEST(IoGadget, MultiFileSetsAndTheirTotals) {
  ScratchDir dir("gadget");
  ParticleSet a = test::sample_particles(6, 1), b = test::sample_particles(4, 2);
  for (std::size_t i = 0; i < b.size(); ++i) b.id[i] += 100000;
  GadgetWriteOptions o;
  o.format = 1;
  const auto write = [&](std::uint32_t total1) {
    for (int k = 0; k < 2; ++k) {
      std::string bytes = gadget_binary_bytes(k == 0 ? a : b, 0.5, o);
      const std::int32_t two = 2;
      std::memcpy(&bytes[128], &two, 4);
      std::memcpy(&bytes[104], &total1, 4);
      test::write_all(dir.file("set." + std::to_string(k)), bytes);
    }
  };
  write(10);
  const GadgetBinaryData d = read_gadget_binary(dir.file("set.1"));
  ASSERT_EQ(d.particles.size(), 10u);
  EXPECT_EQ(d.particles.id[6], b.id[0]);
  write(11);
  const std::string msg =
      test::invalid_argument_message([&] { read_gadget_binary(dir.file("set.0")); });
  EXPECT_NE(msg.find("set.0: field HEAD.npartTotal[1]: value 11"), std::string::npos) << msg;
}

TEST(IoGadget, MassTableAndGasAreHandled) {
  // Format 1, little-endian, float: 2 gas + 3 halo particles, halo mass in the MassTable,
  // gas masses in the MASS block, followed by a gas-only U block that must be ignored.
  std::string b;
  const bool be = false;
  auto marker = [&](std::uint32_t v) { put_bytes(b, v, be); };
  marker(256);
  const std::size_t h0 = b.size();
  for (std::uint32_t n : {2u, 3u, 0u, 0u, 0u, 0u}) put_bytes(b, n, be);
  for (double m : {0.0, 0.125, 0.0, 0.0, 0.0, 0.0}) put_bytes(b, m, be);
  put_bytes(b, 4.0, be);  // time
  put_bytes(b, 0.0, be);  // redshift
  put_bytes(b, 0, be), put_bytes(b, 0, be);
  for (std::uint32_t n : {2u, 3u, 0u, 0u, 0u, 0u}) put_bytes(b, n, be);
  put_bytes(b, 0, be);  // flag_cooling
  put_bytes(b, 1, be);  // num_files
  b.resize(h0 + 256, '\0');
  marker(256);
  marker(5 * 12);
  for (int i = 0; i < 15; ++i) put_bytes(b, float(i), be);
  marker(5 * 12);
  marker(5 * 12);
  for (int i = 0; i < 15; ++i) put_bytes(b, float(-i), be);
  marker(5 * 12);
  marker(5 * 4);
  for (std::uint32_t i = 0; i < 5; ++i) put_bytes(b, 10 + i, be);
  marker(5 * 4);
  marker(2 * 4);
  put_bytes(b, 0.5f, be), put_bytes(b, 0.5f, be);
  marker(2 * 4);
  marker(2 * 4);
  put_bytes(b, 9.0f, be), put_bytes(b, 9.0f, be);  // U (gas internal energy)
  marker(2 * 4);
  const GadgetBinaryData d =
      parse_gadget_binary(reinterpret_cast<const unsigned char*>(b.data()), b.size(), "mixed");
  EXPECT_EQ(d.skipped[0], 2u);
  EXPECT_EQ(d.loaded[1], 3u);
  ASSERT_EQ(d.particles.size(), 3u);
  EXPECT_EQ(d.particles.id[0], 12u);
  EXPECT_EQ(d.particles.x[0], 6.0);
  EXPECT_EQ(d.particles.vz[2], -14.0);
  EXPECT_EQ(d.particles.m[1], 0.125);
}

// ---- detection -------------------------------------------------------------------------------

TEST(IoDetect, ContentDecidesBeforeTheExtension) {
  // A CSV under an HDF5 or Gadget extension, and an HDF5 file under .csv, are read as what
  // they contain (docs/io.md); a file that is none of the formats, under an extension that
  // names none, is refused.
  ScratchDir dir("detect");
  const ParticleSet p = test::sample_particles(20);
  const std::string csv = dir.file("p.csv");
  write_csv(csv, p);
  const std::string text = test::read_all(csv);
  for (const char* name : {"csv_named.hdf5", "csv_named.dat", "csv_named"}) {
    const std::string f = dir.file(name);
    test::write_all(f, text);
    EXPECT_EQ(detect_snapshot_format(f), SnapshotFormat::csv) << name;
    const ParticleSet q = read_particles(f);
    EXPECT_EQ(q.x, p.x) << name;
    EXPECT_EQ(q.id, p.id) << name;
  }
  const std::string h5 = dir.file("hdf5_named.csv");
  write_hdf5_snapshot(h5, p, SnapshotInfo{});
  EXPECT_EQ(detect_snapshot_format(h5), SnapshotFormat::hdf5);
  EXPECT_EQ(read_particles(h5).x, p.x);
  // The header with spaces (read_csv ignores them) is still a CSV; one wrong letter is not.
  const std::string spaced = dir.file("spaced");
  test::write_all(spaced, " id, x, y, z, vx, vy, vz, m\n0,1,2,3,0,0,0,1\n");
  EXPECT_EQ(detect_snapshot_format(spaced), SnapshotFormat::csv);
  const std::string other = dir.file("other");
  test::write_all(other, "id,x,y,z,vx,vy,vz,q\n0,1,2,3,0,0,0,1\n");
  EXPECT_FALSE(detect_snapshot_format(other).has_value());
  EXPECT_THROW(read_particles(other), std::invalid_argument);
}

// Comments, numpy's header and a byte order mark: numpy.savetxt(f, a, delimiter=",",
// header="id,x,y,z,vx,vy,vz,m") writes the header as "# id,...", spreadsheets begin with a
// UTF-8 byte order mark, and tables carry "#" comment lines; all three were refused as a wrong
// header. They read as the plain file does, and are detected as CSV from their content.
// What Gadget binary and CSV cannot record, as advice on reading such a file back (hoshi ic and
// hoshi run print it): the options for henon and galaxy units and a G of their own; for a
// custom system, which no option names, its scalings (it suggested "units of 3.08568e+24 cm":
// no such option, and six digits).
TEST(IoUnits, WhatGadgetAndCsvCannotRecordIsSaidWithTheOptionsThatReadItBack) {
  SnapshotInfo info;  // henon, G = 1
  for (SnapshotFormat f :
       {SnapshotFormat::hdf5, SnapshotFormat::tipsy, SnapshotFormat::gadget, SnapshotFormat::csv})
    EXPECT_EQ(unrecorded_units(f, info), "") << to_string(f);
  info.G = 2;
  EXPECT_EQ(unrecorded_units(SnapshotFormat::csv, info), "read it with -G 2");
  EXPECT_EQ(unrecorded_units(SnapshotFormat::hdf5, info), "");
  info.units = units_galaxy();
  info.G = 0;  // that of the units
  EXPECT_EQ(unrecorded_units(SnapshotFormat::gadget, info),
            "read it with --units galaxy (hoshi run, ic; -G 43007.105731706295 for forces, "
            "analyze)");
  info.G = 2 * units_galaxy().G();
  EXPECT_EQ(unrecorded_units(SnapshotFormat::gadget, info)
                .rfind("read it with --units galaxy -G 86014.", 0),
            0u)
      << unrecorded_units(SnapshotFormat::gadget, info);
  info.units_known = false;  // a file without units: nothing to say unless it records a G
  info.G = 0;
  EXPECT_EQ(unrecorded_units(SnapshotFormat::csv, info), "");
  info.units_known = true;
  info.units = units_from_cgs(3.0856775814913673e24, 1.989e43, 1e5);
  info.G = 0;
  ASSERT_EQ(info.units.name, "custom");
  EXPECT_EQ(unrecorded_units(SnapshotFormat::csv, info),
            "its units (3.085677581491367e+24 cm, 1.989e+43 g, 100000 cm/s) are not a system "
            "hoshi's --units names: write HDF5 to keep them");
}

// An HDF5 file of a -G run keeps /Units (the unit system's G) and records its G in /Parameters;
// yt and pynbody read only /Units, so hoshi ic and run say how their masses relate.
TEST(IoUnits, AnHdf5FileWhoseGIsNotItsUnitsSaysHowToScaleMasses) {
  SnapshotInfo info;  // henon, G = that of the units
  for (SnapshotFormat f :
       {SnapshotFormat::hdf5, SnapshotFormat::tipsy, SnapshotFormat::gadget, SnapshotFormat::csv})
    EXPECT_EQ(units_imply_another_G(f, info), "") << to_string(f);
  info.G = 1;  // henon's own
  EXPECT_EQ(units_imply_another_G(SnapshotFormat::hdf5, info), "");
  info.G = 2;
  const std::string text = units_imply_another_G(SnapshotFormat::hdf5, info);
  EXPECT_EQ(text.rfind("its /Units imply G = 1 and its G = 2 is in "
                       "/Parameters/GravityConstantInternal",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("multiply theirs by 2 "), std::string::npos) << text;
  EXPECT_EQ(units_imply_another_G(SnapshotFormat::tipsy, info), "");  // G = 1 units of its own
  info.units = units_galaxy();
  info.G = units_galaxy().G() / 4;
  EXPECT_NE(units_imply_another_G(SnapshotFormat::hdf5, info).find("multiply theirs by 0.25 "),
            std::string::npos);
  info.units_known = false;  // no /Units written: nothing implies another G
  EXPECT_EQ(units_imply_another_G(SnapshotFormat::hdf5, info), "");
}

TEST(IoCsv, CommentsNumpyHeaderAndByteOrderMarkReadAsThePlainFile) {
  ScratchDir dir("csv");
  const ParticleSet p = test::sample_particles(20);
  const std::string plain = dir.file("p.csv");
  write_csv(plain, p);
  const std::string text = test::read_all(plain);
  const std::string body = text.substr(text.find('\n') + 1);
  const std::string comments(5000, '#');  // beyond the 4096 bytes detection reads: by extension
  // numpy.savetxt(f, a, delimiter=",", header="id,x,y,z,vx,vy,vz,m") as it writes: "%.18e" in
  // every column, the ids too (they were refused as "not a non-negative integer").
  std::string numpy = "# id,x,y,z,vx,vy,vz,m\n";
  for (std::size_t i = 0; i < p.size(); ++i) {
    char row[512];
    std::snprintf(row, sizeof row, "%.18e,%.18e,%.18e,%.18e,%.18e,%.18e,%.18e,%.18e\n",
                  static_cast<double>(p.id[i]), p.x[i], p.y[i], p.z[i], p.vx[i], p.vy[i], p.vz[i],
                  p.m[i]);
    numpy += row;
  }
  // C's "%+.17e" (a '+' before every positive number: strtod and numpy read it; it was "not a
  // number").
  std::string plus = "id,x,y,z,vx,vy,vz,m\n";
  for (std::size_t i = 0; i < p.size(); ++i) {
    char row[512];
    std::snprintf(row, sizeof row, "+%llu,%+.17e,%+.17e,%+.17e,%+.17e,%+.17e,%+.17e,%+.17e\n",
                  static_cast<unsigned long long>(p.id[i]), p.x[i], p.y[i], p.z[i], p.vx[i],
                  p.vy[i], p.vz[i], p.m[i]);
    plus += row;
  }
  for (const std::string& variant :
       {numpy, plus, "# id,x,y,z,vx,vy,vz,m\n" + body, "\xEF\xBB\xBF" + text,
        "# made by a script\n\n#units: kpc\n" + text, "\xEF\xBB\xBF# a comment\n" + text,
        text.substr(0, text.find('\n') + 1) + "# a comment between rows\n\n" + body,
        comments + "\n" + text}) {
    SCOPED_TRACE(variant.substr(0, 40));
    const bool long_comment = variant.compare(0, comments.size(), comments) == 0;
    for (const char* name : {"v.csv", "v.dat"}) {
      if (long_comment && name[2] == 'd') continue;  // by its extension: a Gadget file
      const std::string f = dir.file(name);
      test::write_all(f, variant);
      EXPECT_EQ(detect_snapshot_format(f), SnapshotFormat::csv) << name;
      const ParticleSet q = read_particles(f);
      EXPECT_EQ(q.x, p.x);
      EXPECT_EQ(q.m, p.m);
      EXPECT_EQ(q.id, p.id);
    }
  }
  // Still refused, naming the line: another header after comments, only comments, a file
  // that is empty but for a BOM or newlines, ids that are not whole numbers up to 2^53.
  const std::string bad = dir.file("bad.csv");
  for (const auto& [content, message] : std::vector<std::pair<std::string, std::string>>{
           {"# a comment\nid,x,y,z,vx,vy,vz\n0,1,2,3,0,0,0\n",
            ":2: header is 'id,x,y,z,vx,vy,vz': no column m"},
           {"id,x,y,z,vx,vy,vz,m,x\n0,1,2,3,0,0,0,1,1\n",
            ":1: header is 'id,x,y,z,vx,vy,vz,m,x': column x named twice"},
           // A file without its header said "header is '0,1,...'": it is data.
           {"0,1,2,3,0,0,0,1\n", ":1: no header line before the data ('0,1,2,3,0,0,0,1')"},
           {"# a comment\n\n", ":2: no header id,x,y,z,vx,vy,vz,m (only blank and # lines)"},
           {"\xEF\xBB\xBF", ":1: empty file"},
           {"\n\n", ":1: empty file"},
           {text + "1.5e+00,1,2,3,0,0,0,1\n", ":22: field id: value '1.5e+00' (not a non-negative"},
           {text + "-1.0,1,2,3,0,0,0,1\n", ":22: field id: value '-1.0' (not a non-negative"},
           {text + "1e16,1,2,3,0,0,0,1\n", ":22: field id: value '1e16' (not a non-negative"},
           {text + "99,++1,2,3,0,0,0,1\n", ":22: field x: value '++1' (not a number)"},
           {text + "99,1,+-2,3,0,0,0,1\n", ":22: field y: value '+-2' (not a number)"},
           {text + "99,1,2,+,0,0,0,1\n", ":22: field z: value '+' (not a number)"},
           {text + "+-99,1,2,3,0,0,0,1\n", ":22: field id: value '+-99' (not a non-negative"}}) {
    test::write_all(bad, content);
    const std::string error = test::invalid_argument_message([&] { read_particles(bad); });
    EXPECT_NE(error.find(bad + message), std::string::npos)
        << content.substr(0, 20) << ": " << error;
  }
}

// The header names the columns, in any order: x, y, z, vx, vy, vz, m, an optional id (the
// particles are numbered in file order without one) and others, skipped (a table with a type
// or a potential column). They had to be exactly id,x,y,z,vx,vy,vz,m.
TEST(IoCsv, ColumnsAreFoundByTheirNames) {
  ScratchDir dir("csv_columns");
  const ParticleSet p = test::sample_particles(5);
  auto rows = [&](const std::string& header, auto&& row) {
    std::string text = header + "\n";
    for (std::size_t i = 0; i < p.size(); ++i) text += row(i) + "\n";
    return text;
  };
  auto num = [](double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
  };
  const std::string reordered = rows("m, x,y,z, id, vx,vy,vz, type", [&](std::size_t i) {
    return num(p.m[i]) + "," + num(p.x[i]) + "," + num(p.y[i]) + "," + num(p.z[i]) + "," +
           std::to_string(p.id[i]) + "," + num(p.vx[i]) + "," + num(p.vy[i]) + "," + num(p.vz[i]) +
           ",1";
  });
  const std::string no_ids = rows("# x,y,z,vx,vy,vz,m", [&](std::size_t i) {
    return num(p.x[i]) + "," + num(p.y[i]) + "," + num(p.z[i]) + "," + num(p.vx[i]) + "," +
           num(p.vy[i]) + "," + num(p.vz[i]) + "," + num(p.m[i]);
  });
  for (const auto& [name, text, ids_kept] :
       {std::tuple{"reordered.csv", reordered, true}, std::tuple{"no_ids.txt", no_ids, false}}) {
    const std::string f = dir.file(name);
    test::write_all(f, text);
    EXPECT_EQ(detect_snapshot_format(f), SnapshotFormat::csv) << name;
    const ParticleSet q = read_particles(f);
    SCOPED_TRACE(name);
    test::expect_columns(q, p, test::kPositions | test::kVelocities | test::kMasses);
    for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(q.id[i], ids_kept ? p.id[i] : i) << name;
  }
  // A row's field count follows the header's (9 columns here), and errors name hoshi's field.
  const std::string bad = dir.file("bad.csv");
  test::write_all(bad, "m,x,y,z,id,vx,vy,vz,type\n-1,0,0,0,0,0,0,0,1\n1,0,0,0\n");
  EXPECT_NE(test::invalid_argument_message([&] {
              read_particles(bad);
            }).find(bad + ":2: field m: value '-1'"),
            std::string::npos);
  test::write_all(bad, "m,x,y,z,id,vx,vy,vz,type\n1,0,0,0,0,0,0,0,1\n1,0,0,0\n");
  EXPECT_NE(test::invalid_argument_message([&] {
              read_particles(bad);
            }).find(bad + ":3: expected 9 fields (the header's columns), found 4"),
            std::string::npos);
}

}  // namespace
}  // namespace hoshi::io
