// Bad input to every reader: each case must give one std::invalid_argument whose single-line
// message names the file, the field and the value.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "io/byte_reader.hpp"
#include "io/csv.hpp"
#include "io/gadget_binary.hpp"
#include "io/hdf5_snapshot.hpp"
#include "io/snapshot_io.hpp"
#include "io/tipsy.hpp"
#include "io_test_util.hpp"

namespace hoshi::io {
namespace {

using test::ScratchDir;

// The message of load_snapshot(path), checked to be one line naming the file and `needles`.
void expect_error(const std::string& path, std::initializer_list<std::string> needles) {
  const std::string msg = test::invalid_argument_message([&] { load_snapshot(path); });
  ASSERT_FALSE(msg.empty()) << path << " was accepted";
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  for (const auto& n : needles)
    EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
}

ParticleSet small_set() {
  return test::sample_particles(8);
}

SnapshotInfo henon_info() {
  return SnapshotInfo{};
}

// ---- every format: values ------------------------------------------------------------------

struct FormatCase {
  SnapshotFormat format;
  const char* name;
  // The fields a value error names: y of particle 3, vx of particle 5, m of particle 2 (the
  // dataset or block and row where the format has them; hdf5 gave "field m" before).
  const char* y3;
  const char* vx5;
  const char* m2;
};

class BadValues : public ::testing::TestWithParam<FormatCase> {
 protected:
  std::string write(const ScratchDir& dir, const ParticleSet& p) {
    const std::string path = dir.file(std::string("s.") + GetParam().name);
    save_snapshot(path, GetParam().format, p, henon_info());
    return path;
  }
};

TEST_P(BadValues, NaNPosition) {
  ScratchDir dir("bad");
  ParticleSet p = small_set();
  p.y[3] = std::numeric_limits<double>::quiet_NaN();
  // Standard tipsy has no ids: particles are numbered in file order.
  const auto id = GetParam().format == SnapshotFormat::tipsy ? 3 : p.id[3];
  expect_error(write(dir, p),
               {std::string("field ") + GetParam().y3, "nan", "id " + std::to_string(id)});
}

TEST_P(BadValues, InfiniteVelocity) {
  ScratchDir dir("bad");
  ParticleSet p = small_set();
  p.vx[5] = std::numeric_limits<double>::infinity();
  expect_error(write(dir, p), {std::string("field ") + GetParam().vx5, "inf"});
}

TEST_P(BadValues, NegativeMass) {
  ScratchDir dir("bad");
  ParticleSet p = small_set();
  p.m[2] = -0.5;
  expect_error(write(dir, p), {std::string("field ") + GetParam().m2, "-0.5"});
}

TEST_P(BadValues, ZeroTotalMass) {
  ScratchDir dir("bad");
  ParticleSet p = small_set();
  for (double& m : p.m) m = 0;
  expect_error(write(dir, p), {"total mass"});
}

TEST_P(BadValues, DuplicateIds) {
  ScratchDir dir("bad");
  ParticleSet p = small_set();
  p.id[6] = p.id[1];
  std::string path;
  if (GetParam().format == SnapshotFormat::tipsy) {
    // Standard tipsy has no ids; Bonsai's little-endian version-2 tipsy has 64-bit ids.
    std::string b;
    put_bytes(b, 0.0, false);
    for (std::int32_t v : {8, 3, 0, 8, 0, 2}) put_bytes(b, v, false);
    for (std::size_t i = 0; i < p.size(); ++i) {
      for (double v : {p.m[i], p.x[i], p.y[i], p.z[i], p.vx[i], p.vy[i], p.vz[i]})
        put_bytes(b, static_cast<float>(v), false);
      put_bytes(b, p.id[i], false);
    }
    path = dir.file("bonsai.tipsy");
    test::write_all(path, b);
  } else {
    path = write(dir, p);
  }
  expect_error(path, {"field id", std::to_string(p.id[1]), "duplicate"});
}

TEST_P(BadValues, TruncatedFile) {
  ScratchDir dir("bad");
  const std::string path = write(dir, small_set());
  std::string bytes = test::read_all(path);
  test::write_all(path, bytes.substr(0, bytes.size() - 7));
  const std::string msg = test::invalid_argument_message([&] { load_snapshot(path); });
  ASSERT_FALSE(msg.empty());
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, BadValues,
    ::testing::Values(FormatCase{SnapshotFormat::hdf5, "hdf5", "PartType1/Coordinates[3, 1]",
                                 "PartType1/Velocities[5, 0]", "PartType1/Masses[2]: "},
                      FormatCase{SnapshotFormat::tipsy, "tipsy", "y", "vx", "m"},
                      FormatCase{SnapshotFormat::gadget, "gadget", "POS[3, 1]", "VEL[5, 0]",
                                 "MASS[2]: "}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(BadInput, MissingFileAndUnknownFormat) {
  ScratchDir dir("bad");
  expect_error(dir.file("nope.hdf5"), {"missing"});
  test::write_all(dir.file("junk.xyz"), "hello, this is not a snapshot at all");
  expect_error(dir.file("junk.xyz"), {"format", "unknown"});
}

// ---- tipsy -------------------------------------------------------------------------------------

std::string tipsy_bytes(const ScratchDir& dir) {
  write_tipsy(dir.file("t.tipsy"), small_set(), 0.0, units_henon());
  return test::read_all(dir.file("t.tipsy"));
}

// A bad value is shown in one short, printable line: control bytes escaped (a NUL cut the
// message there, its reason lost) and a long field cut with its length (a field of 1e7 digits
// made a 10 MB message).
TEST(BadCsv, ValuesInMessagesArePrintableAndShort) {
  const auto message = [](const std::string& text) {
    std::istringstream in(text);
    return test::invalid_argument_message([&] { parse_csv(in, "f.csv"); });
  };
  EXPECT_EQ(message(std::string("id,x,y,z,vx,vy,vz,m\n0,1,2,3") + '\0' + "4,0,0,0,1\n"),
            "f.csv:2: field z: value '3\\x004' (not a number)");
  EXPECT_EQ(message("id,x,y,z,vx,vy,vz,m\n0,1,2,3,0,0,0," + std::string(100000, '7') + "\n"),
            "f.csv:2: field m: value '" + std::string(64, '7') +
                "...' (100000 bytes) (outside the range of a double)");
  EXPECT_EQ(shown_value("abc"), "abc");
  EXPECT_EQ(shown_value("a\tb\x7f"), "a\\x09b\\x7f");
  EXPECT_EQ(shown_value(std::string(70, 'x'), 64), std::string(64, 'x') + "... (70 bytes)");
}

TEST(BadTipsy, HeaderCountDisagreesWithData) {
  ScratchDir dir("bad");
  std::string b = tipsy_bytes(dir);
  b[11] = 9, b[23] = 9;  // nbodies = ndark = 9 (big-endian low bytes), data holds 8
  const std::string path = dir.file("count.bin");
  test::write_all(path, b);
  expect_error(path, {"header.nbodies", "value 9", "truncated"});
}

// A padded file 4 bytes short has the size of the unpadded 28-byte layout: it was read that way,
// every record shifted by 4 bytes (with exit 0 where the shifted masses stayed positive). The
// 28-byte layout would put the first mass where the pad is (0 here): reported as truncated.
TEST(BadTipsy, FourBytesShortIsTruncatedNotTheUnpaddedLayout) {
  ScratchDir dir("bad");
  std::string b = tipsy_bytes(dir);
  b.resize(b.size() - 4);
  const std::string path = dir.file("short.tipsy");
  test::write_all(path, b);
  expect_error(path, {"header.nbodies", "value 8", "truncated"});
  // The genuine unpadded layout (the same file without its 4 pad bytes) still reads.
  std::string unpadded = tipsy_bytes(dir);
  unpadded.erase(28, 4);
  const TipsyData d = parse_tipsy(reinterpret_cast<const unsigned char*>(unpadded.data()),
                                  unpadded.size(), "unpadded");
  EXPECT_EQ(d.particles.size(), small_set().size());
  EXPECT_EQ(d.particles.m[0], static_cast<float>(small_set().m[0]));
}

TEST(BadTipsy, InconsistentHeaderSums) {
  ScratchDir dir("bad");
  std::string b = tipsy_bytes(dir);
  b[11] = 7;  // nbodies 7 but ndark 8
  const std::string path = dir.file("sum.tipsy");
  test::write_all(path, b);
  expect_error(path, {"header.nbodies: value 7"});
}

TEST(BadTipsy, WrongDimension) {
  ScratchDir dir("bad");
  std::string b = tipsy_bytes(dir);
  b[15] = 2;
  const std::string path = dir.file("dim.tipsy");
  test::write_all(path, b);
  expect_error(path, {"header.ndim", "value 2"});
}

// ---- Gadget binary ------------------------------------------------------------------------------

TEST(BadGadget, CorruptRecordMarker) {
  ScratchDir dir("bad");
  std::string b =
      gadget_binary_bytes(small_set(), 0, GadgetWriteOptions{1, false, false, false, false});
  b[256 + 4] = 0x55;  // trailing marker of the header
  const std::string path = dir.file("m.gadget");
  test::write_all(path, b);
  expect_error(path, {"HEAD record marker", "corrupt"});
}

TEST(BadGadget, HeaderCountDisagreesWithBlocks) {
  ScratchDir dir("bad");
  const ParticleSet p = small_set();
  std::string b = gadget_binary_bytes(p, 0, GadgetWriteOptions{2, false, false, false, false});
  // Header starts after the 16-byte format-2 label record and the 4-byte marker;
  // npart[1] at +4, npartTotal[1] at +100.
  const std::size_t h = 16 + 4;
  b[h + 4] = 9;
  b[h + 100] = 9;
  const std::string path = dir.file("count.gadget");
  test::write_all(path, b);
  expect_error(path, {"POS record", std::to_string(8 * 12)});
}

TEST(BadGadget, TotalDisagreesWithThisFile) {
  ScratchDir dir("bad");
  std::string b =
      gadget_binary_bytes(small_set(), 0, GadgetWriteOptions{1, true, false, false, false});
  b[4 + 96 + 4 + 3] = 12;  // npartTotal[1] = 12 (big-endian low byte)
  const std::string path = dir.file("total.gadget");
  test::write_all(path, b);
  expect_error(path, {"HEAD.npartTotal[1]", "12"});
}

TEST(BadGadget, WrongBlockLabel) {
  ScratchDir dir("bad");
  std::string b =
      gadget_binary_bytes(small_set(), 0, GadgetWriteOptions{2, false, false, false, false});
  const auto at = b.find("VEL ");
  ASSERT_NE(at, std::string::npos);
  b.replace(at, 4, "XYZW");
  const std::string path = dir.file("label.gadget");
  test::write_all(path, b);
  expect_error(path, {"block label", "XYZW"});
}

// ---- HDF5 ---------------------------------------------------------------------------------------

std::string hdf5_file(const ScratchDir& dir) {
  const std::string path = dir.file("h.hdf5");
  write_hdf5_snapshot(path, small_set(), henon_info());
  return path;
}

// hdf5_file without the dataset `name` ("PartType1/Masses").
std::string hdf5_file_without(const ScratchDir& dir, const char* name) {
  const std::string path = hdf5_file(dir);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, name, H5P_DEFAULT);
  H5Fclose(f);
  return path;
}

// Sets the file's Header/MassTable to {0, entry1, 0, 0, 0, 0}.
void set_mass_table(const std::string& path, double entry1) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  const hid_t a = H5Aopen(h, "MassTable", H5P_DEFAULT);
  const double table[6] = {0, entry1, 0, 0, 0, 0};
  H5Awrite(a, H5T_NATIVE_DOUBLE, table);
  H5Aclose(a);
  H5Gclose(h);
  H5Fclose(f);
}

TEST(BadHdf5, MissingDataset) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file_without(dir, "PartType1/Velocities");
  expect_error(path, {"PartType1/Velocities", "missing"});
}

// A file without ParticleIDs (made by hand with h5py) was refused ("PartType1/ParticleIDs:
// value missing"): its particles get ids in load order, and the note says so.
TEST(BadHdf5, MissingParticleIdsAreAssignedInLoadOrder) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file_without(dir, "PartType1/ParticleIDs");
  const LoadedSnapshot s = load_snapshot(path);
  ASSERT_EQ(s.particles.size(), small_set().size());
  for (std::size_t i = 0; i < s.particles.size(); ++i) EXPECT_EQ(s.particles.id[i], i);
  EXPECT_EQ(s.particles.x, small_set().x);
  EXPECT_NE(s.note.find("no ParticleIDs dataset in PartType1: ids assigned in load order"),
            std::string::npos)
      << s.note;
}

