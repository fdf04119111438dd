// Options' tuned fields from hgca-tune's JSON (load_options_json) and from HGCA_CONFIG.
#include "options_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "cpu/pool.hpp"
#include "cpu/sparse_engine.hpp"
#include "runtime_backends.hpp"
#include "status_error.hpp"

namespace hgca {
namespace {

using nlohmann::json;

constexpr const char* kIsaNames[] = {"auto", "portable", "avx2", "avx512", "avx512bf16"};
constexpr const char* kPlacementNames[] = {"auto", "balanced", "gpu_local"};
constexpr const char* kOverflowNames[] = {"auto", "off", "always"};
constexpr const char* kHandoffNames[] = {"auto", "poll", "callback"};
constexpr const char* kStoreWritesNames[] = {"auto", "cached", "streamed"};
/// The overflow policy's rates: the JSON key of each and its field.
constexpr std::pair<const char*, double Options::*> kOverflowRates[] = {
    {"overflow_cpu_gbps", &Options::overflow_cpu_gbps},         {"overflow_cpu_row_gbps", &Options::overflow_cpu_row_gbps},
    {"overflow_h2d_gbps", &Options::overflow_h2d_gbps},         {"overflow_gpu_gbps", &Options::overflow_gpu_gbps},
    {"overflow_gpu_row_gbps", &Options::overflow_gpu_row_gbps}, {"overflow_window_gbps", &Options::overflow_window_gbps}};

/// Nesting past this is refused while parsing: printing or copying a value recurses once per level
/// (a file nested 200000 deep ended the process on its stack).
constexpr int kMaxDepth = 64;

/// A value as a message shows it: its JSON, cut after 80 characters.
std::string shown(const json& j) {
  std::string text = j.dump(-1, ' ', true);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

/// Reads an integer field in [lo, hi]; `what` says what the value means.
Status read_int(const std::string& where, const json& j, const char* key, int64_t lo, int64_t hi,
                const char* what, int32_t* out) {
  if (!j.is_number_integer()) {
    return error(StatusCode::kInvalidArgument, "{}: {} = {}, expected an integer {}", where, key, shown(j), what);
  }
  // An unsigned value past int64 would wrap: compare as the file wrote it.
  const bool above = j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(hi);
  const auto v = j.get<int64_t>();
  if (above || v < lo || v > hi) {
    return error(StatusCode::kInvalidArgument, "{}: {} = {}, expected an integer {}, at most {}", where, key, shown(j),
                 what, hi);
  }
  *out = static_cast<int32_t>(v);
  return Status::ok();
}

/// Reads a finite number in [lo, hi) (hi = inf: no upper bound); `what` says what it means.
Status read_number(const std::string& where, const json& j, const char* key, double lo, double hi, const char* what,
                   double* out) {
  const double v = j.is_number() ? j.get<double>() : std::nan("");
  if (!(v >= lo && v < hi)) {
    return error(StatusCode::kInvalidArgument, "{}: {} = {}, expected a number {}", where, key, shown(j), what);
  }
  *out = v;
  return Status::ok();
}

template <typename Enum, std::size_t N>
Status read_enum(const std::string& where, const json& j, const char* key, const char* const (&names)[N],
                 Enum* out) {
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    for (std::size_t i = 0; i < N; ++i) {
      if (s == names[i]) {
        *out = static_cast<Enum>(i);
        return Status::ok();
      }
    }
  }
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) expected += fmt::format("{}\"{}\"", i ? ", " : "", names[i]);
  return error(StatusCode::kInvalidArgument, "{}: {} = {}, expected one of {}", where, key, shown(j), expected);
}

/// Warns (on stderr, once) when `tuned_on` says the file was measured on a machine with other
/// NUMA nodes, cores or ISA path than this one: its threads, packing and rates (overflow_cpu_gbps)
/// were chosen there, and nothing else would say so. Fields it lacks or of other types are no news.
void warn_if_tuned_elsewhere(const std::string& where, const json& tuned_on) {
  Machine here;
  if (!tuned_on.is_object() || !Machine::current(&here)) return;
  const json none;
  const auto said = [&](const char* key) -> const json& {
    const auto it = tuned_on.find(key);
    return it != tuned_on.end() ? *it : none;
  };
  const json &nodes = said("nodes"), &cores = said("cores"), &isa = said("isa_auto_is");
  const int here_nodes = here.topology->node_count(), here_cores = here.topology->total_cores();
  const std::string here_isa = cpu::to_string(cpu::best_isa());
  const bool other = (nodes.is_number_integer() && nodes.get<int64_t>() != here_nodes) ||
                     (cores.is_number_integer() && cores.get<int64_t>() != here_cores) ||
                     (isa.is_string() && isa.get<std::string>() != here_isa);
  if (!other) return;
  const auto text = [](const json& j) {
    return j.is_null() ? std::string("?") : j.is_string() ? j.get<std::string>() : shown(j);
  };
  cpu::warn_once(fmt::format("hgca: {} was tuned on another machine ({} NUMA nodes, {} cores, ISA path {}; this one: "
                             "{}, {}, {}): its threads, packing and measured rates may not fit here; run hgca-tune "
                             "on this machine",
                             where, text(nodes), text(cores), text(isa), here_nodes, here_cores, here_isa));
}

Status load(const std::string& path, const std::string& where, Options* inout) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    return error(StatusCode::kInvalidArgument, "{}: is a directory, expected a JSON file", where);
  }
  std::ifstream in(path);
  if (!in) return error(StatusCode::kNotFound, "{}: cannot open the file: {}", where, std::strerror(errno));
  json doc;
  std::string repeated;  // a top-level key given twice (the parser would keep the last silently)
  std::vector<std::string> keys;
  struct TooDeep {};
  auto note_key = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxDepth) throw TooDeep{};
    if (depth == 1 && event == json::parse_event_t::key && repeated.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) repeated = key;
      keys.push_back(key);
    }
    return true;
  };
  try {
    doc = json::parse(in, note_key);
  } catch (const TooDeep&) {
    return error(StatusCode::kInvalidArgument, "{}: values nested more than {} deep, expected a flat object of options",
                 where, kMaxDepth);
  } catch (const json::exception& e) {
    return error(StatusCode::kInvalidArgument, "{}: not valid JSON ({})", where, e.what());
  } catch (const std::exception& e) {  // the stream failed
    return error(StatusCode::kInvalidArgument, "{}: cannot read the file ({})", where, e.what());
  }
  if (!doc.is_object()) {
    return error(StatusCode::kInvalidArgument, "{}: the document is {}, expected an object of options", where,
                 doc.type_name());
  }
  if (doc.contains("best_config")) {  // the tool's report, whose keys would be refused one by one
    return error(StatusCode::kInvalidArgument, "{}: this is hgca-tune's --json report, expected a configuration: "
                 "the file hgca-tune's --out writes, or the report's \"best_config\" saved alone", where);
  }
  if (!repeated.empty()) {
    return error(StatusCode::kInvalidArgument, "{}: key \"{}\" is given twice, expected each key once", where, repeated);
  }
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  Options o = *inout;  // all or nothing
  for (const auto& [key, value] : doc.items()) {
    Status s;
    if (key == "threads") {
      s = read_int(where, value, "threads", 0, kMax, "≥ 0 (0: every core)", &o.threads);
    } else if (key == "threads_per_node") {
      s = read_int(where, value, "threads_per_node", 0, kMax, "≥ 0 (0: every core of each node)", &o.threads_per_node);
    } else if (key == "kv_split_tokens") {
      s = read_int(where, value, "kv_split_tokens", 0, kMax, "≥ 0 (0: the engine decides)", &o.kv_split_tokens);
    } else if (key == "max_packed_heads") {
      s = read_int(where, value, "max_packed_heads", 0, kMax, "≥ 0 (0: as many as fit in kv_split_tokens)",
                   &o.max_packed_heads);
    } else if (key == "heads_per_task") {
      // Earlier hgca-tune versions wrote the engine's packing under this name; loading it as the
      // method's padding would change what is attended.
      s = error(StatusCode::kInvalidArgument,
                "{}: heads_per_task = {} is not a tuned field (it is HGCA §3.3's padding of merged heads, "
                "set in code); the CPU engine's packing is \"max_packed_heads\" (rename the key)",
                where, shown(value));
    } else if (key == "isa") {
      s = read_enum(where, value, "isa", kIsaNames, &o.isa);
    } else if (key == "numa_placement") {
      s = read_enum(where, value, "numa_placement", kPlacementNames, &o.numa_placement);
    } else if (key == "overflow") {
      s = read_enum(where, value, "overflow", kOverflowNames, &o.overflow);
    } else if (key == "overflow_margin") {
      s = read_number(where, value, "overflow_margin", 0.0, 1.0, "in [0, 1)", &o.overflow_margin);
    } else if (const auto* rate = std::find_if(std::begin(kOverflowRates), std::end(kOverflowRates),
                                               [&](const auto& r) { return key == r.first; });
               rate != std::end(kOverflowRates)) {
      // As check_overflow_options: 0 (the default) or a rate the cost model can price with.
      double v = 0.0;
      s = read_number(where, value, rate->first, 0.0, std::numeric_limits<double>::infinity(),
                      "0 (the default) or ≥ 0.001 in GB/s", &v);
      if (s && v != 0.0 && v < 1e-3) {
        s = error(StatusCode::kInvalidArgument, "{}: {} = {}, expected a number 0 (the default) or ≥ 0.001 in GB/s",
                  where, rate->first, shown(value));
      }
      if (s) o.*rate->second = v;
    } else if (key == "tuned_on") {
      if (!value.is_object()) {
        s = error(StatusCode::kInvalidArgument, "{}: tuned_on = {}, expected an object (informational)", where,
                  shown(value));
      }
    } else {
      s = error(StatusCode::kInvalidArgument,
                "{}: unknown key \"{}\", expected one of threads, threads_per_node, kv_split_tokens, "
                "max_packed_heads, isa, numa_placement, overflow, overflow_margin, overflow_*_gbps (cpu, cpu_row, h2d, "
                "gpu, gpu_row, window), tuned_on",
                where, key);
    }
    if (!s) return s;
  }
  *inout = o;
  if (const auto t = doc.find("tuned_on"); t != doc.end()) warn_if_tuned_elsewhere(where, *t);
  return Status::ok();
}

}  // namespace

