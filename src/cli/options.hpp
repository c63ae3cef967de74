// Command-line options shared by the hoshi subcommands (cxxopts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cxxopts.hpp>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/particle_set.hpp"
#include "ic/models.hpp"
#include "io/hdf5_snapshot.hpp"
#include "io/snapshot_io.hpp"
#include "solver/solver.hpp"

namespace hoshi::cli {

// Thrown by parse_options after printing --help; main() returns 0 for it.
struct HelpShown {};

// One --model-param list (KEY=VALUE,...) as the user wrote it, checked by parse_model_params
// before cxxopts splits it (a key twice, an empty item): std::invalid_argument naming `where`
// (the option, or a parameter file's field) and the list.
void check_model_param_list(const std::string& list, const std::string& where);

// Parses argv; on --help prints the help and throws HelpShown. Unknown options, missing
// values and malformed numbers become std::invalid_argument with one line naming them.
// typed: the arguments are the user's (two parameter files are then an error); false for
// option layers a command assembles itself (hoshi run: checkpoint, parameter file, command line).
cxxopts::ParseResult parse_options(cxxopts::Options& options, int argc, char** argv,
                                   bool typed = true);

// Strictly parsed option values ("1x" is an error, not 1). Declare such options with
// cxxopts::value<std::string>().
// `or_auto`: the option also takes the word auto (handled by the caller), which a value that is
// neither is told of.
double number(const cxxopts::ParseResult& r, const std::string& name, bool or_auto = false);
// A number, or a fraction A/B of two (--dt 1/1024, as hoshi run's messages write steps).
double number_or_fraction(const cxxopts::ParseResult& r, const std::string& name,
                          bool or_auto = false);
// -G as given, or nothing where it is not given or is "auto" (the default: the unit system's
// G, or a particle file's recorded one; 1 without either). A value must be a number > 0.
std::optional<double> given_G(const cxxopts::ParseResult& r);
// G's range, a given -G's and a file's in the run's units (beyond it a run could start but not
// be restarted, its stored G refused as a -G): std::invalid_argument "invalid WHAT (from
// 1e-30 to 1e30; ...)".
inline constexpr double kMinG = 1e-30, kMaxG = 1e30;
void require_G_in_range(double g, const std::string& what);
int integer(const cxxopts::ParseResult& r, const std::string& name);
// --seed: a whole number from 0 to 2^64 - 1 in decimal (std::invalid_argument otherwise).
std::uint64_t seed_option(const cxxopts::ParseResult& r);
// A boolean option's value: given (--flag, --flag=true) and not --flag=false (counting it
// alone made --overwrite=false overwrite).
bool flag(const cxxopts::ParseResult& r, const std::string& name);

// --solver --backend --softening --kernel --theta --criterion --order --alpha --n-leaf
// --n-group --local-ratio --walk -G --precision. `default_eps` is the default of --softening:
// a number, or "auto" where a file's recorded softening is the default (forces, accuracy,
// analyze --bound), described by `softening_note`; without `choose_solver`, no --solver and
// --precision (a command that always runs the float32 tree: hoshi accuracy).
void add_solver_options(cxxopts::Options& options, const std::string& default_eps = "0",
                        bool choose_solver = true, const std::string& softening_note = "");
// `softening_auto`: --softening accepts "auto" (read as 0 here, for take_recorded_softening
// to replace); elsewhere "auto" is refused as not a number.
SolverConfig solver_config(const cxxopts::ParseResult& r, bool softening_auto = false);

// --softening as a number; "auto" (where `softening_auto`) is 0.
double softening_option(const cxxopts::ParseResult& r, bool softening_auto);
// Whether --softening was given as a number (not "auto", not left to its default).
bool softening_given(const cxxopts::ParseResult& r);

// "--theta, --alpha": those of `keys` given with a value other than "auto" (for the notes
// that name options a command does not use); "" if none.
std::string given_options(const cxxopts::ParseResult& r, std::initializer_list<const char*> keys);

// "--theta, --alpha unused: the forces are a direct sum (--solver auto below N = 4096)" when
// tree options were given (not "auto") but `c` sums N particles directly; for a tree, "--alpha
// unused: ..." with a geometric criterion and "--n-group, --local-ratio unused: ..." with the
// per-particle walk (joined by "; "); else "".
std::string unused_tree_options(const cxxopts::ParseResult& r, const SolverConfig& c,
                                std::size_t n);

// --ic NAME|FILE, -n/--particles N, --seed S, --eccentricity E (kepler), --radius R (uniform).
void add_ic_options(cxxopts::Options& options, const std::string& default_n = "8192");
// The model (-n given with kepler, a two-body model, is an error) or the file's particles.
// With a particle file, `info` (if given) receives its time and units (a model: unchanged).
// `seed_beyond_models`: the command uses --seed for more than the models (hoshi accuracy's
// targets), so a file may come with it (check_ic_file).
ParticleSet initial_conditions(const cxxopts::ParseResult& r, io::SnapshotInfo* info = nullptr,
                               bool seed_beyond_models = false);
// --ic names a file: it must exist (else the error lists the models, in case of a typo), and
// -n, --model-param and (unless `seed_beyond_models`) --seed, which make the models, must not
// be given (on the command line or in a parameter file).
void check_ic_file(const cxxopts::ParseResult& r, bool seed_beyond_models = false);

// Every effective parameter (defaults included) of the model that --ic, --model-param,
// --radius and --eccentricity select, as ("model.KEY", value); empty for a particle file (and
// for plummer, which has none). Written to /Parameters.
std::vector<std::pair<std::string, ModelValue>> model_parameters(const cxxopts::ParseResult& r);
// The model keys given (--model-param), with --radius (uniform) and --eccentricity (kepler) as
// the model keys they set.
ModelParams model_params_with_options(const cxxopts::ParseResult& r);
// The model names --ic accepts (anything else is read as a file).
std::vector<std::string> model_names();
bool is_model(const std::string& ic);
// Velocities made for the gravitational constant G_made, scaled to G: v -> v sqrt(G / G_made),
// so that the system starts in the same equilibrium with its length and mass units kept.
// Models are made with G = 1 (a 1e10 Msun, kpc-sized Plummer sphere in galaxy units; the same
// sphere, faster, with -G 2); tipsy files are in G = 1 units of their own.
void scale_velocities_to_G(ParticleSet& p, double G, double G_made = 1.0);

// A CSV output named as a snapshot or an image (x.hdf5, x.png, x.tipsy, x.gadget; not .dat,
// .bin or .std, common names of text tables) would hold CSV under that name:
// std::invalid_argument "OPTION PATH: the WHAT is written as CSV (name the file *.csv)".
void require_csv_name(const std::string& path, const std::string& option, const std::string& what);

// The softening a particle file's run recorded (/Parameters softening and kernel), for the
// commands that take a file's particles and a softening (analyze --bound, accuracy --ic FILE):
// `c`'s eps and kernel replaced by the recorded ones unless --softening (--kernel) is given in
// `r`; without a recorded softening, a Gadget-4 or AREPO run's (`gadget`,
// io::gadget_softening: its one softening for all the file's particle types, with the spline
// kernel). Returns the text to say ("0.05 (spline", "0.044 (spline kernel, Gadget-4's
// SofteningComovingClass1 for PartType1"), "" when nothing was taken. A bad recorded value
// throws naming `path` and the field.
std::string take_recorded_softening(const cxxopts::ParseResult& r, const io::ParamList& params,
                                    const std::string& path, SolverConfig& c,
                                    const std::optional<io::GadgetSoftening>& gadget);
// "FILE records no softening", or for a Gadget-4 or AREPO run's file with a softening per
// particle type "FILE records no one softening for all its particles (Gadget-4 softenings by
// type: ...)".
std::string no_recorded_softening(const std::string& path,
                                  const std::optional<io::GadgetSoftening>& gadget);
// take_recorded_softening and take_recorded_kernel for a command that reads one particle file
// (forces, accuracy, bench): what was taken, or that the file records no softening, said on
// stderr as "hoshi COMMAND: note: ...".
void take_recorded_softening_and_say(const std::string& command, const cxxopts::ParseResult& r,
                                     const io::ParamList& params, const std::string& path,
                                     SolverConfig& c,
                                     const std::optional<io::GadgetSoftening>& gadget);
// With --softening given (and no --kernel): `c`'s kernel replaced by the one the file records,
// which the given length is taken with (a spline run's snapshot got Plummer forces when only
// the length was given). Returns the note to say ("FILE records the kernel spline, ..."), ""
// when nothing was taken. A bad recorded kernel throws naming `path` and the field.
std::string take_recorded_kernel(const cxxopts::ParseResult& r, const io::ParamList& params,
                                 const std::string& path, SolverConfig& c,
                                 const std::optional<io::GadgetSoftening>& gadget);

// With softening `eps` = 0, two particles of `file` at one point have an infinite force: throws
// std::invalid_argument "FILE: particles with ids I and J are at the same position ...". The
// solvers find them too, but do not know the file; this runs before any output.
void require_distinct_positions_in(const ParticleSet& p, double eps, const std::string& file);
// A run's peak memory per particle: the particles (~97 B) and the tree solver's arrays
// (~118 B; docs/perf-tree.md, 215 B at N = 4e6; a whole run measured 218 B at 2^22).
inline constexpr double kRunBytesPerParticle = 220;
// --ids BEGIN:END (analyze, render): the particles with BEGIN <= id < END, such as one component
// of a galaxy model (halo, then disk, then bulge ids). nullopt when not given.
struct IdRange {
  std::uint64_t lo = 0, hi = 0;
  std::string text;  // as given
};
std::optional<IdRange> id_range_option(const cxxopts::ParseResult& r);
// The particles of p in the range; std::invalid_argument naming `file` when there are none.
ParticleSet select_ids(const ParticleSet& p, const IdRange& ids, const std::string& file);

// The machine's physical memory in bytes; 0 where the system does not say.
double physical_memory();
// Refuses (std::invalid_argument, starting with `what`) n particles whose run would need more
// than the machine's physical memory at kRunBytesPerParticle: the OOM killer ended it, after the
// model had been made.
void require_run_memory(std::size_t n, const std::string& what);

// --gadget-precision float|double and --gadget-ids 32|64 in `group` (Gadget binary output;
// io::WriteOptions). write_options checks them, whatever the output format.
void add_write_options(cxxopts::Options& options, const std::string& group = "");
io::WriteOptions write_options(const cxxopts::ParseResult& r);

// --threads K (0: all cores). apply_threads sets OpenMP's thread count.
void add_threads_option(cxxopts::Options& options);
int apply_threads(const cxxopts::ParseResult& r);

// "0.2,0.3,0.5" -> {0.2, 0.3, 0.5}; each must be a finite number.
std::vector<double> parse_double_list(const std::string& text, const std::string& option);
// "1000,1e5,1e6" -> sizes; each must be a whole number >= 1.
std::vector<std::size_t> parse_size_list(const std::string& text, const std::string& option);
// A whole number from min (1 unless given) to 1e12; text like "1e6" is accepted, "1.5" is not.
std::size_t parse_size(const std::string& text, const std::string& option, std::size_t min = 1);
// "a,b,c" -> {"a", "b", "c"}; "" -> {}. An empty item ("a,,b", "a,") is an error naming
// `option`.
std::vector<std::string> parse_string_list(const std::string& text, const std::string& option);

// A warning on stderr (one line) for an explicit theta above 1 with a geometric criterion:
// legal, but tree forces are far less accurate there (a typo of 1.0 as 10, say).
void warn_large_theta(double theta, Criterion criterion);

}  // namespace hoshi::cli