// A type without ParticleIDs beside one with them: its ids count on from the largest stored id
// (load positions 0..7 collided with the stored ids, and the file was refused as having a
// duplicate id).
TEST(BadHdf5, AssignedIdsCountOnFromTheLargestStoredOne) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file(dir);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(H5Ocopy(f, "PartType1", f, "PartType2", H5P_DEFAULT, H5P_DEFAULT), 0);
  H5Ldelete(f, "PartType2/ParticleIDs", H5P_DEFAULT);
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  const std::int64_t this_file[6] = {0, 8, 8, 0, 0, 0};
  const std::uint32_t total[6] = {0, 8, 8, 0, 0, 0};
  hid_t a = H5Aopen(h, "NumPart_ThisFile", H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT64, this_file);
  H5Aclose(a);
  a = H5Aopen(h, "NumPart_Total", H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_UINT32, total);
  H5Aclose(a);
  H5Gclose(h);
  H5Fclose(f);
  const LoadedSnapshot s = load_snapshot(path);
  const ParticleSet ref = small_set();
  ASSERT_EQ(s.particles.size(), 16u);
  const std::uint64_t largest = *std::max_element(ref.id.begin(), ref.id.end());
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(s.particles.id[i], ref.id[i]);
    EXPECT_EQ(s.particles.id[8 + i], largest + 1 + i);
    EXPECT_EQ(s.particles.x[8 + i], ref.x[i]);
  }
  EXPECT_NE(s.note.find("no ParticleIDs dataset in PartType2: ids assigned in load order (" +
                        std::to_string(largest + 1) + ", ... after the largest stored id)"),
            std::string::npos)
      << s.note;
}