const char* to_string(CpuIsa isa) {
  const auto i = static_cast<std::size_t>(isa);
  return i < std::size(kIsaNames) ? kIsaNames[i] : "unknown";
}

const char* to_string(NumaPlacement placement) {
  const auto i = static_cast<std::size_t>(placement);
  return i < std::size(kPlacementNames) ? kPlacementNames[i] : "unknown";
}

const char* to_string(OverflowMode mode) {
  const auto i = static_cast<std::size_t>(mode);
  return i < std::size(kOverflowNames) ? kOverflowNames[i] : "unknown";
}

const char* to_string(HostHandoff handoff) {
  const auto i = static_cast<std::size_t>(handoff);
  return i < std::size(kHandoffNames) ? kHandoffNames[i] : "unknown";
}

const char* to_string(StoreWrites writes) {
  const auto i = static_cast<std::size_t>(writes);
  return i < std::size(kStoreWritesNames) ? kStoreWritesNames[i] : "unknown";
}

Status load_options_json(const std::string& path, Options* inout) {
  if (!inout) return error(StatusCode::kInvalidArgument, "load_options_json: inout is null");
  return load(path, fmt::format("options file \"{}\"", path), inout);
}

Status apply_config_env(Options* inout) {
  const char* path = std::getenv("HGCA_CONFIG");
  if (!path || !*path) return Status::ok();
  return load(path, fmt::format("HGCA_CONFIG = \"{}\"", path), inout);
}

