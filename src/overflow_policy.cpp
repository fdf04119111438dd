// The overflow policy's cost model: per-item costs on each side and the greedy choice of the items
// the GPU takes over.
#include "overflow_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "gpu/sparse_attention.hpp"  // kMaxSparseTilePairs (host-only declarations)

namespace hgca {
namespace {

// Slower rates are refused: their seconds per byte overflow (a 1e-310 GB/s rate priced an empty
// item at 0 · inf, and the plan was NaN).
constexpr double kMinGbps = 1e-3;

bool rate(double x) { return std::isfinite(x) && x >= kMinGbps; }

/// Seconds per byte of K+V for an item of `rows` query rows: at `gbps` while memory-bound, at
/// `row_gbps` per row once the rows make it compute-bound.
double roofline_seconds_per_byte(int32_t rows, double gbps, double row_gbps) {
  return std::max(1.0 / gbps, rows / row_gbps) * 1e-9;
}
double cpu_seconds_per_byte(int32_t rows, const OverflowRates& r) {
  return roofline_seconds_per_byte(rows, r.cpu_gbps, r.cpu_row_gbps);
}
double gpu_seconds_per_byte(int32_t rows, const OverflowRates& r) {
  const int64_t pairs = int64_t{rows} * r.group;
  const auto reads = static_cast<double>((pairs + gpu::kMaxSparseTilePairs - 1) / gpu::kMaxSparseTilePairs);
  return std::max(reads * 1e-9 / r.h2d_gbps, roofline_seconds_per_byte(rows, r.gpu_gbps, r.gpu_row_gbps));
}

}  // namespace

Status check_overflow_rates(const OverflowRates& r) {
  const std::pair<const char*, double> rates[] = {{"cpu_gbps", r.cpu_gbps},
                                                  {"cpu_row_gbps", r.cpu_row_gbps},
                                                  {"h2d_gbps", r.h2d_gbps},
                                                  {"gpu_gbps", r.gpu_gbps},
                                                  {"gpu_row_gbps", r.gpu_row_gbps},
                                                  {"window_gbps", r.window_gbps}};
  for (const auto& [name, value] : rates) {
    if (!rate(value)) {
      return {StatusCode::kInvalidArgument,
              fmt::format("overflow rates: {} = {}, expected a finite rate ≥ {} GB/s", name, value, kMinGbps)};
    }
  }
  if (r.group < 1) {
    return {StatusCode::kInvalidArgument, fmt::format("overflow rates: group = {}, expected G ≥ 1", r.group)};
  }
  const std::pair<const char*, double> fixed[] = {{"gpu_fixed_s", r.gpu_fixed_s}, {"cpu_fixed_s", r.cpu_fixed_s}};
  for (const auto& [name, value] : fixed) {
    if (!std::isfinite(value) || value < 0.0) {
      return {StatusCode::kInvalidArgument, fmt::format("overflow rates: {} = {}, expected finite seconds ≥ 0", name, value)};
    }
  }
  return Status::ok();
}

OverflowRates overflow_rates(const Options& o) {
  OverflowRates r;
  const std::pair<double OverflowRates::*, double> given[] = {
      {&OverflowRates::cpu_gbps, o.overflow_cpu_gbps}, {&OverflowRates::cpu_row_gbps, o.overflow_cpu_row_gbps},
      {&OverflowRates::h2d_gbps, o.overflow_h2d_gbps}, {&OverflowRates::gpu_gbps, o.overflow_gpu_gbps},
      {&OverflowRates::gpu_row_gbps, o.overflow_gpu_row_gbps}, {&OverflowRates::window_gbps, o.overflow_window_gbps}};
  for (const auto& [field, value] : given) {
    if (value > 0.0) r.*field = value;
  }
  if (o.n_q_heads > 0 && o.n_kv_heads > 0 && o.n_q_heads % o.n_kv_heads == 0) {
    r.group = o.n_q_heads / o.n_kv_heads;
    const double scale = 4.0 / (o.n_q_heads / o.n_kv_heads) * static_cast<double>(dtype_size(o.dtype)) / 2.0;
    r.cpu_row_gbps = std::max(r.cpu_row_gbps * scale, kMinGbps);  // a large G must not scale them out of range
    r.gpu_row_gbps = std::max(r.gpu_row_gbps * scale, kMinGbps);
  }
  return r;
}

double overflow_window_seconds(std::span<const OverflowItem> seqs, const OverflowRates& rates, bool decode_path) {
  const bool decode =
      decode_path && std::all_of(seqs.begin(), seqs.end(), [](const OverflowItem& s) { return s.rows == 1; });
  double seconds = 0.0;
  for (const OverflowItem& s : seqs) {
    const double per_byte = decode ? 1e-9 / rates.window_gbps
                                   : roofline_seconds_per_byte(s.rows, rates.window_gbps, rates.gpu_row_gbps);
    seconds += static_cast<double>(s.kv_bytes) * per_byte;
  }
  return seconds;
}

Status check_overflow_options(const Options& o) {
  if (static_cast<uint32_t>(o.overflow) > static_cast<uint32_t>(OverflowMode::kAlways)) {
    return {StatusCode::kInvalidArgument,
            fmt::format("overflow = {}, expected auto (0), off (1) or always (2)", static_cast<int>(o.overflow))};
  }
  if (!(o.overflow_margin >= 0.0 && o.overflow_margin < 1.0)) {
    return {StatusCode::kInvalidArgument, fmt::format("overflow_margin = {}, expected a fraction in [0, 1)", o.overflow_margin)};
  }
  const std::pair<const char*, double> rates[] = {
      {"overflow_cpu_gbps", o.overflow_cpu_gbps}, {"overflow_cpu_row_gbps", o.overflow_cpu_row_gbps},
      {"overflow_h2d_gbps", o.overflow_h2d_gbps}, {"overflow_gpu_gbps", o.overflow_gpu_gbps},
      {"overflow_gpu_row_gbps", o.overflow_gpu_row_gbps}, {"overflow_window_gbps", o.overflow_window_gbps}};
  for (const auto& [name, value] : rates) {
    if (value != 0.0 && !rate(value)) {
      return {StatusCode::kInvalidArgument,
              fmt::format("{} = {}, expected 0 (the default) or a finite rate ≥ {} GB/s", name, value, kMinGbps)};
    }
  }
  return Status::ok();
}

double overflow_cpu_seconds(const OverflowItem& item, const OverflowRates& rates) {
  return static_cast<double>(item.kv_bytes) * cpu_seconds_per_byte(item.rows, rates);
}

double overflow_gpu_seconds(const OverflowItem& item, const OverflowRates& rates) {
  return static_cast<double>(item.kv_bytes) * gpu_seconds_per_byte(item.rows, rates);
}

namespace {

/// Checks plan_overflow's arguments (margin apart) and prices every item on each side.
Status price_items(std::span<const OverflowItem> items, double window_s, const OverflowRates& rates,
                   const OverflowPlan* out, std::vector<double>* cpu, std::vector<double>* gpu) {
  if (!std::isfinite(window_s) || window_s < 0.0) {
    return {StatusCode::kInvalidArgument, fmt::format("plan_overflow: window_s = {}, expected finite seconds ≥ 0", window_s)};
  }
  if (Status s = check_overflow_rates(rates); !s) return s;
  if (!out) return {StatusCode::kInvalidArgument, "plan_overflow: out is null"};
  cpu->resize(items.size());
  gpu->resize(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].kv_bytes < 0 || items[i].rows < 1) {
      return {StatusCode::kInvalidArgument,
              fmt::format("plan_overflow: items[{}]: kv_bytes = {}, rows = {}, expected kv_bytes ≥ 0 and rows ≥ 1", i,
                          items[i].kv_bytes, items[i].rows)};
    }
    (*cpu)[i] = overflow_cpu_seconds(items[i], rates);
    (*gpu)[i] = overflow_gpu_seconds(items[i], rates);
  }
  return Status::ok();
}