// An infinite MassTable entry (the mass of every particle of its type) is named as the entry.
TEST(BadHdf5, InfiniteMassTableIsNamed) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file_without(dir, "PartType1/Masses");
  set_mass_table(path, std::numeric_limits<double>::infinity());
  expect_error(path, {"field Header/MassTable[1]: value inf", "must be finite"});
}

TEST(BadHdf5, UnequalLengths) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file(dir);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "PartType1/Masses", H5P_DEFAULT);
  const hsize_t n = 7;
  const std::vector<double> m(n, 1.0);
  const hid_t s = H5Screate_simple(1, &n, nullptr);
  const hid_t d = H5Dcreate2(f, "PartType1/Masses", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m.data());
  H5Dclose(d);
  H5Sclose(s);
  H5Fclose(f);
  expect_error(path, {"PartType1/Masses", "value 7", "NumPart_ThisFile = 8"});
}

// A negative MassTable entry for a type without Masses was reported as "value missing (...
// MassTable[1] = -0.000000)" (std::to_string's six decimals): now the entry and its value.
TEST(BadHdf5, NegativeOrNanMassTableIsNamedWithItsValue) {
  for (const auto& [bad, text] : {std::pair{-1e-9, "value -1e-09"}, std::pair{-2.5, "value -2.5"},
                                  std::pair{std::nan(""), "value nan"}}) {
    ScratchDir dir("bad");
    const std::string path = hdf5_file_without(dir, "PartType1/Masses");
    set_mass_table(path, bad);
    expect_error(path, {"Header/MassTable[1]", text, "no Masses dataset"});
  }
  // A zero entry without Masses is a missing mass, as before.
  ScratchDir dir("bad");
  const std::string path = hdf5_file_without(dir, "PartType1/Masses");
  expect_error(path, {"PartType1/Masses", "missing", "MassTable[1] = 0"});
}

