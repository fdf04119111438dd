// Loading Options' tuned fields from hgca-tune's JSON, and the HGCA_CONFIG environment variable.
#pragma once

#include "hgca/hgca.hpp"

namespace hgca {

/// Checks the CPU-engine tuning fields of `o` (threads_per_node, kv_split_tokens, max_packed_heads,
/// isa, numa_placement); Runtime::create's validation calls it.
Status validate_tuning(const Options& o);

/// Applies the file named by HGCA_CONFIG to `*inout` (nothing when unset or empty).
Status apply_config_env(Options* inout);

}  // namespace hgca