/// The plan that moves the items marked in `moved`, with its predictions (sums in index order).
OverflowPlan make_plan(std::span<const OverflowItem> items, const std::vector<char>& moved, const std::vector<double>& cpu,
                       const std::vector<double>& gpu, double window_s, const OverflowRates& rates) {
  OverflowPlan plan;
  plan.window_s = window_s;
  plan.gpu_s = window_s;
  bool cpu_any = false, any = false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    plan.cpu_alone_s += cpu[i];
    any = any || items[i].kv_bytes > 0;
    if (moved[i]) {
      plan.gpu_items.push_back(static_cast<int32_t>(i));
      plan.bytes_moved += items[i].kv_bytes;
      plan.rows_moved += items[i].rows;
      plan.gpu_s += gpu[i];
    } else {
      plan.cpu_s += cpu[i];
      cpu_any = cpu_any || items[i].kv_bytes > 0;
    }
  }
  if (!plan.gpu_items.empty()) plan.gpu_s += rates.gpu_fixed_s;
  if (cpu_any) plan.cpu_s += rates.cpu_fixed_s;
  if (any) plan.cpu_alone_s += rates.cpu_fixed_s;
  return plan;
}

}  // namespace

Status plan_overflow(std::span<const OverflowItem> items, double window_s, const OverflowRates& rates,
                     double margin, OverflowPlan* out) {
  if (!(margin >= 0.0 && margin < 1.0)) {
    return {StatusCode::kInvalidArgument, fmt::format("plan_overflow: margin = {}, expected a fraction in [0, 1)", margin)};
  }
  std::vector<double> cpu, gpu;
  if (Status s = price_items(items, window_s, rates, out, &cpu, &gpu); !s) return s;
  const std::size_t n = items.size();
  std::vector<double> saving(n);
  double cpu_alone = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    // CPU seconds saved per GPU second spent: a function of the rows alone, so that items of equal
    // rows tie exactly (and the larger goes first) whatever the rounding of their sizes.
    saving[i] = cpu_seconds_per_byte(items[i].rows, rates) / gpu_seconds_per_byte(items[i].rows, rates);
    cpu_alone += cpu[i];
  }

  // The fractional optimum moves items in order of saving; greedily, each item in that order moves when it shortens the critical path (an item
  // that overshoots is skipped and smaller ones may still fit). Empty items never move.
  std::vector<int32_t> order;
  for (std::size_t i = 0; i < n; ++i) {
    if (items[i].kv_bytes > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (saving[a] != saving[b]) return saving[a] > saving[b];
    if (cpu[a] != cpu[b]) return cpu[a] > cpu[b];
    return a < b;
  });
  std::vector<char> moved(n, 0);
  const double cpu_fixed = order.empty() ? 0.0 : rates.cpu_fixed_s;
  double cpu_left = cpu_alone, gpu_added = 0.0;
  double critical = std::max(cpu_fixed + cpu_alone, window_s);
  std::size_t left = order.size();  // non-empty items still on the CPU
  for (const int32_t i : order) {
    const double cpu_after = left > 1 ? cpu_fixed + cpu_left - cpu[i] : 0.0;
    const double with_i = std::max(cpu_after, window_s + rates.gpu_fixed_s + gpu_added + gpu[i]);
    if (with_i < critical) {
      moved[i] = 1;
      cpu_left -= cpu[i];
      gpu_added += gpu[i];
      critical = with_i;
      --left;
    }
  }

  // Compared as reported (sums in index order, not the running ones).
  OverflowPlan plan = make_plan(items, moved, cpu, gpu, window_s, rates);
  std::vector<char> all(n, 0);
  for (const int32_t i : order) all[static_cast<std::size_t>(i)] = 1;
  if (OverflowPlan every = make_plan(items, all, cpu, gpu, window_s, rates); every.critical_s() < plan.critical_s()) {
    plan = std::move(every);
  }
  if (plan.gpu_items.empty() || !(plan.critical_s() <= (1.0 - margin) * plan.critical_alone_s())) {
    plan = make_plan(items, std::vector<char>(n, 0), cpu, gpu, window_s, rates);
  }
  *out = std::move(plan);
  return Status::ok();
}

Status plan_overflow_all(std::span<const OverflowItem> items, double window_s, const OverflowRates& rates,
                         OverflowPlan* out) {
  std::vector<double> cpu, gpu;
  if (Status s = price_items(items, window_s, rates, out, &cpu, &gpu); !s) return s;
  std::vector<char> moved(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) moved[i] = items[i].kv_bytes > 0;
  *out = make_plan(items, moved, cpu, gpu, window_s, rates);
  return Status::ok();
}

}  // namespace hgca