// A dataset compressed with a filter this HDF5 library lacks (h5py's lzf, id 32000) was
// "unreadable (cannot read data (truncated or corrupt file?))": the filter is named. The file
// is made with a stand-in filter of that id and name (it stores the data as they are), which
// is then unregistered.
TEST(BadHdf5, AMissingCompressionFilterIsNamed) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file(dir);
  constexpr H5Z_filter_t kLzf = 32000;
  const H5Z_class2_t stand_in = {H5Z_CLASS_T_VERS,
                                 kLzf,
                                 1,
                                 1,
                                 "lzf",
                                 nullptr,
                                 nullptr,
                                 [](unsigned, std::size_t, const unsigned[], std::size_t nbytes,
                                    std::size_t*, void**) { return nbytes; }};
  ASSERT_GE(H5Zregister(&stand_in), 0);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "PartType1/Masses", H5P_DEFAULT);
  const hsize_t n = small_set().size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(plist, 1, &n);
  ASSERT_GE(H5Pset_filter(plist, kLzf, H5Z_FLAG_MANDATORY, 0, nullptr), 0);
  const hid_t d =
      H5Dcreate2(f, "PartType1/Masses", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, plist, H5P_DEFAULT);
  ASSERT_GE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, small_set().m.data()), 0);
  H5Dclose(d);
  H5Pclose(plist);
  H5Sclose(space);
  H5Fclose(f);
  ASSERT_GE(H5Zunregister(kLzf), 0);
  expect_error(path, {"PartType1/Masses", "compressed with HDF5 filter 32000 (lzf)",
                      "which this HDF5 library does not have"});
}

