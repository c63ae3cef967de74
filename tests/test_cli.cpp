// The hoshi command: exit statuses, one-line errors, no output left behind on bad input, and
// `hoshi forces` against an independent double-precision sum.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ic/ic.hpp"
#include "io/byte_reader.hpp"
#include "io/csv.hpp"
#include "io/hdf5_snapshot.hpp"
#include "io/particle_io.hpp"

namespace fs = std::filesystem;

namespace {

struct Result {
  int status;
  std::string err;
  std::string out;  // stdout
};

fs::path scratch() {
  const fs::path d =
      fs::temp_directory_path() /
      ("hoshi_cli_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Result hoshi(const std::string& args, const fs::path& dir) {
  const fs::path err = dir / "stderr.txt", out = dir / "stdout.txt";
  const std::string cmd =
      std::string(HOSHI_EXE) + " " + args + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(cmd.c_str());
  auto text = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, text(err), text(out)};
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// hoshi runs with GOMP_SPINCOUNT=10000 (libgomp's default spinning starved the other thread on
// a loaded machine: src/cli/main.cpp) by executing itself again; a user's setting stays, and
// started through the dynamic loader it does not execute itself (that ran the loader with
// hoshi's arguments: "run: cannot open shared object file", exit 127).
TEST(Cli, OpenMpWaitingIsLimitedUnlessTheUserChose) {
  const fs::path d = scratch();
  const auto version = [&](const std::string& prefix) {
    const fs::path out = d / "version.txt";
    const int raw =
        std::system((prefix + " " + HOSHI_EXE + " --version > " + out.string() + " 2>&1").c_str());
    std::ifstream in(out);
    std::stringstream s;
    s << in.rdbuf();
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << prefix << ": " << s.str();
    return s.str();
  };
  std::string v = version("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT");
  EXPECT_NE(v.find("waiting with GOMP_SPINCOUNT=10000"), std::string::npos) << v;
  v = version("env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=passive");
  EXPECT_NE(v.find("waiting with OMP_WAIT_POLICY=passive"), std::string::npos) << v;
  v = version("env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=123");
  EXPECT_NE(v.find("waiting with GOMP_SPINCOUNT=123"), std::string::npos) << v;
  const char* loader = "/lib64/ld-linux-x86-64.so.2";
  if (fs::exists(loader)) {
    v = version(std::string("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT ") + loader);
    EXPECT_NE(v.find("hoshi " HOSHI_VERSION), std::string::npos) << v;
    EXPECT_NE(v.find("waiting with the runtime's default"), std::string::npos) << v;
  }
}

TEST(Cli, BadArgumentsExitTwoWithOneLine) {
  const fs::path d = scratch();
  const std::pair<std::string, std::string> cases[] = {
      {"run --bogus", "bogus"},
      {"run --dt abc", "--dt"},
      {"run --dt=1x", "--dt"},
      {"run -n 0", "-n"},
      {"run -n 2.5", "-n"},
      // More particles than memory holds: refused before sampling (it ran out of memory).
      {"ic -n 1e11", "invalid -n 1e11: the particles alone need 9600.0 GB"},
      // A run's particles and tree (~220 B each): the model was made, then the OOM killer came.
      {"run -n 1e11", "-n 1e11: a run of 100000000000 particles needs about 22000.0 GB (220 B"},
      {"run --softening -1", "--softening"},
      {"run --dt -0.1", "--dt"},
      {"run --t-end -1e-9", "invalid --t-end -1e-9 (must be >= 0)"},  // the value as given
      {"run --t-end -1/8", "invalid --t-end -1/8 (must be >= 0)"},    // (-0.125 before)
      {"run --output-every -1/32", "invalid --output-every -1/32 (must be > 0)"},
      {"run --output-every 1/1e10", "invalid --output-every 1/1e10 (more than 1e9 outputs"},
      {"run --dt 1/1e13", "invalid --dt 1/1e13 (more than 1e12 steps to --t-end)"},
      {"run --theta 0", "--theta"},
      // Group and leaf sizes past 2^16 (float32 index masks of the SIMD kernels from 2^24).
      {"run --n-group 100000", "invalid --n-group 100000 (must be >= 1 and <= 65536)"},
      {"run --n-leaf 0", "invalid --n-leaf 0 (must be >= 1 and <= 65536)"},
      {"run --solver magic", "--solver"},
      {"frobnicate", "frobnicate"},
      {"forces", "INPUT"},
      // Arguments no option takes: a second input, a stray word.
      {"ic -n 10 stray", "unexpected argument 'stray'"},
      {"render snap.csv stray", "unexpected argument 'stray'"},
      {"run params.yml extra.yml", "unexpected argument 'extra.yml'"},
      // -n where it cannot apply; a model name mistyped.
      {"run --ic kepler -n 100", "two-body"},
      {"run --ic plumer", "no such file, and not a model (plummer, "},
      // The model options outside --model-param, where they would be ignored.
      {"run --ic merger --eccentricity 0.9", "applies to --ic kepler only"},
      {"run --ic hernquist --radius 2", "applies to --ic uniform only"},
      {"run --ic kepler --eccentricity 0.9 --model-param e=0.5", "give one of them"},
      {"run --ic uniform --radius 2 --model-param radius=3", "give one of them"},
      // Model parameters whose arithmetic over- or underflows, or whose sampling stalls: they
      // wrote NaN, hung, or were dropped with exit 0 (an audit, 2026-11-30).
      {"ic --ic disk -n 2000 --model-param disk_RQ=71", "invalid disk_RQ 71"},
      {"ic --ic disk --model-param disk_Q=1e300", "magnitudes from 1e-30 to 1e30"},
      {"ic --ic hernquist -n 100 --model-param a=1e-110", "magnitudes from 1e-30 to 1e30"},
      {"ic --ic hernquist --model-param mass_cut=1e-30", "need 1e-6 <= mass_cut"},
      {"ic --ic disk --model-param disk_Rmax=1e-6", "invalid disk_Rmax"},
      {"ic --ic disk --model-param disk_z0=100", "model disk: invalid disk_z0 100"},
      {"ic --ic hernquist --model-param mass_cut=1e-7", "model hernquist: invalid model parameter"},
      // The apocentre is named, and the way to a circular orbit (the rule alone was a riddle
      // for eccentricity=0 with the default r_start).
      {"ic --ic merger -n 100 --model-param eccentricity=0",
       "model merger: invalid r_start 4 (must be <= the apocentre 0.4 of the bound orbit of "
       "eccentricity 0 and r_peri 0.4: r_peri (1 + e) / (1 - e); a circular orbit starts at "
       "r_start = r_peri)"},
      // The bound it breaks, with its value (it said "must be >= r_peri").
      {"ic --ic merger -n 100 --model-param r_peri=5", "invalid r_start 4 (must be >= r_peri 5)"},
      {"ic --ic merger -n 100 --model-param eccentricity=0.5,r_start=10",
       "must be <= the apocentre 1.2 of"},
      {"run --ic hernquist --model-param mass_cut=2",
       "model hernquist: invalid model parameter mass_cut: value 2 (need 1e-6 <= mass_cut <= 1)"},
      {"ic --ic disk-nfw --model-param halo_r_cut=-5", "invalid halo_r_cut -5"},
      // Keys of another model (the Hernquist halo has no cutoff: halo_r_cut was ignored).
      {"ic --ic disk --model-param halo_r_cut=3",
       "unknown parameter 'halo_r_cut' for model disk (a key of disk-nfw; valid: halo_mass,"},
      {"ic --ic merger --model-param halo_r_cut=3",
       "unknown parameter 'halo_r_cut' for model merger (a key of disk-nfw; valid: "},
      {"ic --ic hernquist --model-param r_cut=3",
       "unknown parameter 'r_cut' for model hernquist (a key of nfw; valid: a, mass_cut)"},
      {"ic --ic disk --model-param bulge_fraction=-3", "invalid bulge_fraction -3"},
      // A merger's errors name the galaxy (the secondary's keys are g2.KEY) and its particles.
      {"ic --ic merger -n 2000 --model-param model2=disk,g2.disk_Q=-1",
       "merger secondary (1000 of -n 2000 particles): model disk: invalid disk_Q -1"},
      {"ic --ic merger -n 3000 --model-param mass_ratio=1e-4", "the secondary gets no particle"},
      // Values printed as given (std::to_string printed 1.000000 and -0.000000).
      {"ic --ic kepler --eccentricity 1.0000001", "invalid eccentricity 1.0000001 (need"},
      {"ic --ic uniform --radius -1e-7", "invalid radius -1e-07 (must be > 0)"},
      // The option as the user gave it (it was reported as --axis).
      {"run --render-axis w", "--render-axis: value 'w' is not one of x, y, z"},
      {"run -G nan", "option -G: value 'nan' is not a number"},  // was "--G"
      // Options whose value may be auto say so.
      {"run --dt aut", "option --dt: value 'aut' is not a number, a fraction A/B or auto"},
      // --dt takes a fraction, as the step messages write steps (1/1024).
      {"run --dt 1/x", "option --dt: value '1/x' is not a number, a fraction A/B or auto"},
      {"run --dt 1/0", "option --dt: value '1/0' is not a finite number"},
      {"run --dt 1e999/2",
       "option --dt: value '1e999/2' has a part out of the range of a double (about 1e-308"},
      {"run --levels 0", "invalid --levels 0 (1 to 30)"},
      {"run --levels 4 --level-scheme gadget4",
       "--level-scheme: value 'gadget4' is not one of individual, hierarchical"},
      // It would do nothing with one level.
      {"run --level-scheme hierarchical",
       "--level-scheme hierarchical: block steps only (give --levels > 1)"},
      {"run --dt -1/128", "invalid --dt -1/128 (must be > 0)"},
      {"run --theta 0.6x", "option --theta: value '0.6x' is not a number (nor auto)"},
      {"run --t-end auto", "option --t-end: value 'auto' is not a number or a fraction A/B\n"},
      {"run --output-every 1/x",
       "option --output-every: value '1/x' is not a number or a fraction"},
      {"ic -G 0", "invalid -G 0 (must be > 0)"},
      {"ic -G 1e31", "invalid -G 1e31 (from 1e-30 to 1e30"},  // G = inf after --units galaxy
      {"ic --units cgs", "--units: value 'cgs' is not one of henon, galaxy"},
      // Found only at the first frame or after endless work (an audit, 2026-11-30): frames
      // of 5 pixels (named as render's --resolution), an interval of 1e-300 (its loop over the
      // multiples never ended), 1e12 steps, a thread count OpenMP died of; two parameter files
      // (one was ignored), a model parameter twice in a list (the last silently won).
      {"run --render-every 1 --render-resolution 5", "--render-resolution: value 5 (must be"},
      {"run --render-every 1 --render-extent 1e-322", "--render-extent: value 1e-322 (its pixel"},
      {"run --snapshot-every 1e-300", "--snapshot-every: value 1e-300 (more than 1e9 outputs"},
      {"run --dt 1e-300", "more than 1e12 steps to --t-end"},
      // --dt auto is named as given (it was "invalid --dt 0.0078125").
      {"run --t-end 1e11",
       "--dt auto: at most 0.0078125 = 1/128, leaves more than 1e12 steps to --t-end 1e11; give "
       "--dt or --eta"},
      // The adaptive step and the outputs it lands on had no such limit (an audit,
      // 2026-12-02): 7537 steps of 1e-12 in 5 s, or no end.
      {"run --output-every 1e-300", "invalid --output-every 1e-300 (more than 1e9 outputs"},
      {"run -n 64 --eta 1e-300", "leaves more than 1e12 steps to --t-end 10: raise --eta"},
      {"run --t-end 1e400", "option --t-end: value '1e400' is out of the range of a double"},
      {"run --t-end inf", "option --t-end: value 'inf' is not a finite number"},
      {"run --threads 100000", "invalid --threads 100000 (must be between 0 and 4096)"},
      {"run x.yml --params x.yml", "two parameter files (x.yml and x.yml; as PARAMS.yml or"},
      {"run --params a.yml --params b.yml", "two parameter files (a.yml and b.yml;"},
      {"ic --ic hernquist --model-param a=1,a=2", "--model-param a=1,a=2: key a given twice"},
      {"ic --ic hernquist --model-param a=0x10", "value '0x10' (expected a number)"},
  };
  for (const auto& [args, needle] : cases) {
    const Result r = hoshi(args + " --out " + (d / "o.hdf5").string(), d);  // run: a directory
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(d / "o.hdf5")) << args << " left output behind";
  }
  // A number's own '+' (it was "not a number").
  const Result plus =
      hoshi("run -n 64 --quiet --t-end +0.0625 --dt +6.25e-2 --out " + (d / "plus").string(), d);
  EXPECT_EQ(plus.status, 0) << plus.err;
  const Result plus_key =
      hoshi("ic --ic hernquist -n 64 --model-param a=+0.5 --out " + (d / "plus.csv").string(), d);
  EXPECT_EQ(plus_key.status, 0) << plus_key.err;
  // --seed +5 is --seed 5 (it was refused): the same file, and recorded as 5.
  ASSERT_EQ(hoshi("ic -n 64 --seed +5 --out " + (d / "seed_plus.hdf5").string(), d).status, 0);
  ASSERT_EQ(hoshi("ic -n 64 --seed 5 --out " + (d / "seed5.hdf5").string(), d).status, 0);
  EXPECT_EQ(hoshi::io::read_hdf5_snapshot((d / "seed_plus.hdf5").string()).particles.x,
            hoshi::io::read_hdf5_snapshot((d / "seed5.hdf5").string()).particles.x);
  const hoshi::io::ParamValue* seed = hoshi::io::find_param(
      hoshi::io::read_hdf5_snapshot((d / "seed_plus.hdf5").string()).info.parameters, "seed");
  ASSERT_NE(seed, nullptr);
  EXPECT_EQ(hoshi::io::to_string(*seed), "5");
  for (const char* bad : {"++1", "+-1", "+"}) {
    const Result r = hoshi(std::string("run --t-end ") + bad + " --out " + (d / "p2").string(), d);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("is not a number"), std::string::npos) << bad << ": " << r.err;
  }
  // -n with a particle file (the file brings its own particles).
  ASSERT_EQ(hoshi("ic -n 20 --out " + (d / "in.csv").string(), d).status, 0);
  const Result n_file =
      hoshi("run --ic " + (d / "in.csv").string() + " -n 3000 --out " + (d / "o").string(), d);
  EXPECT_EQ(n_file.status, 2);
  EXPECT_NE(n_file.err.find("a file brings its own particles"), std::string::npos) << n_file.err;
  EXPECT_FALSE(fs::exists(d / "o"));
  // --seed with a particle file (it was ignored), given on the command line or in a parameter
  // file; hoshi accuracy's --seed also draws its targets, so there it stays allowed.
  write(d / "seed.yml", "seed: 7\n");
  for (const std::string& seed : {std::string(" --seed 7"), " " + (d / "seed.yml").string()}) {
    const Result s_file =
        hoshi("run --ic " + (d / "in.csv").string() + seed + " --out " + (d / "o").string(), d);
    EXPECT_EQ(s_file.status, 2) << seed;
    EXPECT_NE(s_file.err.find("--seed 7 with --ic " + (d / "in.csv").string() +
                              ": a file brings its own particles"),
              std::string::npos)
        << s_file.err;
    EXPECT_FALSE(fs::exists(d / "o"));
  }
  EXPECT_EQ(
      hoshi("ic --ic " + (d / "in.csv").string() + " --seed 7 --out " + (d / "o.csv").string(), d)
          .status,
      2);
  EXPECT_FALSE(fs::exists(d / "o.csv"));
  EXPECT_EQ(hoshi("accuracy --ic " + (d / "in.csv").string() + " --seed 7 --targets 5", d).status,
            0);
  // --model-param with a particle file (it was ignored, and stored in /Parameters).
  const Result p_file = hoshi(
      "run --ic " + (d / "in.csv").string() + " --model-param a=1 --out " + (d / "o").string(), d);
  EXPECT_EQ(p_file.status, 2);
  EXPECT_NE(p_file.err.find("--model-param with --ic"), std::string::npos) << p_file.err;
  EXPECT_FALSE(fs::exists(d / "o"));
  // --eccentricity and --radius with a particle file: hoshi ic refused them, hoshi run ignored
  // them (it reads the file itself), on the command line and in a parameter file.
  write(d / "radius.yml", "radius: 2\n");
  for (const std::string& extra : {std::string(" --radius 2"), std::string(" --eccentricity 0.3"),
                                   " " + (d / "radius.yml").string()}) {
    for (const char* cmd : {"run", "ic"}) {
      if (cmd[0] == 'i' && extra.find(".yml") != std::string::npos) continue;  // run's files only
      const Result e = hoshi(std::string(cmd) + " --ic " + (d / "in.csv").string() + extra +
                                 " --out " + (d / (cmd[0] == 'r' ? "o" : "o.csv")).string(),
                             d);
      EXPECT_EQ(e.status, 2) << cmd << extra;
      EXPECT_NE(e.err.find("with --ic " + (d / "in.csv").string()), std::string::npos)
          << cmd << extra << ": " << e.err;
      EXPECT_FALSE(fs::exists(d / "o"));
      EXPECT_FALSE(fs::exists(d / "o.csv"));
    }
  }
  // An empty item of a list option is an error, not dropped.
  const Result r = hoshi("accuracy -n 100 --theta 0.5,,0.7", d);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--theta '0.5,,0.7'"), std::string::npos) << r.err;
}

