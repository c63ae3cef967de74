// Helpers shared by the io tests: a scratch directory and small particle sets.
#pragma once

#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/particle_set.hpp"
#include "ic/ic.hpp"

namespace hoshi::test {

// A fresh empty directory under the system temp dir, removed at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("hoshi_" + tag + "_" + (info ? std::string(info->name()) : "x") + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Plummer sphere with distinct, non-trivial ids, potentials and accelerations.
inline ParticleSet sample_particles(std::size_t n, std::uint64_t seed = 7) {
  ParticleSet p = make_plummer(n, seed);
  Random rng(seed + 1);
  for (std::size_t i = 0; i < n; ++i) {
    p.id[i] = 1000 + 3 * i;
    p.pot[i] = -rng.uniform(0.5, 2.0);
    p.ax[i] = rng.uniform(-1, 1);
    p.ay[i] = rng.uniform(-1, 1);
    p.az[i] = rng.uniform(-1, 1);
  }
  return p;
}

// The columns a format holds, for expect_columns.
enum Columns : unsigned {
  kPositions = 1,
  kVelocities = 2,
  kMasses = 4,
  kIds = 8,
  kPotentials = 16,
  kAccelerations = 32,
  kAllColumns = 63,
};

// Each column of `cols` of `got` equals `want`'s, exactly, or rounded through float32 where the
// format stores float32 (`float32`): a round trip that lost or swapped a column (velocities read
// from the coordinates) fails, whichever column it is.
inline void expect_columns(const ParticleSet& got, const ParticleSet& want, unsigned cols,
                           bool float32 = false) {
  ASSERT_EQ(got.size(), want.size());
  const auto r = [&](const std::vector<double>& v) {
    std::vector<double> out(v);
    if (float32)
      for (double& x : out) x = static_cast<double>(static_cast<float>(x));
    return out;
  };
  const auto check =
      [&](unsigned col, const char* name,
          std::initializer_list<std::pair<const std::vector<double>*, const std::vector<double>*>>
              pairs) {
        if (!(cols & col)) return;
        int k = 0;
        for (const auto& [g, w] : pairs) EXPECT_EQ(*g, r(*w)) << name << " column " << k++;
      };
  check(kPositions, "position", {{&got.x, &want.x}, {&got.y, &want.y}, {&got.z, &want.z}});
  check(kVelocities, "velocity", {{&got.vx, &want.vx}, {&got.vy, &want.vy}, {&got.vz, &want.vz}});
  check(kMasses, "mass", {{&got.m, &want.m}});
  check(kPotentials, "potential", {{&got.pot, &want.pot}});
  check(kAccelerations, "acceleration",
        {{&got.ax, &want.ax}, {&got.ay, &want.ay}, {&got.az, &want.az}});
  if (cols & kIds) {
    EXPECT_EQ(got.id, want.id) << "ids";
  }
}

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Sets the scalar double attribute `name` of `group` in the HDF5 file at `path`, creating it if
// absent: how the tests turn one of hoshi's files into another code's (or a damaged one).
inline void set_hdf5_double(const std::string& path, const char* group, const char* name,
                            double value) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << path;
  const hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  ASSERT_GE(g, 0) << path << " " << group;
  hid_t a = -1;
  if (H5Aexists(g, name) > 0) {
    a = H5Aopen(g, name, H5P_DEFAULT);
  } else {
    const hid_t s = H5Screate(H5S_SCALAR);
    a = H5Acreate2(g, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(s);
  }
  EXPECT_GE(H5Awrite(a, H5T_NATIVE_DOUBLE, &value), 0) << path << " " << name;
  H5Aclose(a);
  H5Gclose(g);
  H5Fclose(f);
}

// Removes the attribute `name` of `group`: a file of an earlier version that did not write it.
inline void remove_hdf5_attribute(const std::string& path, const char* group, const char* name) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << path;
  const hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  ASSERT_GE(g, 0) << path << " " << group;
  EXPECT_GE(H5Adelete(g, name), 0) << path << " " << name;
  H5Gclose(g);
  H5Fclose(f);
}

// Replaces (or creates) the attribute `name` of `group` with a fixed-length string, as hoshi
// writes its string parameters: an earlier version's or another code's value; or, with
// `variable_length`, a variable-length UTF-8 string, as h5py writes a Python str.
inline void set_hdf5_string(const std::string& path, const char* group, const char* name,
                            const std::string& value, bool variable_length = false) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0) << path;
  const hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  ASSERT_GE(g, 0) << path << " " << group;
  if (H5Aexists(g, name) > 0) H5Adelete(g, name);
  const hid_t t = H5Tcopy(H5T_C_S1);
  if (variable_length) {
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
  } else {
    H5Tset_size(t, value.size() + 1);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
  }
  const hid_t s = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(g, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
  const char* text = value.c_str();
  EXPECT_GE(variable_length ? H5Awrite(a, t, &text) : H5Awrite(a, t, text), 0)
      << path << " " << name;
  H5Aclose(a);
  H5Sclose(s);
  H5Tclose(t);
  H5Gclose(g);
  H5Fclose(f);
}

// The message of the std::invalid_argument that f throws ("" if it throws nothing).
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace hoshi::test