TEST(BadHdf5, HeaderCountMismatch) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file(dir);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  const hid_t a = H5Aopen(h, "NumPart_Total", H5P_DEFAULT);
  const std::uint32_t total[6] = {0, 10, 0, 0, 0, 0};
  H5Awrite(a, H5T_NATIVE_UINT32, total);
  H5Aclose(a);
  H5Gclose(h);
  H5Fclose(f);
  expect_error(path, {"Header/NumPart_Total[1]", "10"});
}

// A header that claims far more particles than the datasets hold is refused before the
// particles' arrays are sized from it: a 6 KB file claiming 3e8 took ~30 GB of memory, one
// claiming 2^40 failed with std::bad_alloc ("out of memory") instead of naming the field.
TEST(BadHdf5, HeaderCountFarAboveTheRowsIsRefusedBeforeAllocating) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file(dir);
  const std::uint64_t n = std::uint64_t{1} << 40;
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
  const auto set = [&](const char* name, hid_t type, const void* values) {
    const hid_t a = H5Aopen(h, name, H5P_DEFAULT);
    EXPECT_GE(H5Awrite(a, type, values), 0) << name;
    H5Aclose(a);
  };
  const std::int64_t this_file[6] = {0, static_cast<std::int64_t>(n), 0, 0, 0, 0};
  const std::uint32_t total[6] = {0, static_cast<std::uint32_t>(n & 0xffffffffu), 0, 0, 0, 0};
  const std::uint32_t high[6] = {0, static_cast<std::uint32_t>(n >> 32), 0, 0, 0, 0};
  set("NumPart_ThisFile", H5T_NATIVE_INT64, this_file);
  set("NumPart_Total", H5T_NATIVE_UINT32, total);
  set("NumPart_Total_HighWord", H5T_NATIVE_UINT32, high);
  H5Gclose(h);
  H5Fclose(f);
  expect_error(path, {"PartType1/Coordinates", "value 8",
                      "header count NumPart_ThisFile = " + std::to_string(n)});
}