// A file's gas is skipped with a note by every command that reads particles (only `run` said
// so), and a file with nothing to load is an error naming it (forces, render and run went on
// with zero particles).
TEST(Cli, SkippedGasIsReportedAndAnEmptyFileIsAnError) {
  const fs::path d = scratch();
  std::string b;  // big-endian tipsy: 1 gas and 2 dark particles
  hoshi::io::put_bytes(b, 0.0, true);
  for (std::int32_t v : {3, 3, 1, 2, 0, 0}) hoshi::io::put_bytes(b, v, true);
  for (int k = 0; k < 12; ++k) hoshi::io::put_bytes(b, 0.5f, true);
  for (int i = 0; i < 2; ++i)
    for (float v : {0.5f, float(i), 0.f, 0.f, 0.f, 0.f, 0.f, 0.01f, 0.f})
      hoshi::io::put_bytes(b, v, true);
  const std::string gas = (d / "gas.tipsy").string();
  std::ofstream(gas, std::ios::binary) << b;
  for (const std::string& cmd :
       {"forces " + gas + " --out " + (d / "f.csv").string(), "analyze " + gas,
        "render " + gas + " --out " + (d / "r.png").string() + " --resolution 16"}) {
    const Result r = hoshi(cmd, d);
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("1 gas particles skipped"), std::string::npos) << cmd << ": " << r.err;
  }
  const std::string empty = (d / "empty.hdf5").string();
  hoshi::io::write_hdf5_snapshot(empty, hoshi::ParticleSet{}, hoshi::io::SnapshotInfo{});
  for (const std::string& cmd : {"forces " + empty + " --out " + (d / "g.csv").string(),
                                 "run --ic " + empty + " --out " + (d / "o").string()}) {
    const Result r = hoshi(cmd, d);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.err.find("empty.hdf5: field particles: value 0 (nothing to load"),
              std::string::npos)
        << cmd << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(d / "g.csv"));
  EXPECT_FALSE(fs::exists(d / "o"));
}

// render --ids draws one component, as analyze --ids measures it, framed by its own particles:
// a galaxy model's disk (the halo's particles set the automatic field, 100 times the disk's).
TEST(Cli, RenderIdsDrawsOneComponent) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("ic --ic disk -n 4000 --out " + (d / "g.csv").string(), d).status, 0);
  const auto field = [](const std::string& err) {
    const auto at = err.find("field ");
    return at == std::string::npos ? 0.0 : std::stod(err.substr(at + 6));
  };
  Result r = hoshi(
      "render " + (d / "g.csv").string() + " --resolution 64 --out " + (d / "all.png").string(), d);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("4000 particles"), std::string::npos) << r.err;
  const double all = field(r.err);
  r = hoshi("render " + (d / "g.csv").string() + " --ids 3000:4000 --resolution 64 --out " +
                (d / "disk.png").string(),
            d);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("1000 particles"), std::string::npos) << r.err;
  EXPECT_LT(field(r.err), 0.1 * all) << r.err;
  EXPECT_GT(field(r.err), 0) << r.err;
  for (const char* bad : {"--ids 5000:6000", "--ids 50", "--ids 9:3"}) {
    r = hoshi("render " + (d / "g.csv").string() + " " + bad + " --out " + (d / "bad.png").string(),
              d);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(lines(r.err), 1) << bad << ": " << r.err;
    EXPECT_FALSE(fs::exists(d / "bad.png")) << bad;
  }
}

// render's summary gives the field in kpc for a file in physical (galaxy) units: it said
// "(code units)" of a galaxy snapshot, whose scale bar was already in kpc.
TEST(Cli, RenderNamesTheFieldInKpcForGalaxyUnits) {
  const fs::path d = scratch();
  hoshi::ParticleSet p;
  for (int i = 0; i < 4; ++i) p.push_back(i, 0, 0, 0, 0, 0, 1, std::uint64_t(i));
  for (const char* units : {"galaxy", "henon"}) {
    hoshi::io::SnapshotInfo info;
    info.units = hoshi::io::parse_units(units);
    const std::string snap = (d / (std::string(units) + ".hdf5")).string();
    hoshi::io::write_hdf5_snapshot(snap, p, info);
    const Result r = hoshi("render " + snap + " --extent 8 --resolution 16 --out " +
                               (d / (std::string(units) + ".png")).string(),
                           d);
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string field =
        units == std::string("galaxy") ? "field 8 kpc," : "field 8 (code units),";
    EXPECT_NE(r.err.find(field), std::string::npos) << units << ": " << r.err;
  }
  // analyze says the units of its rows (it printed numbers alone), above the table and again
  // where a file's units differ from the one before.
  const Result a = hoshi("analyze " + (d / "galaxy.hdf5").string() + " " +
                             (d / "henon.hdf5").string() + " " + (d / "galaxy.hdf5").string(),
                         d);
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out.rfind("units: 1 kpc, 1 km/s, 1e+10 Msun; time unit 0.9778", 0), 0u) << a.out;
  const auto henon = a.out.find("\nunits from henon on: Henon (G = 1)\nhenon ");
  EXPECT_NE(henon, std::string::npos) << a.out;
  EXPECT_NE(a.out.find("\nunits from galaxy on: 1 kpc,", henon), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("0.9778 Gyr; G = 43007.1\n"), std::string::npos) << a.out;
  // The G the rows use: a run's own (it said G = 1 for a run with -G 2), or -G.
  ASSERT_EQ(hoshi("run -n 64 -G 2 --solver direct --dt 0.125 --t-end 0.125 --snapshot-every 1 "
                  "--quiet --out " +
                      (d / "g2").string(),
                  d)
                .status,
            0);
  const std::string g2 = (d / "g2" / "snapshot_000.hdf5").string();
  EXPECT_EQ(hoshi("analyze " + g2, d).out.rfind("units: Henon (G = 2)\n", 0), 0u);
  EXPECT_EQ(hoshi("analyze " + g2 + " -G 3", d).out.rfind("units: Henon (G = 3)\n", 0), 0u);
}

// analyze's time column is the file's time for every format that records one (it read only
// HDF5's and printed 0 for Gadget and tipsy); --out x.g1 writes Gadget format 1 (it wrote 2).
TEST(Cli, AnalyzeReportsTheTimeOfEveryFormatAndG1IsFormatOne) {
  const fs::path d = scratch();
  for (const std::string fmt : {"hdf5", "gadget", "tipsy"}) {
    const fs::path out = d / fmt;
    ASSERT_EQ(hoshi("run -n 64 --solver direct --dt 0.125 --t-end 0.5 --snapshot-every 0.5 "
                    "--snapshot-format " +
                        fmt + " --quiet --out " + out.string(),
                    d)
                  .status,
              0);
    const fs::path csv = d / (fmt + ".csv");
    const Result r =
        hoshi("analyze " + (out / ("snapshot_001." + fmt)).string() + " --csv " + csv.string(), d);
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(csv);
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    const auto a = row.find(','), b = row.find(',', a + 1);
    EXPECT_EQ(std::stod(row.substr(a + 1, b - a - 1)), 0.5) << fmt << ": " << row;
  }
  // A CSV snapshot records none: said, with where a run's is (the first step at or after its
  // multiple; it said "at t = NNN times its --snapshot-every", 0.8 for one at t = 1.0).
  ASSERT_EQ(hoshi("run -n 64 --solver direct --dt 1/4 --t-end 1 --snapshot-every 1/10 "
                  "--snapshot-format csv --quiet --out " +
                      (d / "csv").string(),
                  d)
                .status,
            0);
  const Result r = hoshi("analyze " + (d / "csv" / "snapshot_008.csv").string(), d);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("records no time (CSV): their time column is 0 (a run's snapshot_NNN.csv "
                       "is at the first step at or after NNN times its --snapshot-every"),
            std::string::npos)
      << r.err;
  ASSERT_EQ(hoshi("ic -n 16 --out " + (d / "x.g1").string(), d).status, 0);
  std::ifstream g1(d / "x.g1", std::ios::binary);
  std::int32_t marker = 0;
  g1.read(reinterpret_cast<char*>(&marker), 4);
  EXPECT_EQ(marker, 256);  // format 1: the header record itself (format 2 starts with 8, "HEAD")
}

// hoshi ic and run wrote Gadget binary in double with 64-bit ids, which Gadget, GIZMO or AREPO
// built with their defaults cannot read; now float32 and 32-bit ids unless --gadget-precision
// and --gadget-ids say otherwise. A run whose ids 32 bits cannot hold fails before its output
// directory exists, not at its first snapshot.
TEST(Cli, GadgetOutputIsFloatWith32BitIdsUnlessChosen) {
  const fs::path d = scratch();
  const auto path = [&](const std::string& name) { return (d / name).string(); };
  // Format 2 with 16 particles of equal mass: 4 blocks (HEAD POS VEL ID; the mass in the header),
  // each with 24 bytes of records around 256 + 16 x (6 reals + id).
  ASSERT_EQ(hoshi("ic -n 16 --out " + path("f.gadget"), d).status, 0);
  EXPECT_EQ(fs::file_size(path("f.gadget")), 4u * 24 + 256 + 16 * (6 * 4 + 4));
  const Result dbl =
      hoshi("ic -n 16 --gadget-precision double --gadget-ids 64 --out " + path("d.gadget"), d);
  ASSERT_EQ(dbl.status, 0) << dbl.err;
  EXPECT_EQ(fs::file_size(path("d.gadget")), 4u * 24 + 256 + 16 * (6 * 8 + 8));
  for (const std::string bad : {"--gadget-precision half", "--gadget-ids 16"}) {
    const Result r = hoshi("ic -n 16 " + bad + " --out " + path("x.gadget"), d);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("invalid " + bad.substr(0, bad.find(' '))), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(path("x.gadget")));
  const Result h = hoshi("ic -n 16 --gadget-ids 64 --out " + path("h.hdf5"), d);
  EXPECT_EQ(h.status, 0) << h.err;
  EXPECT_NE(h.err.find("note: --gadget-ids unused: "), std::string::npos) << h.err;
  EXPECT_EQ(h.err.find("--gadget-precision"), std::string::npos) << h.err;  // not given

  hoshi::ParticleSet p = hoshi::make_plummer(32, 5);
  p.id[3] = (std::uint64_t{1} << 32) + 1;
  hoshi::io::write_hdf5_snapshot(path("big.hdf5"), p, hoshi::io::SnapshotInfo{});
  const std::string run = "run --ic " + path("big.hdf5") +
                          " --solver direct --dt 0.125 --t-end 0.25 --snapshot-every 0.25 "
                          "--snapshot-format gadget --quiet --out ";
  const Result refused = hoshi(run + path("o32"), d);
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("field ID: value 4294967297 (particle 3) is 2^31 or more"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("or renumber them (hoshi ic --renumber-ids)"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(path("o32")));
  // hoshi ic --renumber-ids: 0 .. N-1 in file order, which 32 bits hold.
  const Result renumbered =
      hoshi("ic --ic " + path("big.hdf5") + " --renumber-ids --out " + path("r.gadget"), d);
  ASSERT_EQ(renumbered.status, 0) << renumbered.err;
  const hoshi::ParticleSet r = hoshi::io::read_particles(path("r.gadget"));
  ASSERT_EQ(r.size(), p.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r.id[i], i);
    EXPECT_EQ(r.x[i], double(float(p.x[i])));
  }
  const Result ok = hoshi(run + path("o64") + " --gadget-ids 64", d);
  ASSERT_EQ(ok.status, 0) << ok.err;
  const hoshi::ParticleSet q = hoshi::io::read_particles(path("o64/snapshot_001.gadget"));
  EXPECT_NE(std::find(q.id.begin(), q.id.end(), p.id[3]), q.id.end());
}

