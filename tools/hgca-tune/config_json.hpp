// The configuration hgca-tune writes (--out) and hgca::load_options_json reads.
#pragma once

#include <nlohmann/json.hpp>

#include "hgca/hgca.hpp"

namespace hgca::tune {

/// The tuned fields of `o` as the JSON object load_options_json reads, with `tuned_on` (an object
/// describing the machine, workload and measurement; informational) under "tuned_on". The CPU
/// engine's measured rate, overflow_cpu_gbps, is written when set (> 0), for the overflow policy.
nlohmann::json tuned_options_json(const Options& o, const nlohmann::json& tuned_on = nlohmann::json::object());

}  // namespace hgca::tune