Status validate_tuning(const Options& o) {
  if (o.threads_per_node < 0) {
    return error(StatusCode::kInvalidArgument, "threads_per_node = {}, expected ≥ 0 (0: every core of each node)",
                 o.threads_per_node);
  }
  if (o.kv_split_tokens < 0) {
    return error(StatusCode::kInvalidArgument, "kv_split_tokens = {}, expected ≥ 0 (0: the engine decides)",
                 o.kv_split_tokens);
  }
  if (o.max_packed_heads < 0) {
    return error(StatusCode::kInvalidArgument,
                 "max_packed_heads = {}, expected ≥ 0 (0: as many as fit in kv_split_tokens)", o.max_packed_heads);
  }
  if (static_cast<uint32_t>(o.isa) >= std::size(kIsaNames)) {
    return error(StatusCode::kInvalidArgument, "isa = {}, expected auto (0), portable (1), avx2 (2), avx512 (3) or avx512bf16 (4)",
                 static_cast<int>(o.isa));
  }
  if (static_cast<uint32_t>(o.numa_placement) >= std::size(kPlacementNames)) {
    return error(StatusCode::kInvalidArgument,
                 "numa_placement = {}, expected auto (0), balanced (1) or gpu_local (2)",
                 static_cast<int>(o.numa_placement));
  }
  return Status::ok();
}

}  // namespace hgca