// accuracy: --csv and --errors naming one file in two spellings ("x.csv", "./x.csv") passed the
// same-file check, and the errors file then replaced the table; --solver and --precision, which
// it ignored, are refused.
// A force beyond float32 names the row and advises what accuracy takes (it advised --solver
// direct --precision double, which accuracy refuses; an audit).
TEST(Cli, AccuracyNonFiniteForceNamesTheRowAndItsRemedy) {
  const fs::path d = scratch();
  std::string csv = "id,x,y,z,vx,vy,vz,m\n";
  for (int i = 0; i < 64; ++i)
    csv += std::to_string(i) + "," + std::to_string(std::sin(7.0 * i)) + "," +
           std::to_string(std::cos(3.0 * i)) + "," + std::to_string(std::sin(1.3 * i + 1)) +
           ",0,0,0,0.01\n";
  csv += "64,0.1,0.1,0.1,0,0,0,0.01\n65,0.100000000001,0.1,0.1,0,0,0,0.01\n";
  write(d / "near.csv", csv);
  const Result r = hoshi("accuracy --ic " + (d / "near.csv").string() +
                             " --targets 0 --criterion barnes94 --walk group --theta 0.5",
                         d);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("use --softening > 0) [the row barnes94, order 2, walk group, theta 0.5]"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--solver"), std::string::npos) << r.err;
}

TEST(Cli, AccuracyRefusesOneFileTwiceAndOptionsItIgnores) {
  const fs::path d = scratch();
  const std::string cd = "cd " + d.string() + " && ";
  const int rc = std::system((cd + HOSHI_EXE +
                              " accuracy -n 100 --targets 10 --csv x.csv "
                              "--errors ./x.csv >/dev/null 2>err.txt")
                                 .c_str());
  EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 2);
  std::ifstream in(d / "err.txt");
  std::stringstream err;
  err << in.rdbuf();
  EXPECT_NE(err.str().find("the same file as --csv"), std::string::npos) << err.str();
  EXPECT_FALSE(fs::exists(d / "x.csv"));
  for (const std::string opt : {"--solver direct", "--precision double"}) {
    const Result r = hoshi("accuracy -n 100 --targets 10 " + opt, d);
    EXPECT_EQ(r.status, 2) << opt;
    EXPECT_NE(r.err.find("measures the float32 tree"), std::string::npos) << r.err;
  }
}

// "hoshi --help run", "hoshi -h run" and "hoshi help run" print run's help (they printed the
// general usage); an unknown command there is an error.
TEST(Cli, HelpNamingACommandShowsThatCommandsHelp) {
  const fs::path d = scratch();
  const auto stdout_of = [&](const std::string& args, int& status) {
    const fs::path out = d / "out.txt";
    const int raw = std::system(
        (std::string(HOSHI_EXE) + " " + args + " > " + out.string() + " 2>/dev/null").c_str());
    status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    std::ifstream in(out);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  int status = -1;
  const std::string expected = stdout_of("run --help", status);
  ASSERT_EQ(status, 0);
  ASSERT_NE(expected.find("hoshi run [OPTION...]"), std::string::npos) << expected;
  for (const std::string form : {"--help run", "-h run", "help run"}) {
    EXPECT_EQ(stdout_of(form, status), expected) << form;
    EXPECT_EQ(status, 0) << form;
  }
  Result r = hoshi("help frobnicate", d);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
  // More than a command after it: the usage with the reason (it printed the usage alone).
  r = hoshi("-h run --x", d);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("hoshi: error: -h takes one command name, not 'run --x'"), std::string::npos)
      << r.err;
}

// --targets 0 means every particle, however the zero is written (00 was refused as < 1).
TEST(Cli, AccuracyTargetsZeroInAnyFormIsEveryParticle) {
  const fs::path d = scratch();
  for (const std::string zero : {"0", "00", "0e3"}) {
    const Result r = hoshi(
        "accuracy -n 64 --targets " + zero + " --csv " + (d / ("t" + zero + ".csv")).string(), d);
    EXPECT_EQ(r.status, 0) << zero << ": " << r.err;
  }
  EXPECT_EQ(hoshi("accuracy -n 64 --targets -1", d).status, 2);
}

