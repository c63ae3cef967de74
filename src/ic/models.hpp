// Model registry: every initial condition by name, with parameters as key = value.
// Keys, defaults and units of each model: model_help() and docs/models.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/particle_set.hpp"

namespace hoshi {

// A model parameter value: a number, or a name for the text keys (merger: model2).
using ModelValue = std::variant<double, std::string>;

// Model parameters: key -> value. Unknown keys for a model throw std::invalid_argument.
// merger: model2=NAME makes the secondary the registry model NAME and g2.KEY=VALUE sets NAME's
// parameter KEY (docs/models.md).
using ModelParams = std::map<std::string, ModelValue>;

// Parses "key=value[,key=value...]" into `params` (later keys override earlier ones). Values
// are numbers, except for the text keys (model2). Throws std::invalid_argument naming the bad
// item.
void parse_model_params(const std::string& text, ModelParams& params);

// "0.5" (shortest text that reads back to the same double) or the name.
std::string to_string(const ModelValue& v);

// Names known to make_model: plummer, uniform, kepler, hernquist, eddington-hernquist,
// eddington-plummer, jaffe, nfw, disk, disk-nfw, merger.
std::vector<std::string> model_names();

// One line per key: "key (default): meaning", for `name`; throws for an unknown name.
std::string model_help(const std::string& name);

// Every parameter of model `name` as it is used: the defaults overlaid with `params`, in the
// registry's key order; for a merger with model2 set, then model2's keys as "g2.KEY". Throws
// std::invalid_argument for an unknown name, key or text value.
std::vector<std::pair<std::string, ModelValue>> effective_model_params(const std::string& name,
                                                                       const ModelParams& params);

// The model `name` with n particles and the given seed; keys not given take their defaults.
// Throws std::invalid_argument for an unknown name or key or an invalid value.
// `warn` (optional) is told, in one line each, what the model could not make as asked (merger:
// an orbit less bound than its eccentricity asks, MergerParams::warn).
ParticleSet make_model(const std::string& name, std::size_t n, std::uint64_t seed,
                       const ModelParams& params = {},
                       const std::function<void(const std::string&)>& warn = {});

}  // namespace hoshi