// Accelerations and potentials are finite, as positions are: a checkpoint's nan acceleration
// was reported as a non-finite force of the softening, without the file.
TEST(BadHdf5, NonFiniteAccelerationOrPotentialIsNamed) {
  ScratchDir dir("bad");
  for (const char* name : {"Acceleration", "Potential"}) {
    SCOPED_TRACE(name);
    const std::string path = hdf5_file(dir);
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t d = H5Dopen2(f, (std::string("PartType1/") + name).c_str(), H5P_DEFAULT);
    const bool vector = std::string(name) == "Acceleration";
    std::vector<double> values(small_set().size() * (vector ? 3 : 1), 0.5);
    values[vector ? 3 * 3 + 1 : 3] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_GE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
    H5Dclose(d);
    H5Fclose(f);
    expect_error(path, {std::string("PartType1/") + name + (vector ? "[3, 1]" : "[3]"), "value nan",
                        "must be finite"});
  }
}

// A recorded G that is not a number > 0 (GravityConstantInternal: >= 0, where 0 means "from
// the units", as in Gadget-4) is refused: it was skipped, and a -G 2 run's particles were taken
// with G = 1.
TEST(BadHdf5, RecordedGMustBePositive) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file(dir);
  test::set_hdf5_double(path, "Parameters", "GravityConstantInternal", 0.0);
  EXPECT_NO_THROW(load_snapshot(path));
  test::set_hdf5_double(path, "Parameters", "GravityConstantInternal", -3.0);
  expect_error(path, {"/Parameters/GravityConstantInternal", "value -3", "must be >= 0"});
  test::set_hdf5_double(path, "Parameters", "GravityConstantInternal", 2.0);
  test::set_hdf5_double(path, "Parameters", "G", std::numeric_limits<double>::quiet_NaN());
  expect_error(path, {"/Parameters/G", "value nan", "must be > 0 and finite"});
  // Within the range -G takes (1e308 gave non-finite forces, blamed on the softening; 1e-320
  // denormal ones).
  for (const double g : {1e308, 1e-320, 2e30}) {
    test::set_hdf5_double(path, "Parameters", "G", g);
    expect_error(path, {"/Parameters/G", "from 1e-30 to 1e30"});
  }
  test::set_hdf5_double(path, "Parameters", "G", 1e30);
  EXPECT_NO_THROW(load_snapshot(path));
  test::set_hdf5_double(path, "Parameters", "GravityConstantInternal", 1e-31);
  expect_error(path, {"/Parameters/GravityConstantInternal", "value 1e-31", "from 1e-30 to 1e30"});
}

// A damaged attribute table in /Parameters is an error naming the group: H5Aiterate2 over it
// crashed HDF5 1.10.8 (a segmentation fault; four bytes before the last attribute's name
// changed, as an audit's fuzzing found).
TEST(BadHdf5, DamagedAttributeTableIsAnErrorNotACrash) {
  ScratchDir dir("bad");
  const std::string path = hdf5_file(dir);
  std::string bytes = test::read_all(path);
  const std::size_t k = bytes.rfind("OmegaLambda");
  ASSERT_NE(k, std::string::npos);
  bytes.replace(k - 1, 4, std::string("\x7f\x00\x80\xff", 4));
  test::write_all(path, bytes);
  const std::string msg = test::invalid_argument_message([&] { load_snapshot(path); });
  EXPECT_NE(msg.find(path + ": field /Parameters: value unreadable"), std::string::npos) << msg;
}