TEST(Cli, ThetaAboveOneRunsWithAWarning) {
  const fs::path d = scratch();
  Result r = hoshi("ic -n 300 --out " + (d / "ic.csv").string(), d);
  ASSERT_EQ(r.status, 0) << r.err;
  r = hoshi("forces " + (d / "ic.csv").string() +
                " --solver tree --criterion barnes94 --theta 3 --out " + (d / "f.csv").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --theta 3 is above 1"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(d / "f.csv"));
  r = hoshi("forces " + (d / "ic.csv").string() +
                " --solver tree --criterion barnes94 --theta 1 --out " + (d / "g.csv").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  // The relative criterion uses theta only for its first pass: no warning.
  r = hoshi("forces " + (d / "ic.csv").string() +
                " --solver tree --criterion relative --theta 3 --out " + (d / "h.csv").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST(Cli, StepLongerThanAQuarterOfTheDynamicalTimeRunsWithAWarning) {
  // A Hernquist model in galaxy units (G = 43007.1) has a half-mass dynamical time of ~0.004;
  // dt 1/128 is about 2 of them (the energy error reaches ~10). A disk galaxy's
  // disk is far denser than its halo: at dt 1/16 (a tenth of the halo's half-mass dynamical
  // time, but more than its inner 1%'s 0.1) the disk comes apart, and the warning, which took
  // the half-mass radius, did not fire. The default run (Plummer, Henon units), the default
  // disk and a star with a planet (whose inner 1% is the star alone) get no warning.
  const fs::path d = scratch();
  Result r =
      hoshi("run --ic hernquist -n 512 --units galaxy --dt 0.0078125 --t-end 0 --quiet --out " +
                (d / "g").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --dt 0.0078125 is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dynamical times"), std::string::npos) << r.err;
  // The suggested step: the power of two at or below a sixteenth of the time named, and, where
  // the step does not resolve the softening either (it does not here: dt is 42 of the --eta
  // measure), at or below 0.2 of that measure, in one line (the warning named the orbits'
  // limit alone, and a run at its suggestion was warned of the softening).
  EXPECT_EQ(lines(r.err), 1) << r.err;
  const auto named = r.err.find(") = ");
  const auto measure = r.err.find("sqrt(eps / max|a|) = ");
  const auto tried = r.err.find("try --dt ");
  ASSERT_TRUE(named != std::string::npos && measure != std::string::npos &&
              tried != std::string::npos)
      << r.err;
  const double t_dyn = std::stod(r.err.substr(named + 4));
  const double bound = std::min(t_dyn / 16, 0.2 * std::stod(r.err.substr(measure + 21)));
  const double dt = std::stod(r.err.substr(tried + 9));
  EXPECT_LE(dt, bound) << r.err;
  EXPECT_GT(dt, bound / 2) << r.err;
  EXPECT_EQ(dt, std::exp2(std::round(std::log2(dt)))) << r.err;
  // Block steps: the orbits within that radius are followed by the steps its particles take by
  // their accelerations (the warning checked the base step, and every block run of the
  // Milky-Way recipe was warned): level 3 of 1/128 at --levels 4, 1.5 of their dynamical
  // time; none at --levels 12, whose deeper levels they take (and whose smallest step meets
  // the softening's limit too).
  r = hoshi(
      "run --ic hernquist -n 512 --units galaxy --dt 0.0078125 --levels 4 --t-end 0 "
      "--quiet --out " +
          (d / "g4").string(),
      d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --dt 0.0078125: the particles within the radius holding 6.25% "
                       "of these particles step up to dt / 2^3 = 0.000976562 by their "
                       "accelerations, 1.47"),
            std::string::npos)
      << r.err;
  r = hoshi(
      "run --ic hernquist -n 512 --units galaxy --dt 0.0078125 --levels 12 --t-end 0 "
      "--quiet --out " +
          (d / "g12").string(),
      d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  // What else meets the limits with block steps is checked before it is said: --levels 2's
  // inner particles sit on its smallest level, and the levels that take them to their orbits
  // leave them on their criterion's steps, which a smaller --eta shortens ("--levels 11" was
  // suggested, and warned of in turn). The run with the suggestion is not warned.
  r = hoshi(
      "run --ic hernquist -n 512 --units galaxy --dt 0.0078125 --levels 2 --t-end 0 "
      "--quiet --out " +
          (d / "g2").string(),
      d);
  const auto alternative = r.err.find(", or --");
  ASSERT_NE(alternative, std::string::npos) << r.err;
  const std::string suggested =
      r.err.substr(alternative + 5, r.err.find(')', alternative) - alternative - 5);
  EXPECT_NE(suggested.find("--levels "), std::string::npos) << r.err;
  r = hoshi("run --ic hernquist -n 512 --units galaxy --dt 0.0078125 " + suggested +
                " --t-end 0 --quiet --out " + (d / "g2s").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << suggested << "\n" << r.err;
  // An --eta past the softening's limit is said, global or per particle (the checks measure
  // against eta itself: --eta 3 ran unsaid to an energy error of 4e-2).
  for (const std::string levels : {"", "--dt 0.0625 --levels 6 "}) {
    r = hoshi("run -n 256 --eta 3 --t-end 0 --quiet " + levels + "--out " +
                  (d / ("e" + std::to_string(levels.size()))).string(),
              d);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("warning: --eta 3 takes "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" sqrt(eps / " + std::string(levels.empty() ? "max|a|" : "|a|") +
                         "): steps beyond 0.3 of that scale"),
              std::string::npos)
        << r.err;
  }
  // --dt auto with block steps keeps a margin below the particles' criterion at the smallest
  // level: a galaxy-units Plummer sphere's 1/128 at --levels 8 is 0.198 of sqrt(eps / max|a|),
  // at the edge of 0.2 (232 particles soon wanted less than the smallest level's step).
  r = hoshi(
      "run --ic plummer -n 2048 --units galaxy --levels 8 --solver direct --t-end 0 "
      "--out " +
          (d / "pa").string(),
      d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--dt auto: 0.00390625 = 1/256 (the default 0.0078125: its smallest "
                       "level's step dt / 2^7 = 6.10352e-05 is 0.19"),
            std::string::npos)
      << r.out;
  // Two bodies: the pericentre passage's time (a kepler pair starts at apocentre; e = 0.99 at
  // dt 1/128 came out unbound without a warning). Without softening there is no --eta.
  r = hoshi(
      "run --ic kepler --eccentricity 0.99 --softening 0 --dt 0.0078125 --t-end 0 --quiet "
      "--out " +
          (d / "k").string(),
      d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("dynamical times sqrt(r_p^3 / (G M)) = 0.001 of the two bodies' "
                       "pericentre passage; steps this long do not follow their orbits (the "
                       "limits allow --dt up to 0.00025; with a margin, try "
                       "--dt 6.103515625e-05 = 1/16384)"),
            std::string::npos)
      << r.err;
  // With softening, the --eta whose step at the start is within that one (it said "or --eta"
  // with no value): 0.003 here, one significant digit of 1/1024 / sqrt(eps / max|a|).
  r = hoshi("run --ic kepler --eccentricity 0.905 --dt 1/128 --t-end 0 --quiet --overwrite --out " +
                (d / "k").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("; with a margin, try --dt 0.0009765625 = 1/1024, or --eta 0.003)"),
            std::string::npos)
      << r.err;
  // One digit as the decimal it reads (0.009000000000000001 was said; a review).
  r = hoshi(
      "run --ic kepler --eccentricity 0.75 --softening 0.03 --dt 1/16 --t-end 0 --quiet "
      "--overwrite --out " +
          (d / "k").string(),
      d);
  EXPECT_NE(r.err.find(", or --eta 0.009)"), std::string::npos) << r.err;
  // The default --dt auto takes that step, and says why (with --quiet too).
  r = hoshi(
      "run --ic kepler --eccentricity 0.99 --softening 0 --t-end 0.5 --quiet --overwrite "
      "--out " +
          (d / "k").string(),
      d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("hoshi run: --dt auto: 6.103515625e-05 = 1/16384 (the default 0.0078125 "
                       "is 7.8125 dynamical times sqrt(r_p^3 / (G M)) = 0.001 of the two bodies' "
                       "pericentre passage), 8192 steps to --t-end 0.5\n"),
            std::string::npos)
      << r.out;
  // Two bodies falling from rest (L = 0, e = 1) have their pericentre, at eps, ahead of them
  // (they were taken to be past it: no warning at 1/128, and the energy gained 82 times itself).
  write(d / "fall.csv", "id,x,y,z,vx,vy,vz,m\n0,-0.5,0,0,0,0,0,0.5\n1,0.5,0,0,0,0,0,0.5\n");
  r = hoshi("run --ic " + (d / "fall.csv").string() + " --dt 0.0078125 --t-end 0 --quiet --out " +
                (d / "f").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("dynamical times sqrt(r_p^3 / (G M)) = 0.001 of the two bodies' "
                       "pericentre passage"),
            std::string::npos)
      << r.err;
  // Without softening the fall ends in a collision no step follows: a warning for a given step,
  // an error for --dt auto (it took 1/128 and the energy error reached 142).
  r = hoshi("run --ic " + (d / "fall.csv").string() +
                " --softening 0 --dt 0.0078125 --t-end 0 --quiet --overwrite --out " +
                (d / "f").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the two bodies fall head-on without softening"), std::string::npos)
      << r.err;
  r = hoshi("run --ic " + (d / "fall.csv").string() + " --softening 0 --t-end 1 --quiet --out " +
                (d / "f0").string(),
            d);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--dt auto: the two bodies fall head-on without softening"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(d / "f0"));
  // Two such disks in a merger: radii about the density centre (about the centre of mass,
  // between the galaxies, the merger got no warning even at dt 0.5).
  for (const char* model : {"disk -n 4000", "merger -n 8000"}) {
    r = hoshi(std::string("run --ic ") + model +
                  " --dt 0.0625 --t-end 0 --quiet --overwrite --out " + (d / "d").string(),
              d);
    EXPECT_EQ(r.status, 0) << model << ": " << r.err;
    EXPECT_NE(r.err.find("warning: --dt 0.0625 is "), std::string::npos) << model << ": " << r.err;
  }
  write(d / "planet.csv", "id,x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,0,1\n1,1,0,0,0,1,0,1e-6\n");
  // Two unbound bodies moving apart: their pericentre is behind them (it was warned of).
  write(d / "flyby.csv", "id,x,y,z,vx,vy,vz,m\n0,-5,0,0,-3,0.01,0,0.5\n1,5,0,0,3,-0.01,0,0.5\n");
  for (const std::string& args :
       {std::string("run -n 512"), std::string("run --ic disk -n 4000"),
        std::string("run --ic hernquist -n 4096"), std::string("run -n 4096 --dt 0.015625"),
        std::string("run --ic kepler"), std::string("run --ic kepler --softening 0"),
        "run --softening 0 --ic " + (d / "planet.csv").string(),
        "run --softening 0 --ic " + (d / "flyby.csv").string()}) {
    // At --dt auto (none given) the step stays 1/128: auto shortens it, in a note, where the
    // warning for 1/128 would be given.
    r = hoshi(args + " --t-end 0 --quiet --overwrite --out " + (d / "h").string(), d);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out.find("--dt auto:"), std::string::npos) << args << ": " << r.out;
    if (args.find("--dt") != std::string::npos) continue;
    r = hoshi(args + " --dt 0.0078125 --t-end 0 --quiet --overwrite --out " + (d / "h").string(),
              d);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << args << ": " << r.err;
  }
}

// A file in other units than the run's: a galaxy-units Plummer sphere (velocities in km/s) run in
// Henon units has 2K/|W| = G_galaxy / 1 ~ 4.3e4 and flew apart without a word.
TEST(Cli, RunFromAFileFarFromBoundWarnsOfItsUnits) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("ic -n 1000 --units galaxy --out " + (d / "g.csv").string(), d).status, 0);
  ASSERT_EQ(hoshi("ic -n 1000 --out " + (d / "h.csv").string(), d).status, 0);
  Result r = hoshi(
      "run --ic " + (d / "g.csv").string() + " --t-end 0 --quiet --out " + (d / "a").string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  const auto at = r.err.find("g.csv: 2K/|W| = ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const double ratio = std::stod(r.err.substr(at + 16));
  EXPECT_GT(ratio, 0.8 * 43007.1) << r.err;  // the model's ~1, times the G it was made with
  EXPECT_LT(ratio, 1.2 * 43007.1) << r.err;
  EXPECT_NE(r.err.find("(henon, G = 1), give them (--units galaxy"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  for (const std::string& args :
       {"--ic " + (d / "g.csv").string() + " --units galaxy", "--ic " + (d / "h.csv").string()}) {
    r = hoshi("run " + args + " --t-end 0 --quiet --overwrite --out " + (d / "b").string(), d);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("2K/|W|"), std::string::npos) << args << ": " << r.err;
  }
}

// A step the run outgrows: a cold collapse starts within the softening's measure (dt 1/128 is
// 0.08 of it) and passes it near the collapse (t_ff = 1.11), when max|a| grows at the centre
// (N = 512: the energy error reaches 1.0e-2 by t = 1.4 at 1/128, 3.6e-5 at 1/1024, which stays
// within the measure). One warning, after the step that passes it; a restart from a state past
// it says nothing more (its run was warned); --eta follows the measure.
TEST(Cli, RunWarnsWhenTheStepIsOutgrownDuringTheRun) {
  const fs::path d = scratch();
  const std::string collapse = "run --ic uniform -n 512 --seed 3 --solver direct --softening 0.02 ";
  Result r = hoshi(
      collapse + "--t-end 1.25 --checkpoint-every 1.25 --quiet --out " + (d / "c").string(), d);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  const auto at = r.err.find("warning: at t = ");
  const auto named = r.err.find("sqrt(eps / max|a|) = ");
  const auto tried = r.err.find("try --dt ");
  ASSERT_TRUE(at != std::string::npos && named != std::string::npos && tried != std::string::npos)
      << r.err;
  const double t = std::stod(r.err.substr(at + 16));
  EXPECT_GT(t, 0.8) << r.err;
  EXPECT_LT(t, 1.25) << r.err;
  EXPECT_NE(r.err.find("no longer resolve encounters within the softening"), std::string::npos)
      << r.err;
  const double scale = std::stod(r.err.substr(named + 21));
  EXPECT_LT(0.0078125, 0.3 * scale * 1.1) << r.err;  // passed by little: seen after each step
  EXPECT_GT(0.0078125, 0.3 * scale) << r.err;
  const double dt = std::stod(r.err.substr(tried + 9));
  EXPECT_LE(dt, 0.2 * scale) << r.err;
  EXPECT_GT(dt, 0.1 * scale) << r.err;
  r = hoshi("run --restart " + (d / "c").string() + " --t-end 1.5 --quiet", d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  for (const char* step : {"--dt 0.0009765625", "--eta 0.1"}) {
    r = hoshi(collapse + step + " --t-end 1.4 --quiet --overwrite --out " + (d / "s").string(), d);
    EXPECT_EQ(r.status, 0) << step << ": " << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << step << ": " << r.err;
  }
  // A restart half-way measures the growth from the run's start, which its checkpoint keeps:
  // the same warning at the same step (measured from its own state, it came at 0.52 of the
  // measure, with the energy off by 3e-2).
  ASSERT_EQ(hoshi(collapse + "--t-end 0.75 --quiet --out " + (d / "h").string(), d).status, 0);
  r = hoshi("run --restart " + (d / "h").string() + " --t-end 1.25 --quiet", d);
  EXPECT_EQ(r.status, 0) << r.err;
  const auto said = [](const std::string& err) {
    const auto a = err.find("warning: at t = ");
    return a == std::string::npos ? std::string() : err.substr(a, err.find(')', a) - a);
  };
  const Result whole = hoshi(collapse + "--t-end 1.25 --quiet --out " + (d / "w").string(), d);
  EXPECT_FALSE(said(whole.err).empty()) << whole.err;
  EXPECT_EQ(said(r.err), said(whole.err)) << r.err;
  // Two bodies: an eccentric orbit's max|a| grows 361-fold to its pericentre, which the start's
  // check follows; resolved (energy to 3e-7), it was warned of.
  r = hoshi("run --ic kepler --eccentricity 0.9 --t-end 20 --quiet --out " + (d / "k").string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  // Block steps: the limit is the particles' criterion at the smallest level, said as such (it
  // said the steps no longer resolved encounters, at 0.21 of the measure; a review).
  r = hoshi(collapse + "--levels 2 --dt 1/128 --t-end 1.25 --quiet --out " + (d / "b").string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("the particle of max|a| now wants a shorter step than the smallest "
                       "level's (--eta 0.2 of that scale; the limit allows the smallest step up "
                       "to "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("no longer resolve"), std::string::npos) << r.err;
  // And so does --dt auto's note where it shortens the base step for it.
  r = hoshi(
      "run -n 1024 --solver direct --levels 2 --eta 0.05 --t-end 0 --out " + (d / "a").string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--dt auto: 0.001953125 = 1/512 (the default 0.0078125: its smallest "
                       "level's step dt / 2^1 = 0.00390625 is "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(", above the particles' criterion --eta 0.05 of it), 0 steps"),
            std::string::npos)
      << r.out;
}

// Steps that follow the orbits but not the encounters within the softening: a Plummer sphere of
// 4096 at dt 1/32 (dynamical time at its 1% radius ~0.4) gained 1.5e-2 of its energy by t = 28
// without a warning (an audit, 2026-12-01). The measure is the --eta step's sqrt(eps / max|a|)
// from the initial forces; the suggestion is a power of two at or below 0.2 of it.
TEST(Cli, RunWarnsOfStepsThatDoNotResolveTheSoftening) {
  const fs::path d = scratch();
  for (const char* args : {"-n 4096 --dt 0.03125", "--ic hernquist -n 4096 --dt 0.015625",
                           "-n 4096 --softening 0.001 --dt 0.0078125"}) {
    const Result r = hoshi(
        std::string("run ") + args + " --t-end 0 --quiet --overwrite --out " + (d / "s").string(),
        d);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find("do not resolve encounters within the softening"), std::string::npos)
        << args << ": " << r.err;
    const auto named = r.err.find("sqrt(eps / max|a|) = ");
    const auto tried = r.err.find("try --dt ");
    ASSERT_TRUE(named != std::string::npos && tried != std::string::npos) << r.err;
    const double scale = std::stod(r.err.substr(named + 21));
    const double dt = std::stod(r.err.substr(tried + 9));
    EXPECT_LE(dt, 0.2 * scale) << r.err;
    EXPECT_GT(dt, 0.1 * scale) << r.err;
    EXPECT_EQ(dt, std::exp2(std::round(std::log2(dt)))) << r.err;
    // The longest step the limits allow is said too: the softening's 0.3 of its measure, or
    // the orbits' where that is shorter; the suggestion keeps a margin below it.
    const auto allowed = r.err.find("allow --dt up to ");
    ASSERT_NE(allowed, std::string::npos) << r.err;
    const double limit = std::stod(r.err.substr(allowed + 17));
    EXPECT_LE(limit, 0.3 * scale * (1 + 1e-5)) << r.err;
    EXPECT_GT(limit, dt) << r.err;
  }
  // --eta sets the step from the same measure: nothing to warn of up to the limit, 0.3 (0.5
  // went unsaid).
  Result r =
      hoshi("run -n 4096 --eta 0.3 --t-end 0 --quiet --overwrite --out " + (d / "s").string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  r = hoshi("run -n 4096 --eta 0.5 --t-end 0 --quiet --overwrite --out " + (d / "s").string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --eta 0.5 takes steps up to 0.5 sqrt(eps / max|a|)"),
            std::string::npos)
      << r.err;
  // Each particle's --eta with block steps, also where --dt auto chooses the base step (it
  // went unsaid there).
  for (const char* dt : {"", " --dt 1/128"}) {
    r = hoshi(std::string("run -n 1024 --levels 3 --eta 0.5 --t-end 0 --quiet --overwrite") + dt +
                  " --out " + (d / "s").string(),
              d);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("warning: --eta 0.5 takes each particle's step up to 0.5 sqrt(eps / |a|)"),
              std::string::npos)
        << dt << ": " << r.err;
  }
  // A restart that sets a longer step is warned as a new run is (it went unsaid).
  ASSERT_EQ(hoshi("run -n 4096 --t-end 0.0078125 --quiet --out " + (d / "r").string(), d).status,
            0);
  r = hoshi("run --restart " + (d / "r").string() + " --dt 0.0625 --t-end 0.0703125 --quiet", d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("do not resolve encounters within the softening"), std::string::npos)
      << r.err;
  // So is one whose softening changed (another measure), for the step it keeps: the stored one,
  // which --dt auto chose for the old softening.
  ASSERT_EQ(hoshi("run -n 512 --t-end 0.0625 --quiet --out " + (d / "e").string(), d).status, 0);
  r = hoshi("run --restart " + (d / "e").string() + " --softening 0.0002 --t-end 0.125 --quiet", d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --dt 0.0078125 is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("do not resolve encounters within the softening"), std::string::npos)
      << r.err;
}

// Outputs through symbolic links and to /dev/stdout: the rename of the temporary replaced a
// link by a regular file (its target unchanged) and, as root, /dev/stdout itself.
TEST(Cli, OutputsGoThroughLinksAndToStdout) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("ic -n 64 --out " + (d / "p.csv").string(), d).status, 0);
  write(d / "real.csv", "old\n");
  fs::create_symlink("real.csv", d / "link.csv");
  Result r = hoshi("analyze " + (d / "p.csv").string() + " --csv " + (d / "link.csv").string(), d);
  EXPECT_EQ(r.status, 2) << r.err;  // the link names an existing file: --overwrite needed
  EXPECT_NE(r.err.find("file exists"), std::string::npos) << r.err;
  r = hoshi("analyze " + (d / "p.csv").string() + " --overwrite --csv " + (d / "link.csv").string(),
            d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(d / "link.csv"));
  std::ifstream in(d / "real.csv");
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("snapshot,time,n,mass", 0), 0u) << header;
  // /dev/stdout without --overwrite, written in place after the table: a pipe, a file the shell
  // truncated, a file it appends to (reopening /dev/stdout wrote at offset 0 and truncated: the
  // appended file lost its lines, the table overwrote the CSV).
  const fs::path out = d / "out.txt";
  for (const std::string redirect : {" | cat > ", " > ", " >> "}) {
    write(out, "earlier line\n");
    const int raw =
        std::system((std::string(HOSHI_EXE) + " analyze " + (d / "p.csv").string() +
                     " --csv /dev/stdout 2>" + (d / "err.txt").string() + redirect + out.string())
                        .c_str());
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << redirect;
    std::stringstream s;
    s << std::ifstream(out).rdbuf();
    const std::string text = s.str();
    const auto table = text.find("snapshot    "), csv = text.find("snapshot,time,n,mass");
    EXPECT_NE(table, std::string::npos) << redirect << text;
    EXPECT_NE(csv, std::string::npos) << redirect << text;
    EXPECT_LT(table, csv) << redirect << text;  // in the order written
    EXPECT_EQ(text.find("earlier line") != std::string::npos, redirect == " >> ")
        << redirect << text;
  }
}

// A multi-file set is read from any of its members (snap.0.hdf5); its stem alone was "no such
// file, and not a model".
TEST(Cli, AMissingFileBesideAMultiFileSetNamesItsFirstMember) {
  const fs::path d = scratch();
  write(d / "snap.0.hdf5", "");
  for (const char* cmd : {"run --t-end 0 --quiet --out o --ic ", "forces --out f.csv "}) {
    const Result r = hoshi(cmd + (d / "snap.hdf5").string(), d);
    EXPECT_EQ(r.status, 2) << cmd << r.err;
    EXPECT_NE(r.err.find((d / "snap.0.hdf5").string() + " is there: a multi-file set is read from "
                                                        "any of its files"),
              std::string::npos)
        << cmd << r.err;
  }
}

TEST(Cli, BadInputFilesExitTwoNamingFileLineAndField) {
  const fs::path d = scratch();
  const std::string h = "id,x,y,z,vx,vy,vz,m\n";
  const std::pair<std::string, std::string> files[] = {
      {"id,x,y,z,m\n0,1,2,3,1\n", "header"},
      {h + "0,1,2,3,0,0,0,1\n1,1,2\n", ":3: expected 8 fields"},
      {h + "0,nan,2,3,0,0,0,1\n", "field x"},
      {h + "0,1,2,3,0,inf,0,1\n", "field vy"},
      {h + "0,1,2,3,0,0,0,-1\n", "field m"},
      {h + "0,1,2,3,0,0,0,abc\n", "field m"},
      {h + "0,1,2,3,0,0,0,1\n0,2,2,3,0,0,0,1\n", "field id"},
      // The later line, naming the earlier one (a blank and a comment line counted).
      {h + "7,1,2,3,0,0,0,1\n\n# c\n8,1,2,3,0,0,0,1\n7,2,2,3,0,0,0,1\n",
       ":6: field id: value 7 (duplicate of line 2"},
      {h + "18446744073709551616,1,2,3,0,0,0,1\n",
       "field id: value '18446744073709551616' (out of range"},
      {h + "0,1,2,3,0,0,1e-400,1\n",
       ":2: field vz: value '1e-400' (outside the range of a double)"},
      {h + "0,1,2,3,0,0,0,0\n", "field m: value 0 for every particle (the total mass"},
  };
  int k = 0;
  for (const auto& [text, needle] : files) {
    const fs::path in = d / ("in" + std::to_string(k++) + ".csv");
    write(in, text);
    const fs::path out = d / "forces.csv";
    const Result r = hoshi("forces " + in.string() + " --out " + out.string(), d);
    EXPECT_EQ(r.status, 2) << text;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(in.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << " not in: " << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  const Result missing =
      hoshi("forces " + (d / "nope.csv").string() + " --out " + (d / "f.csv").string(), d);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nope.csv"), std::string::npos);
  // Two inputs where the command takes one: refused, not the first one used.
  const fs::path good = d / "good.csv";
  write(good, h + "0,1,2,3,0,0,0,1\n1,2,2,3,0,0,0,1\n");
  const Result two = hoshi("forces " + good.string() + " " + (d / "nope.csv").string() + " --out " +
                               (d / "f.csv").string(),
                           d);
  EXPECT_EQ(two.status, 2);
  EXPECT_EQ(lines(two.err), 1) << two.err;
  EXPECT_NE(two.err.find("unexpected argument '" + (d / "nope.csv").string() + "'"),
            std::string::npos)
      << two.err;
  EXPECT_FALSE(fs::exists(d / "f.csv"));
}

// --restart of a directory that is not a run's says so (it was "DIR/checkpoint.hdf5: field
// file: value missing (no such file)").
TEST(Cli, RestartOfADirectoryWithoutACheckpointSaysSo) {
  const fs::path d = scratch();
  const std::string none = (d / "none").string(), empty = (d / "empty").string();
  fs::create_directories(empty);
  write(d / "file", "not a directory");
  for (const auto& [dir, says] :
       {std::pair{none, ": no such directory (give a run's output directory"},
        std::pair{empty, ": no checkpoint.hdf5 there"},
        std::pair{(d / "file").string(), ": is a file (give the run's output directory"}}) {
    const Result r = hoshi("run --restart " + dir, d);
    EXPECT_EQ(r.status, 2) << dir;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--restart " + dir + says), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_empty(empty));
}

// A directory given as an input file is named as one by every command (it was "value missing
// (no such file)").
TEST(Cli, DirectoryAsInputFileIsNamedAsOne) {
  const fs::path d = scratch();
  const std::string dir = (d / "adir").string(), out = (d / "out").string();
  fs::create_directories(dir);
  for (const std::string& args :
       {"forces " + dir + " --out " + out + ".csv", "render " + dir + " --out " + out + ".png",
        "analyze " + dir, "run --ic " + dir + " --out " + out, "run " + dir + " --out " + out,
        "ic --ic " + dir + " --out " + out + ".csv", "accuracy --ic " + dir,
        "bench --ic " + dir + " --repeat 1 --peak-gflops 1"}) {
    const Result r = hoshi(args, d);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(dir + ": is a directory, not a file"), std::string::npos)
        << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
  // A pipe, as a file and as a parameter file, is named as one (it was "value missing (no such
  // file)").
  const std::string fifo = (d / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& args :
       {"forces " + fifo + " --out " + out + ".csv", "run " + fifo + " --out " + out}) {
    const Result r = hoshi(args, d);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(fifo + ": is not a regular file (a pipe, device or socket"),
              std::string::npos)
        << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

// A corrupt HDF5 file that crashes the HDF5 library (1.10.8: four bytes before the name of the
// last attribute of /Parameters changed, as an audit's fuzzing found) is one line naming the
// file and exit 2, as other bad input (a segmentation fault, exit 139, without a word).
TEST(Cli, AnHdf5FileThatCrashesTheLibraryIsNamed) {
  const fs::path d = scratch();
  const std::string in = (d / "s.hdf5").string(), out = (d / "f.csv").string();
  ASSERT_EQ(hoshi("ic -n 16 --out " + in, d).status, 0);
  std::ifstream f(in, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  f.close();
  const std::size_t k = bytes.rfind("OmegaLambda");
  ASSERT_NE(k, std::string::npos);
  bytes.replace(k - 1, 4, std::string("\x7f\x00\x80\xff", 4));
  write(in, bytes);
  for (const std::string& args : {"forces " + in + " --out " + out, "analyze " + in}) {
    const Result r = hoshi(args, d);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(in + ": "), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

// With --softening 0, coincident particles are an error naming the file they came from (the
// solvers that find them do not know it); run finds them before its output directory exists.
TEST(Cli, CoincidentParticlesWithZeroSofteningNameTheFile) {
  const fs::path d = scratch();
  const std::string in = (d / "pair.csv").string(), out = (d / "out").string();
  write(in, "id,x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,0,1\n1,0,0,0,0,0,0,1\n2,1,0,0,0,0,0,1\n");
  for (const std::string& args :
       {"forces " + in + " --out " + out + ".csv",
        "forces " + in + " --solver tree --out " + out + ".csv",
        "forces " + in + " --precision double --out " + out + ".csv",
        "run --ic " + in + " --t-end 0.01 --out " + out, "analyze " + in + " --bound",
        "accuracy --ic " + in + " --targets 0",
        "bench --ic " + in + " --repeat 1 --peak-gflops 1"}) {
    const Result r = hoshi(args + " --softening 0", d);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(in + ": particles with ids 0 and 1 are at the same position"),
              std::string::npos)
        << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".csv"));
}

TEST(Cli, ExistingOutputIsNeverOverwritten) {
  const fs::path d = scratch();
  write(d / "keep.csv", "precious\n");
  const Result r = hoshi("ic -n 10 --out " + (d / "keep.csv").string(), d);
  EXPECT_EQ(r.status, 2);
  std::ifstream in(d / "keep.csv");
  std::string s;
  std::getline(in, s);
  EXPECT_EQ(s, "precious");
  fs::create_directories(d / "run");
  write(d / "run" / "energy.csv", "precious\n");
  EXPECT_EQ(hoshi("run -n 10 --t-end 0.1 --out " + (d / "run").string(), d).status, 2);
  std::ifstream in2(d / "run" / "energy.csv");
  std::getline(in2, s);
  EXPECT_EQ(s, "precious");
}

// Settings found bad only in the first force evaluation (a softening of 1e300: eps^2 leaves
// float32) or at the first frame: with --overwrite, the earlier run's outputs were removed
// first. Nothing in --out is touched before the initial forces are known and every output
// option is checked.
TEST(Cli, BadSettingsLeaveAnEarlierRunsOutputs) {
  const fs::path d = scratch();
  const std::string out = (d / "o").string(), run = "run -n 200 --t-end 0.5 --solver direct ";
  ASSERT_EQ(hoshi(run + "--snapshot-every 0.25 --out " + out, d).status, 0);
  const auto listing = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(out))
      if (e.path().filename() != ".hoshi.lock")  // the run's claim, with its process id
        names.push_back(e.path().filename().string() + ":" + std::to_string(fs::file_size(e)));
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> before = listing();
  ASSERT_EQ(before.size(), 5u);  // energy.csv, checkpoint, snapshots 000 to 002
  for (const std::string bad : {"--softening 1e300", "--render-every 1 --render-resolution 5"}) {
    const Result r = hoshi(run + "--overwrite --out " + out + " " + bad, d);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_EQ(listing(), before) << bad;
  }
  // A restart that fails in the restored state's forces leaves the log whole.
  const std::string log = (d / "o" / "energy.csv").string();
  std::ifstream in(log);
  const std::string rows((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(hoshi("run --restart " + out + " --t-end 1 --softening 1e300", d).status, 2);
  std::ifstream again(log);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()),
            rows);
}

// An output that is the command's own input is refused even with --overwrite (hoshi forces
// replaced its snapshot with a CSV table, analyze and accuracy their input with their tables),
// as is a summary table that is also one of analyze's profile files.
TEST(Cli, OutputsNeverReplaceTheirInputs) {
  const fs::path d = scratch();
  const std::string in = (d / "p.csv").string();
  ASSERT_EQ(hoshi("ic -n 100 --out " + in, d).status, 0);
  std::ifstream f(in);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const std::string& cmd :
       {"forces " + in + " --overwrite --out " + in, "analyze " + in + " --overwrite --csv " + in,
        "accuracy --ic " + in + " --overwrite --csv " + in,
        "accuracy --ic " + in + " --overwrite --errors " + in,
        "analyze " + in + " --profiles " + d.string() + " --csv " + (d / "p_radial.csv").string(),
        "analyze " + in + " --profiles " + (d / "prof").string() + " --csv " +
            (d / "prof").string()}) {
    const Result r = hoshi(cmd, d);
    EXPECT_NE(r.status, 0) << cmd;
    std::ifstream g(in);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>()),
              bytes)
        << cmd;
  }
  EXPECT_FALSE(fs::exists(d / "p_radial.csv"));
  EXPECT_FALSE(fs::exists(d / "prof"));
  EXPECT_NE(hoshi("forces " + in + " --out f.hdf5", d).err.find("written as CSV"),
            std::string::npos);
  // .dat, a common name of a text table (and of Gadget files), is taken.
  EXPECT_EQ(hoshi("forces " + in + " --out " + (d / "f.dat").string(), d).status, 0);
  EXPECT_TRUE(fs::exists(d / "f.dat"));
  // tipsy's units file cannot be written: the particles are not written either.
  fs::create_directories(d / "x.tipsy.param");
  EXPECT_EQ(hoshi("ic -n 100 --out " + (d / "x.tipsy").string(), d).status, 2);
  EXPECT_FALSE(fs::exists(d / "x.tipsy"));
}

// An option typed twice takes its last value (scripts override their defaults so); separate
// --model-param options too. The output was the second --out, with the second -n.
TEST(Cli, AnOptionTypedTwiceTakesItsLastValue) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("ic -n 10 -n 20 --model-param a=1 --model-param a=2 --ic hernquist --out " +
                      (d / "a.csv").string() + " --out " + (d / "b.csv").string(),
                  d)
                .status,
            0);
  EXPECT_FALSE(fs::exists(d / "a.csv"));
  EXPECT_EQ(hoshi::io::read_particles((d / "b.csv").string()).size(), 20u);
}

// Option errors cxxopts finds are said in hoshi's words, in one line with plain quotes: an
// unknown option (with the nearest one when the name is a typo of it), a missing value, a
// value given to a flag. Nothing is written.
TEST(Cli, OptionErrorsAreOneLineAndNameTheOption) {
  const fs::path d = scratch();
  const std::string o = (d / "o").string(), x = (d / "x.csv").string();
  const std::pair<std::string, std::string> cases[] = {
      {"run --thetaa 0.5",
       "hoshi run: error: unknown option --thetaa; did you mean --theta? "
       "(see --help)"},
      {"run --outt " + o, "unknown option --outt; did you mean --out?"},
      {"run --ouput " + o, "unknown option --ouput (see --help)"},  // 2 edits of 5: too far
      {"run --softenin 0.1", "did you mean --softening?"},
      {"ic -o " + x, "hoshi ic: error: unknown option -o (see --help)"},
      {"run --zzzzzz 1", "unknown option --zzzzzz (see --help)"},  // nothing near it
      {"run --G 2", "malformed option --G; did you mean -G? (see --help)"},
      {"run -dt 1", "unknown option -d (in -dt; did you mean --dt?) (see --help)"},
      {"run --dt", "hoshi run: error: option --dt needs a value"},
      {"ic --out", "option --out needs a value"},
      {"run --overwrite=x", "option --overwrite: value 'x' is not valid (a flag takes no value"},
      {"run --seed x", "option --seed: value 'x' is not valid"},
      // Decimal only: cxxopts' own parser took 0x10 as 16 (and -n, the model parameters refuse
      // hex).
      {"run --seed 0x10", "option --seed: value '0x10' is not valid"},
      {"run --seed 0.5", "option --seed: value '0.5' is not valid"},
      {"run --seed=-1", "option --seed: value '-1' is not valid"},
      // Checked without the outputs they shape (a bad resolution was stored in the checkpoint
      // and failed a later restart; the radius was said unused, then refused without its value).
      {"run --render-resolution 0 --out " + o, "--render-resolution: value 0"},
      {"analyze " + x + " --disk-rmax -5", "option --disk-rmax: value -5 (must be >= 0)"},
      {"analyze " + x + " --csv " + o + ".hdf5", "the table is written as CSV (name the file"},
  };
  for (const auto& [args, needle] : cases) {
    const Result r = hoshi(args, d);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("\xE2\x80"), std::string::npos)
        << args << ": " << r.err;  // no curly quotes
  }
  for (const auto& entry : fs::directory_iterator(d))  // the harness's two files only
    EXPECT_TRUE(entry.path().filename() == "stderr.txt" || entry.path().filename() == "stdout.txt")
        << entry.path();
}

// Outputs in a directory that cannot be written are refused before any work (they failed after
// it, with exit 1). Root writes anywhere: there hoshi runs as the user nobody (setpriv), and
// the test is skipped only where that cannot run it (no setpriv, a binary nobody cannot reach).
TEST(Cli, OutputsInAReadOnlyDirectoryAreRefusedBeforeAnyWork) {
  std::string as_user;
  if (::geteuid() == 0) {
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    if (std::system((as_user + HOSHI_EXE + " --version >/dev/null 2>&1").c_str()) != 0)
      GTEST_SKIP() << "running as root, which may write into any directory, and hoshi cannot "
                      "run as nobody here (setpriv missing, or the build out of nobody's reach)";
  }
  const fs::path d = scratch();
  const std::string in = (d / "p.csv").string(), ro = (d / "ro").string();
  ASSERT_EQ(hoshi("ic -n 100 --out " + in, d).status, 0);
  using fs::perms;
  if (!as_user.empty()) {  // nobody reads the input (a umask of 077 made it root's alone)
    fs::permissions(in, perms::others_read, fs::perm_options::add);
    if (std::system((as_user + "test -r " + in + " >/dev/null 2>&1").c_str()) != 0)
      GTEST_SKIP() << "running as root, and the scratch directory " << d
                   << " is out of nobody's reach (TMPDIR in a private directory?)";
  }
  fs::create_directories(ro);
  fs::permissions(ro, perms::owner_read | perms::owner_exec | perms::group_read |
                          perms::group_exec | perms::others_read | perms::others_exec);
  const auto run_as = [&](const std::string& args, const fs::path& dir) {
    const fs::path err = dir / "stderr.txt";
    const int raw =
        std::system((as_user + HOSHI_EXE + " " + args + " >/dev/null 2>" + err.string()).c_str());
    std::ifstream text(err);
    std::stringstream s;
    s << text.rdbuf();
    return Result{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, s.str(), ""};
  };
  for (const auto& [cmd, needle] :
       {std::pair<std::string, std::string>{"run -n 100 --t-end 0 --out " + ro + "/o",
                                            "cannot be created: " + ro + " is not writable"},
        {"run -n 100 --t-end 0 --out " + ro, "the directory is not writable"},
        {"forces " + in + " --out " + ro + "/f.csv", "directory " + ro + " is not writable"},
        {"analyze " + in + " --profiles " + ro + "/prof", ro + " is not writable"}}) {
    const Result r = run_as(cmd, d);
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << cmd << ": " << r.err;
  }
  fs::permissions(ro, fs::perms::owner_all);
  // A restart in a run directory it cannot write is refused before the forces are computed
  // again (it failed at its first energy.csv row), and the checkpoint stays.
  const std::string run = (d / "run").string();
  ASSERT_EQ(hoshi("run -n 100 --t-end 0.0625 --dt 0.0625 --quiet --out " + run, d).status, 0);
  for (const auto& f : fs::directory_iterator(run))
    fs::permissions(f.path(), perms::others_read, fs::perm_options::add);
  fs::permissions(run, perms::owner_read | perms::owner_exec | perms::group_read |
                           perms::group_exec | perms::others_read | perms::others_exec);
  const auto slurp = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  const std::string checkpoint = slurp(run + "/checkpoint.hdf5");
  const Result r = run_as("run --restart " + run + " --t-end 0.125", d);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--restart " + run + ": the directory is not writable"), std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(run + "/checkpoint.hdf5"), checkpoint);
  fs::permissions(run, fs::perms::owner_all);
}

TEST(Cli, OutputInAMissingDirectoryIsRefusedBeforeAnyWork) {
  // Every command that writes a file names the option, the path and the missing directory in
  // one line and exits 2 at once (bench and accuracy would otherwise fail after their work).
  const fs::path d = scratch();
  const fs::path ic = d / "ic.csv";
  ASSERT_EQ(hoshi("ic -n 50 --out " + ic.string(), d).status, 0);
  const std::string missing = (d / "missing" / "out").string();
  const std::pair<std::string, std::string> cases[] = {
      {"ic -n 10 --out " + missing + ".csv", "--out"},
      {"forces " + ic.string() + " --out " + missing + ".csv", "--out"},
      {"bench -n 100 --csv " + missing + ".csv", "--csv"},
      {"accuracy -n 100 --csv " + missing + ".csv", "--csv"},
      {"accuracy -n 100 --errors " + missing + ".csv", "--errors"},
      {"analyze " + ic.string() + " --csv " + missing + ".csv", "--csv"},
      {"render " + ic.string() + " --out " + missing + ".png", "--out"},
  };
  for (const auto& [args, option] : cases) {
    const Result r = hoshi(args, d);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(option + " " + missing), std::string::npos) << args << ": " << r.err;
    EXPECT_NE(r.err.find("does not exist"), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(d / "missing"));
  // An empty name.
  Result empty = hoshi("forces " + ic.string() + " --out ''", d);
  EXPECT_EQ(empty.status, 2);
  EXPECT_NE(empty.err.find("--out: empty file name"), std::string::npos) << empty.err;
  // A directory as the output file, and a file as its directory.
  Result r = hoshi("ic -n 10 --overwrite --out " + d.string(), d);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  r = hoshi("ic -n 10 --out " + (ic / "x.csv").string(), d);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
}

TEST(Cli, BenchAndAnalyzeInputErrorsComeBeforeTheirTables) {
  // A missing file, a bad model parameter, an impossible solver or a bad snapshot: one error
  // line and no table header on stdout (the header was printed first).
  const fs::path d = scratch();
  write(d / "bad.csv", "id,x,y,z,vx,vy,vz,m\n0,1,2,3,0,0,0,1\n1,nan,2,3,0,0,0,1\n");
  const std::string cases[] = {
      "bench --ic " + (d / "none.csv").string() + " --peak-gflops 1",
      "bench -n 100 --ic hernquist --model-param a=-1 --peak-gflops 1",
      "bench -n 100 --precision double --solver tree --peak-gflops 1",
      "analyze " + (d / "bad.csv").string(),
  };
  for (const std::string& args : cases) {
    const fs::path out = d / "stdout.txt", err = d / "stderr.txt";
    const int raw = std::system(
        (std::string(HOSHI_EXE) + " " + args + " > " + out.string() + " 2> " + err.string())
            .c_str());
    EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 2) << args;
    std::ifstream e(err);
    std::stringstream text;
    text << e.rdbuf();
    EXPECT_EQ(lines(text.str()), 1) << args << ": " << text.str();
    EXPECT_EQ(fs::file_size(out), 0u) << args;
  }
}

// analyze --bound takes the run's softening from the snapshot unless --softening is given (its
// default 0 unbound a softened run's particles in another potential than the run's).
TEST(Cli, AnalyzeBoundUsesTheRunsSofteningUnlessGiven) {
  const fs::path d = scratch();
  const std::string run = (d / "run").string();
  // eps 0.5 in a Plummer sphere of scale ~0.6: a much shallower potential, fewer bound.
  ASSERT_EQ(hoshi("run -n 1000 --softening 0.5 --kernel spline --t-end 0 --snapshot-every 1 "
                  "--quiet --out " +
                      run,
                  d)
                .status,
            0);
  const auto bound_mass = [&](const std::string& extra) {
    const fs::path csv = d / "a.csv";
    const Result r = hoshi("analyze " + run + "/snapshot_000.hdf5 --bound --overwrite --csv " +
                               csv.string() + " " + extra,
                           d);
    EXPECT_EQ(r.status, 0) << extra << ": " << r.err;
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    std::getline(in, line);
    return std::stod(line.substr(line.rfind(',') + 1));
  };
  const double recorded = bound_mass("");
  EXPECT_EQ(recorded, bound_mass("--softening 0.5 --kernel spline"));
  // A length given keeps the recorded kernel (it took Plummer's), unless --kernel is given.
  EXPECT_EQ(recorded, bound_mass("--softening 0.5"));
  EXPECT_NE(recorded, bound_mass("--softening 0.5 --kernel plummer"));
  EXPECT_LT(recorded, bound_mass("--softening 0"));
  // The softening is named for the first snapshot and again for a later one that records
  // another (it was said for the first file only).
  const std::string run2 = (d / "run2").string();
  ASSERT_EQ(
      hoshi("run -n 1000 --softening 0.25 --t-end 0 --snapshot-every 1 --quiet --out " + run2, d)
          .status,
      0);
  fs::copy_file(run + "/snapshot_000.hdf5", d / "again.hdf5");
  Result r = hoshi("analyze " + run + "/snapshot_000.hdf5 " + run2 + "/snapshot_000.hdf5 " +
                       (d / "again.hdf5").string() + " --bound",
                   d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--bound with the softening the snapshot records: 0.5 (spline;"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(run2 + "/snapshot_000.hdf5 records: 0.25 (plummer;"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("again.hdf5 records: 0.5 (spline;"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 3) << r.err;
  // A file with neither units nor G: G = 1 is assumed, and said.
  ASSERT_EQ(hoshi("ic -n 500 --units galaxy --out " + (d / "g.csv").string(), d).status, 0);
  r = hoshi("analyze " + (d / "g.csv").string() + " --bound", d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.err.find("g.csv records no units or G: G = 1 was assumed for the bound mass (-G sets"),
      std::string::npos)
      << r.err;
  // ... and no softening: 0 is used, and said (it went unsaid).
  EXPECT_NE(r.err.find("g.csv records no softening: the bound mass is that of the unsoftened"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(hoshi("analyze " + (d / "g.csv").string() + " --bound --softening 0.1", d)
                .err.find("records no softening"),
            std::string::npos);
  r = hoshi("analyze " + (d / "g.csv").string() + " --bound -G 43007.1", d);
  EXPECT_EQ(r.err.find("assumed"), std::string::npos) << r.err;
  // Options that only --bound or --profiles read are named when given without them (they
  // were ignored without a word).
  r = hoshi("analyze " + (d / "g.csv").string() + " --softening 0.1 --theta 0.3 --bins 10", d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("note: --softening, --theta unused without --bound"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("note: --bins unused without --profiles"), std::string::npos) << r.err;
  EXPECT_EQ(
      hoshi("analyze " + (d / "g.csv").string() + " --bound --softening 0.1", d).err.find("unused"),
      std::string::npos);
}

// accuracy --backend cuda on a machine without a device (or a build without CUDA): one line
// and exit 2 before any output (the table's header came first).
TEST(Cli, AccuracyRefusesAMissingBackendBeforeItsTable) {
  const fs::path d = scratch();
  const Result r = hoshi("accuracy -n 1000 --backend cuda --targets 10", d);
  if (r.status == 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
}

// An invalid --criterion lists auto, the default, with the others.
TEST(Cli, ACriterionErrorListsAuto) {
  const fs::path d = scratch();
  const Result r = hoshi("run --criterion xyz --out " + (d / "o").string(), d);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("invalid --criterion 'xyz' (expected auto|bh|barnes94|bmax|relative)"),
            std::string::npos)
      << r.err;
}

// forces takes the softening a run's snapshot records (it took the file's G but eps 0: a run's
// forces came out unsoftened unless its --softening was typed again), and says so.
// hoshi ic and a tipsy file's units file: one that is the input is never replaced (an HDF5
// snapshot named y.tipsy.param was overwritten with units text, exit 0), one beside a linked
// output needs --overwrite (it was removed), and particles without units written over a file
// with them take its .param away (it stayed, and gave them the old units).
TEST(Cli, IcKeepsTipsyUnitsFilesItShouldNotReplace) {
  const fs::path d = scratch();
  const std::string param = (d / "y.tipsy.param").string();
  ASSERT_EQ(hoshi("ic -n 16 --out " + param, d).status, 2);  // not a format: by extension
  ASSERT_EQ(hoshi("ic -n 16 --out " + (d / "y.hdf5").string(), d).status, 0);
  fs::copy_file(d / "y.hdf5", param);
  const std::string before = [&] {
    std::ifstream in(param, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  const Result own =
      hoshi("ic --ic " + param + " --out " + (d / "y.tipsy").string() + " --overwrite", d);
  EXPECT_EQ(own.status, 2) << own.err;
  EXPECT_NE(own.err.find("is the input file"), std::string::npos) << own.err;
  std::ifstream in(param, std::ios::binary);
  std::stringstream after;
  after << in.rdbuf();
  EXPECT_EQ(after.str(), before);
  EXPECT_FALSE(fs::exists(d / "y.tipsy"));

  fs::create_symlink("target.tipsy", d / "link.tipsy");
  write(d / "link.tipsy.param", "dKpcUnit = 1\n");
  ASSERT_EQ(hoshi("ic -n 16 --out " + (d / "in.csv").string(), d).status, 0);
  const Result link =
      hoshi("ic --ic " + (d / "in.csv").string() + " --out " + (d / "link.tipsy").string(), d);
  EXPECT_EQ(link.status, 2) << link.err;
  EXPECT_NE(link.err.find("link.tipsy.param exists"), std::string::npos) << link.err;
  EXPECT_TRUE(fs::exists(d / "link.tipsy.param"));

  ASSERT_EQ(hoshi("ic -n 16 --units galaxy --out " + (d / "g.tipsy").string(), d).status, 0);
  ASSERT_TRUE(fs::exists(d / "g.tipsy.param"));
  ASSERT_EQ(hoshi("ic --ic " + (d / "in.csv").string() + " --out " + (d / "g.tipsy").string() +
                      " --overwrite",
                  d)
                .status,
            0);
  EXPECT_FALSE(fs::exists(d / "g.tipsy.param"));
}

// A snapshot with one byte of its header changed: the error is one line. HDF5's exit handler
// then printed "HDF5: infinite loop closing library" and a line of its free lists.
TEST(Cli, CorruptHdf5HeaderGivesOneLine) {
  const fs::path d = scratch();
  const Result made = hoshi("ic -n 64 --units galaxy --out " + (d / "a.hdf5").string(), d);
  ASSERT_EQ(made.status, 0) << made.err;
  std::string bytes;
  {
    std::ifstream in(d / "a.hdf5", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    bytes = text.str();
  }
  ASSERT_GT(bytes.size(), 834u);
  bytes[834] = 8;  // in the Header's attribute messages (found by mutating the file)
  {
    std::ofstream out(d / "c.hdf5", std::ios::binary);
    out << bytes;
  }
  const Result r = hoshi("analyze " + (d / "c.hdf5").string(), d);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("c.hdf5: field "), std::string::npos) << r.err;
}

TEST(Cli, ForcesTakeTheSofteningTheFileRecords) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("run -n 100 --softening 0.05 --solver direct --dt 0.0625 --t-end 0.0625 "
                  "--snapshot-every 1 --quiet --out " +
                      (d / "r").string(),
                  d)
                .status,
            0);
  const std::string snap = (d / "r" / "snapshot_000.hdf5").string();
  const auto forces = [&](const std::string& name, const std::string& extra) {
    const Result r =
        hoshi("forces " + snap + " --solver direct --out " + (d / name).string() + extra, d);
    EXPECT_EQ(r.status, 0) << r.err;
    std::ifstream in(d / name);
    std::stringstream text;
    text << in.rdbuf();
    return std::pair{text.str(), r.err};
  };
  const auto [recorded, note] = forces("a.csv", "");
  EXPECT_NE(note.find("note: the softening " + snap +
                      " records: 0.05 (plummer; --softening "
                      "overrides)"),
            std::string::npos)
      << note;
  // The kernel the file records, and a --kernel taken instead (the note gave the given one as
  // the file's; an audit).
  const auto [spline, spline_note] = forces("k.csv", " --kernel spline");
  EXPECT_NE(spline_note.find(" records: 0.05 (plummer kernel; --kernel spline taken; --softening "
                             "overrides)"),
            std::string::npos)
      << spline_note;
  EXPECT_EQ(recorded, forces("b.csv", " --softening 0.05").first);
  EXPECT_NE(recorded, forces("c.csv", " --softening 0").first);
  // "auto", the default --help shows, given explicitly, is the recorded softening too.
  EXPECT_EQ(recorded, forces("d.csv", " --softening auto").first);
  // A run has no recorded softening to default to: "auto" is not a number there.
  const Result run_auto =
      hoshi("run -n 100 --softening auto --t-end 0.0625 --quiet --out " + (d / "r2").string(), d);
  EXPECT_NE(run_auto.status, 0);
  EXPECT_NE(run_auto.err.find("option --softening: value 'auto' is not a number"),
            std::string::npos)
      << run_auto.err;
  EXPECT_FALSE(fs::exists(d / "r2"));
}

// A length given for a run's snapshot is taken with the kernel the run used (a spline run's
// snapshot got Plummer forces with --softening alone, off by 1e-2 at the median), with a note;
// --kernel overrides.
TEST(Cli, ForcesTakeTheRecordedKernelWithAGivenSoftening) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("run -n 100 --softening 0.05 --kernel spline --solver direct --dt 0.0625 "
                  "--t-end 0.0625 --snapshot-every 1 --quiet --out " +
                      (d / "r").string(),
                  d)
                .status,
            0);
  const std::string snap = (d / "r" / "snapshot_000.hdf5").string();
  const auto forces = [&](const std::string& name, const std::string& extra) {
    const Result r = hoshi("forces " + snap + " --solver direct --precision double --out " +
                               (d / name).string() + extra,
                           d);
    EXPECT_EQ(r.status, 0) << r.err;
    std::ifstream in(d / name);
    std::stringstream text;
    text << in.rdbuf();
    return std::pair{text.str(), r.err};
  };
  const auto [given, note] = forces("a.csv", " --softening 0.1");
  EXPECT_NE(note.find("note: " + snap +
                      " records the kernel spline, which --softening 0.1 is "
                      "taken with (--kernel overrides)"),
            std::string::npos)
      << note;
  const auto [spline, none] = forces("b.csv", " --softening 0.1 --kernel spline");
  EXPECT_EQ(given, spline);
  EXPECT_EQ(none.find("note"), std::string::npos) << none;
  EXPECT_NE(given, forces("c.csv", " --softening 0.1 --kernel plummer").first);
}

// analyze's table keeps a blank between columns when a value fills its column (radii of
// 1e-110 ran into each other: "2.84839e-1117.48978e-111").
TEST(Cli, AnalyzeColumnsStaySeparatedForWideValues) {
  const fs::path d = scratch();
  std::ostringstream csv;
  csv << "id,x,y,z,vx,vy,vz,m\n";
  for (int i = 0; i < 40; ++i)
    csv << i << "," << -1.2345678e-110 * (i + 1) << "," << 2e-111 * i << ",0,0,0,0,0.025\n";
  write(d / "tiny.csv", csv.str());
  const Result r = hoshi("analyze " + (d / "tiny.csv").string() + " --bound", d);
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream rows(r.out);
  std::string line, row;
  while (std::getline(rows, line))
    if (line.rfind("tiny ", 0) == 0) row = line;
  std::istringstream fields(row);
  std::vector<std::string> f;
  for (std::string w; fields >> w;) f.push_back(w);
  ASSERT_EQ(f.size(), 8u) << r.out;  // snapshot time n mass r10 r50 r90 bound_mass
  for (std::size_t k = 4; k < 7; ++k) EXPECT_NE(f[k].find("e-1"), std::string::npos) << f[k];
}

// Snapshot arguments are taken whole (a comma split run,1.csv into "run" and "1.csv"), and a
// tipsy run's snapshot_* leaves out the units files beside their snapshots (it failed on them).
TEST(Cli, AnalyzeTakesEachArgumentWholeAndLeavesOutTipsyUnitsFiles) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("ic -n 200 --out " + (d / "run,1.csv").string(), d).status, 0);
  const fs::path csv = d / "a.csv";
  Result r = hoshi("analyze " + (d / "run,1.csv").string() + " --csv " + csv.string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  std::stringstream s;
  s << std::ifstream(csv).rdbuf();
  EXPECT_NE(s.str().find("run,1.csv,0,200,"), std::string::npos) << s.str();
  const fs::path run = d / "t";
  ASSERT_EQ(hoshi("run -n 200 --t-end 0.125 --dt 0.0625 --snapshot-every 0.0625 "
                  "--snapshot-format tipsy --quiet --out " +
                      run.string(),
                  d)
                .status,
            0);
  // One units file for the run (yt refuses a directory with two; one per snapshot was written).
  EXPECT_FALSE(fs::exists(run / "snapshot_000.tipsy.param"));
  const std::string snaps = (run / "snapshot.param").string() + " " +
                            (run / "snapshot_000.tipsy").string() + " " +
                            (run / "snapshot_001.tipsy").string();
  r = hoshi("analyze " + snaps + " --overwrite --csv " + csv.string(), d);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("1 tipsy units file(s) of the snapshots given left out"), std::string::npos)
      << r.err;
  std::ifstream in(csv);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 3);  // the header and two snapshots
  // A units file given alone is still an error (it is no snapshot).
  r = hoshi("analyze " + (run / "snapshot.param").string(), d);
  EXPECT_EQ(r.status, 2) << r.err;
}

TEST(Cli, AnalyzeProfilesOfSnapshotsWithOneNameDoNotCollide) {
  // run1/snap.csv and run2/snap.csv: the profiles are named after the directories that tell
  // them apart; a bad input among the snapshots leaves no profile written; one snapshot given
  // twice is refused.
  const fs::path d = scratch();
  fs::create_directories(d / "run1");
  fs::create_directories(d / "run2");
  const fs::path a = d / "run1" / "snap.csv", b = d / "run2" / "snap.csv";
  ASSERT_EQ(hoshi("ic -n 400 --seed 1 --out " + a.string(), d).status, 0);
  ASSERT_EQ(hoshi("ic -n 400 --seed 2 --out " + b.string(), d).status, 0);
  const fs::path prof = d / "prof";
  const Result r =
      hoshi("analyze " + a.string() + " " + b.string() + " --profiles " + prof.string(), d);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string ra = read(prof / "run1_snap_radial.csv");
  const std::string rb = read(prof / "run2_snap_radial.csv");
  EXPECT_GT(lines(ra), 2);
  EXPECT_NE(ra, rb);  // two seeds, two profiles: neither file is the other's
  EXPECT_TRUE(fs::exists(prof / "run1_snap_disk.csv"));
  EXPECT_TRUE(fs::exists(prof / "run2_snap_disk.csv"));
  // The table on stdout names the rows as the profiles are named (both rows read "snap").
  const fs::path table = d / "table.txt";
  ASSERT_EQ(std::system((std::string(HOSHI_EXE) + " analyze " + a.string() + " " + b.string() +
                         " > " + table.string() + " 2>/dev/null")
                            .c_str()),
            0);
  const std::string rows = read(table);
  EXPECT_NE(rows.find("\nrun1_snap "), std::string::npos) << rows;
  EXPECT_NE(rows.find("\nrun2_snap "), std::string::npos) << rows;
  // Three snapshots of one stem: each named with its directory (the third kept the bare stem
  // once the first two differed).
  fs::create_directories(d / "run3");
  ASSERT_EQ(hoshi("ic -n 400 --seed 3 --out " + (d / "run3" / "snap.csv").string(), d).status, 0);
  ASSERT_EQ(
      std::system((std::string(HOSHI_EXE) + " analyze " + a.string() + " " + b.string() + " " +
                   (d / "run3" / "snap.csv").string() + " > " + table.string() + " 2>/dev/null")
                      .c_str()),
      0);
  EXPECT_NE(read(table).find("\nrun3_snap "), std::string::npos) << read(table);
  // Without --profiles one file may be given twice: two rows (it was refused as a profile
  // clash once the rows were named like the profiles).
  EXPECT_EQ(hoshi("analyze " + a.string() + " " + a.string(), d).status, 0);

  const fs::path prof2 = d / "prof2";
  Result bad = hoshi(
      "analyze " + a.string() + " " + (d / "nope.csv").string() + " --profiles " + prof2.string(),
      d);
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("nope.csv"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(prof2)) << "a failed analyze left profiles behind";
  // The table may go into the --profiles directory that the command creates (it was refused:
  // "directory prof2 does not exist"); a missing directory of its own is still an error.
  // (--profiles with a trailing slash too: weakly_canonical kept it and the two differed.)
  const Result inside = hoshi("analyze " + a.string() + " --profiles " + prof2.string() +
                                  "/ --csv " + (prof2 / "table.csv").string(),
                              d);
  EXPECT_EQ(inside.status, 0) << inside.err;
  EXPECT_TRUE(fs::exists(prof2 / "table.csv"));
  EXPECT_TRUE(fs::exists(prof2 / "snap_radial.csv"));
  fs::remove_all(prof2);
  const Result elsewhere = hoshi("analyze " + a.string() + " --profiles " + prof2.string() +
                                     " --csv " + (d / "nodir" / "table.csv").string(),
                                 d);
  EXPECT_EQ(elsewhere.status, 2) << elsewhere.err;
  EXPECT_FALSE(fs::exists(prof2));

  bad = hoshi("analyze " + a.string() + " " + (d / "run1" / ".." / "run1" / "snap.csv").string() +
                  " --profiles " + prof2.string(),
              d);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("given twice"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(prof2));

  // One directory, one stem, two formats (run1/snap.csv, run1/snap.hdf5): two files, not one
  // given twice (which was the message); named by their whole names.
  const fs::path h = d / "run1" / "snap.hdf5";
  ASSERT_EQ(hoshi("ic --ic " + b.string() + " --out " + h.string(), d).status, 0);
  const fs::path prof3 = d / "prof3";
  const Result two =
      hoshi("analyze " + a.string() + " " + h.string() + " --profiles " + prof3.string(), d);
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(read(prof3 / "snap_csv_radial.csv"), ra);
  EXPECT_EQ(read(prof3 / "snap_hdf5_radial.csv"), rb);
  // Three of them and another directory's snap: the three by their whole names, all of them
  // (the third was named run1_snap once the first two differed), and each with its directory
  // (run2's was the bare stem once run1's had their whole names).
  const fs::path t = d / "run1" / "snap.tipsy";
  ASSERT_EQ(hoshi("ic --ic " + b.string() + " --out " + t.string(), d).status, 0);
  const fs::path prof4 = d / "prof4";
  const Result four = hoshi("analyze " + a.string() + " " + h.string() + " " + t.string() + " " +
                                b.string() + " --profiles " + prof4.string(),
                            d);
  ASSERT_EQ(four.status, 0) << four.err;
  for (const char* name : {"run1_snap_csv", "run1_snap_hdf5", "run1_snap_tipsy", "run2_snap"})
    EXPECT_TRUE(fs::exists(prof4 / (std::string(name) + "_radial.csv"))) << name;
  EXPECT_EQ(read(prof4 / "run1_snap_csv_radial.csv"), ra);
  // One file under two names of one stem (a link): given twice, not two files.
  fs::create_symlink("snap.hdf5", d / "run1" / "snap.h5");
  const Result linked = hoshi("analyze " + h.string() + " " + (d / "run1" / "snap.h5").string() +
                                  " --profiles " + (d / "prof5").string(),
                              d);
  EXPECT_EQ(linked.status, 2);
  EXPECT_NE(linked.err.find("given twice"), std::string::npos) << linked.err;
}

// A conversion that leaves double's range is refused before anything is written (masses of
// 1e305 in galaxy units became inf in Henon units, in a file that could not be read back).
TEST(Cli, IcRefusesAConversionBeyondDoublesRange) {
  const fs::path d = scratch();
  {
    std::ofstream f(d / "big.csv");
    f << "id,x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,0,1e305\n1,1,0,0,0,0,0,1e305\n";
  }
  ASSERT_EQ(hoshi("ic --ic " + (d / "big.csv").string() + " --units galaxy --out " +
                      (d / "big.hdf5").string(),
                  d)
                .status,
            0);
  const Result r = hoshi(
      "ic --ic " + (d / "big.hdf5").string() + " --units henon --out " + (d / "x.hdf5").string(),
      d);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("big.hdf5 in --units henon: particle id 0: field m: value inf"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(d / "x.hdf5"));
  // G in range as given, beyond it in galaxy units: refused by ic, and by a run before it
  // starts (it ran, and no restart could read its stored G back as a -G).
  ASSERT_EQ(hoshi("ic -n 64 -G 1e30 --out " + (d / "g.hdf5").string(), d).status, 0);
  const Result ic = hoshi(
      "ic --ic " + (d / "g.hdf5").string() + " --units galaxy --out " + (d / "g2.hdf5").string(),
      d);
  EXPECT_EQ(ic.status, 2);
  EXPECT_NE(ic.err.find("field G: value 4.30071057317063e+34 (from 1e-30 to 1e30"),
            std::string::npos)
      << ic.err;
  const Result run =
      hoshi("run --ic " + (d / "g.hdf5").string() +
                " --units galaxy --dt 1e-20 --t-end 1e-20 --out " + (d / "gr").string(),
            d);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("G = 4.30071057317063e+34 in the run's units (from 1e-30 to 1e30"),
            std::string::npos)
      << run.err;
  EXPECT_FALSE(fs::exists(d / "gr"));
}

// An automatic field of view beyond double's range is named as such (hoshi render filled in
// --extent first and blamed it, though it was not given).
TEST(Cli, RenderNamesAnAutomaticFieldItCannotDraw) {
  const fs::path d = scratch();
  write(d / "far.csv", "id,x,y,z,vx,vy,vz,m\n0,-1.7e308,0,0,0,0,0,1\n1,1.7e308,0,0,0,0,0,1\n");
  const Result r =
      hoshi("render " + (d / "far.csv").string() + " --out " + (d / "far.png").string(), d);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("the automatic field of view (--extent 0): value inf"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(d / "far.png"));
}

TEST(Cli, ForcesMatchIndependentDoubleSum) {
  const fs::path d = scratch();
  const fs::path ic = d / "ic.csv", out = d / "f.csv";
  ASSERT_EQ(hoshi("ic --ic plummer -n 300 --seed 4 --out " + ic.string(), d).status, 0);
  ASSERT_EQ(
      hoshi("forces " + ic.string() + " --solver direct --softening 0.01 --out " + out.string(), d)
          .status,
      0);
  const hoshi::ParticleSet p = hoshi::io::read_csv(ic.string());
  std::ifstream in(out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "id,ax,ay,az,pot");
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_TRUE(std::getline(in, line));
    std::stringstream s(line);
    std::string f[5];
    for (auto& x : f) std::getline(s, x, ',');
    EXPECT_EQ(std::stoull(f[0]), p.id[i]);  // input order kept
    double a[3] = {0, 0, 0}, pot = 0, sum_abs = 0;
    for (std::size_t j = 0; j < p.size(); ++j) {
      if (j == i) continue;
      const double dx = p.x[j] - p.x[i], dy = p.y[j] - p.y[i], dz = p.z[j] - p.z[i];
      const double r2 = dx * dx + dy * dy + dz * dz + 1e-4;
      const double inv3 = 1 / (r2 * std::sqrt(r2));
      a[0] += p.m[j] * dx * inv3;
      a[1] += p.m[j] * dy * inv3;
      a[2] += p.m[j] * dz * inv3;
      pot -= p.m[j] / std::sqrt(r2);
      sum_abs += p.m[j] * std::sqrt(dx * dx + dy * dy + dz * dz) * inv3;
    }
    // float32 kernel: |da| <= c sqrt(N) 2^-24 sum|a_ij| with c ~ 8 (rsqrt + Newton, positions
    // rounded to float relative to the box centre).
    const double tol = 8 * std::sqrt(300.0) * 0x1.0p-24 * sum_abs;
    EXPECT_NEAR(std::stod(f[1]), a[0], tol);
    EXPECT_NEAR(std::stod(f[2]), a[1], tol);
    EXPECT_NEAR(std::stod(f[3]), a[2], tol);
    EXPECT_NEAR(std::stod(f[4]), pot, 8 * std::sqrt(300.0) * 0x1.0p-24 * std::abs(pot));
  }
}

// --precision double exists for direct summation only: --solver auto takes it at every N (from
// the crossover up, N = 3072 or 4096 on the CPU, it took the tree and refused the precision).
TEST(Cli, DoublePrecisionWithAutoSolverIsDirectAtAnyN) {
  const fs::path d = scratch();
  const fs::path ic = d / "ic.csv", out = d / "f.csv", err = d / "err.txt";
  ASSERT_EQ(hoshi("ic --ic plummer -n 4096 --out " + ic.string(), d).status, 0);
  const std::string forces = std::string(HOSHI_EXE) + " forces " + ic.string() +
                             " --precision double --softening 0.01 --out " + out.string() + " 2>" +
                             err.string();
  const int raw = std::system(forces.c_str());
  std::ifstream in(err);
  std::stringstream msg;
  msg << in.rdbuf();
  EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 0) << msg.str();
  EXPECT_NE(msg.str().find("4096 particles, solver direct (cpu)"), std::string::npos) << msg.str();
  EXPECT_TRUE(fs::exists(out));
  // The tree asked for by name still refuses it.
  const Result tree = hoshi(
      "forces " + ic.string() + " --solver tree --precision double --out " + (d / "g.csv").string(),
      d);
  EXPECT_EQ(tree.status, 2);
  EXPECT_NE(tree.err.find("--precision double is available with --solver direct only"),
            std::string::npos)
      << tree.err;
}

TEST(Cli, RunWritesEnergyLog) {
  const fs::path d = scratch();
  ASSERT_EQ(hoshi("run -n 256 --solver direct --t-end 0.5 --output-every 0.25 --out " +
                      (d / "r").string(),
                  d)
                .status,
            0);
  std::ifstream in(d / "r" / "energy.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "step,time,dt,kinetic,potential,total,rel_energy_error,px,py,pz,lx,ly,lz,virial_ratio");
  // Each row: its time, total = kinetic + potential (to the printed 17 digits) and the error
  // measured from the first row's total (the conservation itself: test_integrator.cpp).
  int rows = 0;
  double e0 = 0;
  while (std::getline(in, line)) {
    std::vector<double> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(std::stod(x));
    ASSERT_EQ(f.size(), 14u) << line;
    EXPECT_EQ(f[1], 0.25 * rows) << line;
    EXPECT_NEAR(f[5], f[3] + f[4], 1e-15 * (std::abs(f[3]) + std::abs(f[4]))) << line;
    if (rows == 0) e0 = f[5];
    EXPECT_NEAR(f[6], (f[5] - e0) / std::abs(e0), 1e-15) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 3);  // t = 0, 0.25, 0.5
  // The help texts name their commands' options; --version names the program.
  const Result help = hoshi("--help", d), version = hoshi("--version", d),
               run_help = hoshi("run --help", d);
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("run"), std::string::npos) << help.out;
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find("hoshi"), std::string::npos) << version.out;
  EXPECT_EQ(run_help.status, 0);
  EXPECT_NE(run_help.out.find("--t-end"), std::string::npos) << run_help.out;
  // --help=false is no request for help (it printed the help and exited 0): the command runs,
  // here without its --out.
  const Result no_help = hoshi("ic -n 10 --help=false", d);
  EXPECT_EQ(no_help.status, 2);
  EXPECT_NE(no_help.err.find("missing --out"), std::string::npos) << no_help.err;
}

// The times and intervals take a fraction A/B as --dt does (1/16 is exact; 0.0625 had to be
// worked out): the same run as with the decimals, and stored as the numbers they are.
TEST(Cli, RunTimesTakeFractionsAsTheStepDoes) {
  const fs::path d = scratch();
  const std::string common = "run -n 128 --solver direct --dt 1/64 --quiet ";
  ASSERT_EQ(hoshi(common +
                      "--t-end 1/8 --output-every 1/32 --snapshot-every 1/16 --checkpoint-every "
                      "1/16 --out " +
                      (d / "frac").string(),
                  d)
                .status,
            0);
  ASSERT_EQ(hoshi(common +
                      "--t-end 0.125 --output-every 0.03125 --snapshot-every 0.0625 "
                      "--checkpoint-every 0.0625 --out " +
                      (d / "dec").string(),
                  d)
                .status,
            0);
  const auto text = [](const fs::path& f) {
    std::ifstream in(f);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text(d / "frac" / "energy.csv"), text(d / "dec" / "energy.csv"));
  const auto rows = [&] {
    const std::string t = text(d / "frac" / "energy.csv");
    return std::count(t.begin(), t.end(), '\n');
  };
  EXPECT_EQ(rows(), 6);  // the header and t = 0, 1/32, ..., 1/8
  for (const char* f : {"snapshot_000.hdf5", "snapshot_001.hdf5", "snapshot_002.hdf5"})
    EXPECT_TRUE(fs::exists(d / "frac" / f)) << f;
  const auto params =
      hoshi::io::read_hdf5_snapshot((d / "frac" / "checkpoint.hdf5").string()).info.parameters;
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, double>>{{"t-end", 0.125},
                                                   {"output-every", 0.03125},
                                                   {"snapshot-every", 0.0625},
                                                   {"checkpoint-every", 0.0625}}) {
    const hoshi::io::ParamValue* v = hoshi::io::find_param(params, key);
    ASSERT_NE(v, nullptr) << key;
    ASSERT_TRUE(std::holds_alternative<double>(*v)) << key << " " << hoshi::io::to_string(*v);
    EXPECT_EQ(std::get<double>(*v), value) << key;
  }
  // A restart to a later end given as a fraction continues the same schedule.
  ASSERT_EQ(hoshi("run --restart " + (d / "frac").string() + " --t-end 3/16 --quiet", d).status, 0);
  EXPECT_EQ(rows(), 8);
  // An end before the checkpoint's time, said as given and as the number it is.
  const Result early = hoshi("run --restart " + (d / "frac").string() + " --t-end 1/16 --quiet", d);
  EXPECT_EQ(early.status, 2);
  EXPECT_NE(early.err.find("--t-end 1/16 = 0.0625 is not after the time 0.1875"), std::string::npos)
      << early.err;
  EXPECT_TRUE(fs::exists(d / "frac" / "snapshot_003.hdf5"));
}

