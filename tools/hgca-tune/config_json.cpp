// The configuration hgca-tune writes (see config_json.hpp).
#include "config_json.hpp"

namespace hgca::tune {

nlohmann::json tuned_options_json(const Options& o, const nlohmann::json& tuned_on) {
  nlohmann::json j;
  j["threads"] = o.threads;
  j["threads_per_node"] = o.threads_per_node;
  j["kv_split_tokens"] = o.kv_split_tokens;
  j["max_packed_heads"] = o.max_packed_heads;
  j["isa"] = to_string(o.isa);
  j["numa_placement"] = to_string(o.numa_placement);
  if (o.overflow_cpu_gbps > 0.0) j["overflow_cpu_gbps"] = o.overflow_cpu_gbps;
  j["tuned_on"] = tuned_on.is_object() ? tuned_on : nlohmann::json::object();
  return j;
}

}  // namespace hgca::tune