// A unit of 0 collapsed every position (exit 0); a negative one was reported as a bad mass.
TEST(BadHdf5, UnitsMustBePositiveAndFinite) {
  for (double bad : {0.0, -1.0, std::nan("")}) {
    ScratchDir dir("bad");
    const std::string path = hdf5_file(dir);
    test::set_hdf5_double(path, "Units", "UnitLength_in_cm", bad);
    expect_error(path, {"Units/UnitLength_in_cm", "a unit must be positive and finite"});
  }
}

// A /Units group with one or two of the three scalings was read as no units at all (the
// file then taken in the run's units whatever its length unit said).
TEST(BadHdf5, PartialUnitsAreNamed) {
  for (const char* drop : {"UnitMass_in_g", "UnitVelocity_in_cm_per_s", "UnitLength_in_cm"}) {
    ScratchDir dir("bad");
    const std::string path = hdf5_file(dir);
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t g = H5Gopen2(f, "Units", H5P_DEFAULT);
    H5Adelete(g, drop);
    H5Gclose(g);
    H5Fclose(f);
    expect_error(path, {std::string("Units/") + drop, "missing", "or none of them"});
  }
}

TEST(BadHdf5, NotAGadgetLayout) {
  ScratchDir dir("bad");
  const std::string path = dir.file("plain.h5");
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);
  expect_error(path, {"Header", "missing"});
}

// Ids as signed integers or floats (some IC generators write them so): HDF5's conversion to
// uint64 clamped -5 to 0 (reported as "duplicate id 0") and truncated 1.5. Non-negative
// signed ids read as they are; the others are refused naming the value.
TEST(BadHdf5, SignedAndFloatIdsAreCheckedNotClamped) {
  ScratchDir dir("h5");
  const ParticleSet p = test::sample_particles(4);
  const auto with_ids = [&](const std::string& name, hid_t type, const void* ids) {
    const std::string path = dir.file(name);
    write_hdf5_snapshot(path, p, SnapshotInfo{});
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t g = H5Gopen2(f, "PartType1", H5P_DEFAULT);
    H5Ldelete(g, "ParticleIDs", H5P_DEFAULT);
    const hsize_t n = 4;
    const hid_t s = H5Screate_simple(1, &n, nullptr);
    const hid_t d = H5Dcreate2(g, "ParticleIDs", type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids);
    H5Dclose(d);
    H5Sclose(s);
    H5Gclose(g);
    H5Fclose(f);
    return path;
  };
  const std::int64_t good[4] = {7, 3, 9, 0}, negative[4] = {7, -5, 9, 0};
  const double fraction[4] = {7, 1.5, 9, 0}, whole[4] = {7, 3, 9, 0};
  EXPECT_EQ(load_snapshot(with_ids("g.hdf5", H5T_NATIVE_INT64, good)).particles.id,
            (std::vector<std::uint64_t>{7, 3, 9, 0}));
  EXPECT_EQ(load_snapshot(with_ids("w.hdf5", H5T_NATIVE_DOUBLE, whole)).particles.id,
            (std::vector<std::uint64_t>{7, 3, 9, 0}));
  expect_error(with_ids("n.hdf5", H5T_NATIVE_INT64, negative),
               {"PartType1/ParticleIDs", "-5", "negative particle id"});
  expect_error(with_ids("f.hdf5", H5T_NATIVE_DOUBLE, fraction),
               {"PartType1/ParticleIDs", "1.5", "not a non-negative integer"});
}

}  // namespace
}  // namespace hoshi::io
