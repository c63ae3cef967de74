#include "ic/models.hpp"

#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/number_text.hpp"
#include "ic/galaxy.hpp"
#include "ic/ic.hpp"
#include "ic/spherical.hpp"

namespace hoshi {

namespace {

struct Key {
  const char* name;
  double value;
  const char* meaning;
  const char* text = nullptr;  // non-null: a text key with this default (value unused)
};

constexpr const char* kCopy = "copy";  // model2 default: the primary scaled by mass_ratio
constexpr const char* kG2 = "g2.";     // prefix of the secondary's keys (merger)

struct ModelSpec {
  const char* name;
  const char* summary;
  std::vector<Key> keys;
};

// disk and merger (Hernquist halo); disk-nfw adds halo_r_cut (disk_nfw_keys).
const std::vector<Key> kGalaxyKeys = {
    {"halo_mass", 1.0, "halo mass"},
    {"halo_a", 1.0, "halo scale radius"},
    {"disk_mass", 0.05, "disk mass"},
    {"disk_Rd", 0.1, "disk exponential scale length"},
    {"disk_z0", 0.01, "disk sech^2 scale height"},
    {"disk_Q", 1.5, "Toomre Q at disk_RQ"},
    {"disk_RQ", 0.0, "reference radius for Q (0: 2.43 disk_Rd)"},
    {"disk_Rmax", 0.0, "disk truncation radius (0: 10 disk_Rd)"},
    {"bulge_mass", 0.0, "Hernquist bulge mass (0: no bulge)"},
    {"bulge_a", 0.02, "bulge scale radius"},
    {"disk_fraction", 0.25, "fraction of the particles in the disk"},
    {"bulge_fraction", 0.1, "fraction of the particles in the bulge (if bulge_mass > 0)"},
    {"mass_cut", 0.999, "halo and bulge radii below this fraction of their mass"},
};

std::vector<Key> disk_nfw_keys() {
  std::vector<Key> k = kGalaxyKeys;
  k.insert(k.begin() + 2, {"halo_r_cut", 10.0, "NFW halo exponential cutoff radius"});
  return k;
}

std::vector<Key> merger_keys() {
  std::vector<Key> k = kGalaxyKeys;
  k.push_back({"mass_ratio", 1.0, "secondary / primary mass (0 < q <= 1)"});
  k.push_back({"eccentricity", 1.0, "orbit eccentricity (1: parabolic)"});
  k.push_back({"r_peri", 0.4, "pericentre of the point-mass orbit (sets the angular momentum)"});
  k.push_back({"r_start", 4.0, "initial separation"});
  k.push_back({"incl1", 0.0, "primary disk inclination (degrees, about x)"});
  k.push_back({"omega1", 0.0, "primary disk argument (degrees, about z)"});
  k.push_back({"incl2", 60.0, "secondary disk inclination (degrees)"});
  k.push_back({"omega2", 30.0, "secondary disk argument (degrees)"});
  k.push_back({"model2", 0.0,
               "secondary model: copy (the primary scaled by mass_ratio) or a model name (disk, "
               "disk-nfw, hernquist, nfw, jaffe, plummer, ...) whose keys are given as g2.KEY; "
               "rescaled to mass_ratio times the primary's mass at fixed lengths",
               kCopy});
  return k;
}

const std::vector<ModelSpec>& specs() {
  static const std::vector<ModelSpec> s = {
      {"plummer", "Plummer sphere, Henon units (Aarseth, Henon & Wielen 1974)", {}},
      {"uniform", "cold uniform sphere (cold collapse)", {{"radius", 1.0, "sphere radius"}}},
      {"kepler", "two-body Kepler orbit, a = 1, masses 1/2", {{"e", 0.5, "eccentricity"}}},
      {"hernquist",
       "isotropic Hernquist sphere from its analytic DF, M = G = 1",
       {{"a", 1.0 / 3.0, "scale radius (1/3: Henon units, E = -1/4)"},
        {"mass_cut", 0.999, "radii below this fraction of the mass"}}},
      {"eddington-hernquist",
       "Hernquist sphere by numerical Eddington inversion, M = G = 1",
       {{"a", 0.0, "scale radius (0: Henon units, E = -1/4)"},
        {"mass_cut", 0.999, "radii below this fraction of the mass"}}},
      {"eddington-plummer",
       "Plummer sphere by numerical Eddington inversion, M = G = 1",
       {{"a", 0.0, "scale radius (0: Henon units, E = -1/4)"},
        {"mass_cut", 0.999, "radii below this fraction of the mass"}}},
      {"jaffe",
       "isotropic Jaffe (1983) sphere by Eddington inversion, M = G = 1",
       {{"a", 0.0, "scale radius (0: Henon units, E = -1/4)"},
        {"mass_cut", 0.999, "radii below this fraction of the mass"}}},
      {"nfw",
       "isotropic NFW sphere with exponential cutoff exp(-r/r_cut), Eddington, M = G = 1",
       {{"a", 0.0, "scale radius r_s (0: Henon units, E = -1/4)"},
        {"r_cut", 10.0, "cutoff radius in units of a"},
        {"mass_cut", 0.999, "radii below this fraction of the mass"}}},
      {"disk", "exponential disk in a Hernquist halo (+ optional bulge), G = 1", kGalaxyKeys},
      {"disk-nfw", "exponential disk in an NFW halo (+ optional bulge), G = 1", disk_nfw_keys()},
      {"merger",
       "a disk galaxy (Hernquist halo) and a second galaxy (model2) on a Kepler orbit (its energy "
       "corrected for their overlap), G = 1",
       merger_keys()},
  };
  return s;
}

const ModelSpec& find_spec(const std::string& name) {
  for (const auto& s : specs())
    if (name == s.name) return s;
  std::string valid;
  for (const auto& s : specs()) {
    if (!valid.empty()) valid += "|";
    valid += s.name;
  }
  throw std::invalid_argument("unknown model '" + name + "' (expected " + valid + ")");
}

bool is_text_key(const std::string& key) {
  for (const auto& s : specs())
    for (const auto& k : s.keys)
      if (k.text && key == k.name) return true;
  return false;
}

bool is_secondary_key(const ModelSpec& spec, const std::string& key) {
  return std::string(spec.name) == "merger" && key.rfind(kG2, 0) == 0;
}

struct Resolved {
  std::map<std::string, double> num;
  std::map<std::string, std::string> text;
  std::string model2 = kCopy;  // merger only
  ModelParams g2;              // merger only: the secondary's keys without the prefix
};

// Defaults overlaid with the given values; unknown keys throw naming prefix + key (prefix "g2."
// for the merger's secondary).
Resolved resolve(const ModelSpec& spec, const ModelParams& given, const std::string& prefix = "") {
  Resolved r;
  for (const auto& k : spec.keys) {
    if (k.text)
      r.text[k.name] = k.text;
    else
      r.num[k.name] = k.value;
  }
  for (const auto& [key, value] : given) {
    if (is_secondary_key(spec, key)) {
      r.g2[key.substr(std::string(kG2).size())] = value;
      continue;
    }
    const bool text = r.text.count(key) > 0;
    if (!text && !r.num.count(key)) {
      std::string valid, owners;  // owners: the models that do take the key
      for (const auto& k : spec.keys) {
        if (!valid.empty()) valid += ", ";
        valid += prefix + k.name;
      }
      for (const auto& other : specs())
        for (const auto& k : other.keys)
          if (key == k.name) owners += (owners.empty() ? "" : ", ") + std::string(other.name);
      throw std::invalid_argument("unknown parameter '" + prefix + key + "' for model " +
                                  spec.name + (prefix.empty() ? "" : " (model2)") + " (" +
                                  (owners.empty() ? "" : "a key of " + owners + "; ") +
                                  "valid: " + (valid.empty() ? "none" : valid) + ")");
    }
    const auto* d = std::get_if<double>(&value);
    if (text != (d == nullptr))
      throw std::invalid_argument("invalid value '" + to_string(value) + "' for model parameter " +
                                  prefix + key + " (expected " + (text ? "a name" : "a number") +
                                  ")");
    if (d && !std::isfinite(*d))
      throw std::invalid_argument("invalid value for model parameter " + prefix + key);
    // Beyond 1e+-30 the models' double arithmetic over- or underflows (densities ~ M / a^3,
    // exponentials of R / R_d): NaN output, endless rejection loops or silently cold models
    // were the result. Rescale the units instead.
    if (d && *d != 0 && !(std::abs(*d) >= 1e-30 && std::abs(*d) <= 1e30))
      throw std::invalid_argument("invalid model parameter " + prefix + key + ": value " +
                                  to_string(value) +
                                  " (magnitudes from 1e-30 to 1e30; rescale the units instead)");
    // Below a millionth of the mass the analytic Hernquist DF's velocity rejection stalls
    // (1e-30 ran for minutes); no use needs it. Above 1 it is no fraction (the sampler's own
    // check refused it without naming the model).
    if (d && key == "mass_cut" && !(*d >= 1e-6 && *d <= 1))
      throw std::invalid_argument("invalid model parameter " + prefix + key + ": value " +
                                  to_string(value) + " (need 1e-6 <= mass_cut <= 1)");
    if (text)
      r.text[key] = std::get<std::string>(value);
    else
      r.num[key] = *d;
  }
  if (std::string(spec.name) != "merger") return r;
  r.model2 = r.text["model2"];
  if (r.model2 != kCopy) {
    std::string valid = kCopy;
    bool known = false;
    for (const auto& s : specs()) {
      const std::string n = s.name;
      if (n == "merger" || n == "kepler") continue;  // not a galaxy
      valid += "|" + n;
      known |= n == r.model2;
    }
    if (!known)
      throw std::invalid_argument("invalid model parameter model2: value '" + r.model2 +
                                  "' (expected " + valid + ")");
  } else if (!r.g2.empty()) {
    throw std::invalid_argument("model parameter " + std::string(kG2) + r.g2.begin()->first +
                                " needs model2=NAME (the secondary is a copy of the primary)");
  }
  return r;
}

DiskGalaxyParams galaxy_params(std::map<std::string, double>& v, const std::string& halo) {
  DiskGalaxyParams g;
  g.halo = halo;
  g.halo_mass = v["halo_mass"];
  g.halo_a = v["halo_a"];
  if (halo == "nfw") g.halo_r_cut = v["halo_r_cut"];  // a key of disk-nfw only
  g.disk_mass = v["disk_mass"];
  g.disk_Rd = v["disk_Rd"];
  g.disk_z0 = v["disk_z0"];
  g.disk_Q = v["disk_Q"];
  g.disk_RQ = v["disk_RQ"];
  g.disk_Rmax = v["disk_Rmax"];
  g.bulge_mass = v["bulge_mass"];
  g.bulge_a = v["bulge_a"];
  g.disk_fraction = v["disk_fraction"];
  // Checked before it is dropped (no bulge), so that a bad value is not silently ignored.
  if (!(v["bulge_fraction"] >= 0 && v["bulge_fraction"] < 1))
    throw std::invalid_argument("invalid bulge_fraction " + to_string(v["bulge_fraction"]) +
                                " (need 0 <= bulge_fraction < 1)");
  g.bulge_fraction = g.bulge_mass > 0 ? v["bulge_fraction"] : 0.0;
  g.mass_cut = v["mass_cut"];
  return g;
}

}  // namespace

void parse_model_params(const std::string& text, ModelParams& params) {
  // As the other list options: no empty items (a stray comma), no key twice in one list (the
  // last silently won), numbers as number() reads them (stod also took hex: a=0x10).
  if (text.empty() || text.front() == ',' || text.back() == ',' ||
      text.find(",,") != std::string::npos)
    throw std::invalid_argument("invalid model parameters '" + text +
                                "' (an empty item: expected key=value[,key=value...])");
  std::set<std::string> seen;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("invalid model parameter '" + item + "' (expected key=value)");
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    if (!seen.insert(key).second)
      throw std::invalid_argument("key " + key +
                                  " given twice (the last would silently win; give it once)");
    if (is_text_key(key)) {
      if (val.empty())
        throw std::invalid_argument("invalid model parameter " + key + ": empty value");
      params[key] = val;
      continue;
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(number_start(val), val.data() + val.size(), v);
    if (val.empty() || ec != std::errc() || end != val.data() + val.size() || !std::isfinite(v))
      throw std::invalid_argument("invalid model parameter " + key + ": value '" + val +
                                  "' (expected a number)");
    params[key] = v;
  }
}

std::string to_string(const ModelValue& v) {
  if (const auto* t = std::get_if<std::string>(&v)) return *t;
  return number_text(std::get<double>(v));
}

namespace {
// Runs f; an std::invalid_argument from it names the model unless it already does: a value the
// model refuses ("invalid disk_z0 0.2 (must be <= disk_Rd)") did not; unknown names and keys
// already do.
template <class F>
auto naming_model(const std::string& name, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    if (msg.find("for model ") != std::string::npos || msg.rfind("model ", 0) == 0 ||
        msg.rfind("merger primary", 0) == 0 || msg.rfind("merger secondary", 0) == 0 ||
        msg.rfind("invalid -n", 0) == 0)
      throw;
    throw std::invalid_argument("model " + name + ": " + msg);
  }
}

std::vector<std::pair<std::string, ModelValue>> effective_params(const std::string& name,
                                                                 const ModelParams& params) {
  const ModelSpec& spec = find_spec(name);
  const Resolved r = resolve(spec, params);
  std::vector<std::pair<std::string, ModelValue>> out;
  for (const auto& k : spec.keys)
    out.emplace_back(k.name, k.text ? ModelValue(r.text.at(k.name)) : ModelValue(r.num.at(k.name)));
  if (r.model2 != kCopy) {
    const ModelSpec& spec2 = find_spec(r.model2);
    const Resolved r2 = resolve(spec2, r.g2, kG2);
    for (const auto& k : spec2.keys)
      out.emplace_back(kG2 + std::string(k.name),
                       k.text ? ModelValue(r2.text.at(k.name)) : ModelValue(r2.num.at(k.name)));
  }
  return out;
}
}  // namespace