// Output options whose series is off are said to be unused, as --gadget-ids is (--snapshot-format
// tipsy alone wrote no snapshot, unsaid; an audit); with their series on, nothing is said.
TEST(Cli, RunSaysOutputOptionsOfSeriesThatAreOff) {
  const fs::path d = scratch();
  const std::string shape =
      "run -n 64 --solver direct --dt 1/64 --t-end 1/64 --overwrite --snapshot-format tipsy "
      "--render-axis x --render-extent 3 --render-resolution 64 --gadget-ids 64 --out " +
      (d / "o").string();
  Result r = hoshi(shape, d);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* note :
       {"note: --snapshot-format unused: snapshots are off (give --snapshot-every)",
        "note: --render-axis unused: frames are off (give --render-every)",
        "note: --render-extent unused", "note: --render-resolution unused",
        "note: --gadget-ids unused: it applies to snapshots in Gadget binary"})
    EXPECT_NE(r.out.find(note), std::string::npos) << note << "\n" << r.out;
  r = hoshi(shape + " --snapshot-every 1/64 --render-every 1/64", d);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("--snapshot-format unused"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("frames are off"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: --gadget-ids unused"), std::string::npos) << r.out;  // tipsy
}

// A write that fails (a full disk; here the file-size limit, which fails writes with EFBIG)
// exits 1 with the one line naming the file, keeps the earlier file and leaves no temporary.
// An HDF5 file that failed to flush could not be closed either, and HDF5's exit handler then
// crashed (SIGSEGV, status 139, after the error line).
TEST(Cli, AFailedWriteExitsOneAndKeepsTheEarlierFile) {
  const fs::path d = scratch();
  const std::string x = (d / "x.hdf5").string();
  ASSERT_EQ(hoshi("ic -n 100 --out " + x, d).status, 0);  // ~14 KB
  std::stringstream before;
  before << std::ifstream(x, std::ios::binary).rdbuf();
  const auto limited = [&](const std::string& args, int kib = 100) {
    const fs::path err = d / "limited.txt";
    const std::string cmd = "bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(kib) + "; exec " +
                            std::string(HOSHI_EXE) + " " + args + "\" >/dev/null 2>" + err.string();
    const int raw = std::system(cmd.c_str());
    std::stringstream s;
    s << std::ifstream(err).rdbuf();
    return Result{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, s.str(), ""};
  };
  // accuracy: its --errors (~180 KB) fails; the small --csv table must not replace the old one
  // (it did, and alone on a full disk it came out empty with status 0).
  const std::string acc = (d / "acc.csv").string();
  write(acc, "old\n");
  for (const auto& [args, needle] :
       {std::pair<std::string, std::string>{"ic -n 2000 --overwrite --out " + x,  // ~270 KB
                                            "x.hdf5: "},
        {"run -n 2000 --t-end 0.01 --dt 0.01 --snapshot-every 0.01 --quiet --out " +
             (d / "run").string(),
         ".hdf5: "},
        {"accuracy -n 2000 --targets 0 --overwrite --csv " + acc + " --errors " +
             (d / "err.csv").string(),
         "--errors "}}) {
    const Result r = limited(args);
    EXPECT_EQ(r.status, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  }
  // render: one line (libpng printed "libpng error: Write Error" before it).
  const Result png =
      limited("render " + x + " --resolution 2048 --out " + (d / "r.png").string(), 4);
  EXPECT_EQ(png.status, 1) << png.err;
  EXPECT_EQ(lines(png.err), 1) << png.err;
  EXPECT_NE(png.err.find("r.png: PNG write failed"), std::string::npos) << png.err;
  std::stringstream after;
  after << std::ifstream(x, std::ios::binary).rdbuf();
  EXPECT_EQ(after.str(), before.str());
  std::stringstream table;
  table << std::ifstream(acc).rdbuf();
  EXPECT_EQ(table.str(), "old\n");
  for (const auto& dir : {d, d / "run"})
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

}  // namespace
