// Model registry: every initial condition by name, with parameters as key = value.
// Keys, defaults and units of each model: model_help() and docs/models.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/particle_set.hpp"

namespace hoshi {

// Model parameters: key -> value. Unknown keys for a model throw std::invalid_argument.
using ModelParams = std::map<std::string, double>;

// Parses "key=value[,key=value...]" into `params` (later keys override earlier ones).
// Throws std::invalid_argument naming the bad item.
void parse_model_params(const std::string& text, ModelParams& params);

// Names known to make_model: plummer, uniform, kepler, hernquist, eddington-hernquist,
// eddington-plummer, jaffe, nfw, disk, disk-nfw, merger.
std::vector<std::string> model_names();

// One line per key: "key (default): meaning", for `name`; throws for an unknown name.
std::string model_help(const std::string& name);

// The model `name` with n particles and the given seed; keys not given take their defaults.
// Throws std::invalid_argument for an unknown name or key or an invalid value.
ParticleSet make_model(const std::string& name, std::size_t n, std::uint64_t seed,
                       const ModelParams& params = {});

}  // namespace hoshi