std::vector<std::pair<std::string, ModelValue>> effective_model_params(const std::string& name,
                                                                       const ModelParams& params) {
  // hoshi run resolves them first (for /Parameters): its errors named no model.
  return naming_model(name, [&] { return effective_params(name, params); });
}

std::vector<std::string> model_names() {
  std::vector<std::string> n;
  for (const auto& s : specs()) n.emplace_back(s.name);
  return n;
}

std::string model_help(const std::string& name) {
  const ModelSpec& s = find_spec(name);
  std::ostringstream o;
  o << s.name << ": " << s.summary << "\n";
  for (const auto& k : s.keys) {
    o << "  " << k.name << " (";
    if (k.text)
      o << k.text;
    else
      o << k.value;
    o << "): " << k.meaning << "\n";
  }
  return o.str();
}

namespace {

ParticleSet build_model(const std::string& name, std::size_t n, std::uint64_t seed,
                        const ModelParams& params,
                        const std::function<void(const std::string&)>& warn) {
  const ModelSpec& spec = find_spec(name);
  Resolved r = resolve(spec, params);
  auto& v = r.num;
  if (n < 1) throw std::invalid_argument("invalid -n 0 (need at least 1 particle)");
  if (name == "plummer") return make_plummer(n, seed);
  if (name == "uniform") return make_uniform_sphere(n, seed, v["radius"]);
  if (name == "kepler") return make_kepler(v["e"]);
  if (name == "hernquist") return make_hernquist(n, seed, v["a"], v["mass_cut"]);
  if (name == "eddington-hernquist" || name == "eddington-plummer")
    return make_eddington_model(name.substr(10), n, seed, v["a"], 0.0, v["mass_cut"]);
  if (name == "jaffe") return make_eddington_model("jaffe", n, seed, v["a"], 0.0, v["mass_cut"]);
  if (name == "nfw") return make_eddington_model("nfw", n, seed, v["a"], v["r_cut"], v["mass_cut"]);
  if (name == "disk") return make_disk_galaxy(n, seed, galaxy_params(v, "hernquist"));
  if (name == "disk-nfw") return make_disk_galaxy(n, seed, galaxy_params(v, "nfw"));
  // merger
  MergerParams m;
  m.galaxy = galaxy_params(v, "hernquist");
  m.mass_ratio = v["mass_ratio"];
  m.eccentricity = v["eccentricity"];
  m.r_peri = v["r_peri"];
  m.r_start = v["r_start"];
  m.incl1 = v["incl1"];
  m.omega1 = v["omega1"];
  m.incl2 = v["incl2"];
  m.omega2 = v["omega2"];
  m.warn = warn;
  if (r.model2 != kCopy) {
    resolve(find_spec(r.model2), r.g2, kG2);  // checks the g2 keys before any sampling
    m.secondary = [model2 = r.model2, g2 = r.g2](std::size_t n2, std::uint64_t seed2) {
      return make_model(model2, n2, seed2, g2);
    };
  }
  return make_merger(n, seed, m);
}

}  // namespace

ParticleSet make_model(const std::string& name, std::size_t n, std::uint64_t seed,
                       const ModelParams& params,
                       const std::function<void(const std::string&)>& warn) {
  return naming_model(name, [&] { return build_model(name, n, seed, params, warn); });
}

}  // namespace hoshi
