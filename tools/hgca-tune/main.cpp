// hgca-tune: reads the machine's topology, measures each NUMA node's DRAM read bandwidth with the
// engine's own pool, sweeps the CPU engine's parameters on a workload shaped like the user's model,
// and writes the best configuration as the JSON that hgca::load_options_json (and HGCA_CONFIG) reads.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth.hpp"
#include "common/cli.hpp"
#include "common/memory.hpp"
#include "common/output.hpp"
#include "common/progress.hpp"
#include "config_json.hpp"
#include "cpu/pool.hpp"
#include "hgca/hgca.hpp"
#include "plot.hpp"
#include "workload.hpp"

namespace {

using hgca::CpuIsa;
using hgca::NumaPlacement;
using hgca::tune::EngineConfig;
using nlohmann::json;

struct Cli {
  hgca::tune::WorkloadShape shape;
  std::string dtype = "bf16";
  bool quick = false;
  bool json = false;
  std::string out;
  std::string svg;
  std::vector<int> threads, max_packed_heads, kv_split;
  std::vector<std::string> placements;
  double working_set_mb = 0;
  int repeats = 0;
  std::string gpu_pci_bus_id, gpu_cpus;
};

struct Measured {
  EngineConfig config;
  double gbps = 0, median_ms = 0, dram_gbps = 0;
  double balance = 1;  ///< median over steps of the slowest worker's busy time / the mean
};

std::optional<NumaPlacement> parse_placement(const std::string& s) {
  for (auto p : {NumaPlacement::kAuto, NumaPlacement::kBalanced, NumaPlacement::kGpuLocal}) {
    if (s == hgca::to_string(p)) return p;
  }
  return std::nullopt;
}

[[noreturn]] void fail(const std::string& message);

/// The file `path` names, absolute: through its links, a dangling one's too (where writing it
/// makes the file).
std::filesystem::path file_named(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path to = fs::read_symlink(p, ec);
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  const fs::path resolved = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : resolved;  // a loop of links: as far as they went
}

/// Fails unless `path` can be written, by trying (permissions alone do not say: root passes every
/// access() check, and /proc refuses new files to root too): a file there is opened for appending,
/// so that it stays as it is until the sweep has run (O_NONBLOCK: a FIFO without a reader fails
/// rather than blocks); for a new one a probe file is made beside it and removed.
void check_writable(const char* flag, const std::string& path) {
  namespace fs = std::filesystem;
  // A path that does not resolve (a loop of links, a directory on the way that is none or cannot be
  // searched) is named; only a missing file (or a link to one) is made.
  if (struct stat st{}; ::stat(path.c_str(), &st) != 0 && errno != ENOENT) {
    fail(fmt::format("{} {}: {}", flag, path, std::strerror(errno)));
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail(fmt::format("{} {}: is a directory, expected a file to write", flag, path));
  if (fs::exists(path, ec)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK);
    if (fd < 0) fail(fmt::format("{} {}: cannot write the file ({})", flag, path, std::strerror(errno)));
    ::close(fd);
    return;
  }
  const fs::path dir = file_named(path).parent_path();
  std::string probe = (dir / ".hgca-tune-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) fail(fmt::format("{} {}: cannot write into {} ({})", flag, path, dir.string(), std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

/// Whether `path` is the file this process's stdout writes to (/dev/stdout, or the file it was
/// redirected to).
bool is_stdout(const std::string& path) {
  struct stat file{}, out{};
  return ::stat(path.c_str(), &file) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 && file.st_dev == out.st_dev &&
         file.st_ino == out.st_ino;
}

[[noreturn]] void fail(const std::string& message) {
  std::fflush(stdout);  // what was printed (a report whose files could not be written) comes first
  hgca::tools::eprint("hgca-tune: error: {}\n", message);
  std::exit(1);
}

/// Writes `text` to `path`. A regular file (or a new one) is written whole or not at all: into a
/// temporary file beside it, renamed over it, so that a failed write (a full disk) leaves what was
/// there. A file this process has open as stdout or stderr (/dev/stdout, or the file it was
/// redirected to) is written through that stream, after what was printed before, as the stream
/// writes (appending where it appends: a log it goes to keeps its lines). In place instead: anything
/// else (a FIFO), one with other hard links or another owner (a rename would part them from it), or
/// one whose directory takes no new file. Returns why it failed, or "".
std::string write_whole(const std::string& path, const std::string& text) {
  const auto in_place = [&]() -> std::string {
    std::ofstream f(path);
    f << text;
    return f.flush() ? "" : std::strerror(errno);
  };
  const auto through = [&](std::FILE* stream) -> std::string {
    std::fflush(stdout);  // what was printed comes first
    const bool ok = std::fwrite(text.data(), 1, text.size(), stream) == text.size() && std::fflush(stream) == 0;
    return ok ? "" : std::strerror(errno);
  };
  struct stat st{};
  const bool exists = ::stat(path.c_str(), &st) == 0;  // the kernel follows every link, /proc's too
  if (exists) {
    const auto open_as = [&](int fd) {
      struct stat o{};
      return ::fstat(fd, &o) == 0 && o.st_dev == st.st_dev && o.st_ino == st.st_ino;
    };
    if (open_as(STDOUT_FILENO)) return through(stdout);
    if (open_as(STDERR_FILENO)) return through(stderr);
    if (!S_ISREG(st.st_mode) || st.st_nlink > 1 || st.st_uid != ::geteuid()) return in_place();
  }
  const std::filesystem::path target = file_named(path);  // through links: the file they name is replaced
  std::string temp = target.string() + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return exists ? in_place() : std::strerror(errno);
  // The old file's mode, or the one a new file would get (mkstemp's is 0600).
  const mode_t umask_now = ::umask(0);
  ::umask(umask_now);
  ::fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~umask_now));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const int write_error = written == text.size() ? 0 : errno != 0 ? errno : EIO;
  if (::close(fd) != 0 || write_error != 0 || ::rename(temp.c_str(), target.c_str()) != 0) {
    const int e = write_error != 0 ? write_error : errno;
    ::unlink(temp.c_str());
    return std::strerror(e);
  }
  return "";
}

std::unique_ptr<hgca::cpu::Pool> make_pool(const std::shared_ptr<const hgca::cpu::Topology>& topo, int threads_per_node) {
  hgca::cpu::PoolOptions o;
  o.threads_per_node = threads_per_node;
  std::unique_ptr<hgca::cpu::Pool> pool;
  if (auto s = hgca::cpu::Pool::create(topo, o, &pool); !s) fail(s.message());
  return pool;
}

/// Times at least `steps` decode steps, and at least `min_seconds` of them, after a warm-up one,
/// each on the workload's next layer (measurements go on round the layers: starting each at layer
/// 0 read the same few layers every time, which stayed in cache where they fit, and the engine
/// seemed to outrun DRAM); returns GB/s over the selected K+V bytes and the median step. (A step
/// count alone made a point 6 ms long on 16 cores.)
Measured time_engine(hgca::tune::SparseWorkload& w, hgca::cpu::Pool& pool, const EngineConfig& c, int steps,
                     double min_seconds) {
  w.place(pool, c.placement);
  w.step(pool, w.next_layer(), c);  // warm-up: page tables, scratch
  std::vector<double> ms, balance;
  double bytes = 0, seconds = 0;
  for (int i = 0; i < steps || seconds < min_seconds; ++i) {
    const int layer = w.next_layer();
    const auto t0 = std::chrono::steady_clock::now();
    balance.push_back(w.step(pool, layer, c));
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ms.push_back(dt * 1e3);
    seconds += dt;
    bytes += static_cast<double>(w.step_bytes(layer));
  }
  std::sort(ms.begin(), ms.end());
  std::sort(balance.begin(), balance.end());
  Measured m;
  m.balance = balance[balance.size() / 2];
  m.config = c;
  m.gbps = bytes / seconds * 1e-9;
  m.median_ms = ms[ms.size() / 2];
  return m;
}

json config_json(const EngineConfig& c) {
  return {{"threads_per_node", c.threads_per_node}, {"max_packed_heads", c.max_packed_heads},
          {"kv_split_tokens", c.kv_split_tokens}, {"isa", hgca::to_string(c.isa)},
          {"numa_placement", hgca::to_string(c.placement)}};
}

/// Everything after the command line: errors end the program through fail().
int run(Cli& cli) {
  // Before the sweep, not after it.
  if (!cli.out.empty()) check_writable("--out", cli.out);
  if (!cli.svg.empty()) check_writable("--svg", cli.svg);
  cli.shape.dtype = hgca::tools::dtype_named(cli.dtype);  // checked by the command line's parser
  {
    // The workload holds at least two layers' selected K+V, and each sequence's queries and outputs.
    const double gib = hgca::tools::kGiB, ram = hgca::tools::usable_memory_gib();
    const double need = (2.0 * hgca::tune::SparseWorkload::layer_bytes_estimate(cli.shape) +
                         static_cast<double>(cli.shape.batch) * cli.shape.q_heads * cli.shape.head_dim * 12.0) / gib;
    if (need > ram) {
      fail(fmt::format("the workload (--batch {} x --kv-heads {} x --context {} x --selected-fraction {} of --head-dim "
                       "{}, --q-heads {}) takes {:.1f} GiB, more than the {:.1f} GiB of memory this process may use "
                       "(the machine's, or its cgroup's limit); lower them",
                       cli.shape.batch, cli.shape.kv_heads, cli.shape.context, cli.shape.selected_fraction,
                       cli.shape.head_dim, cli.shape.q_heads, need, ram));
    }
  }
  const bool progress = !cli.json || isatty(fileno(stderr)) != 0;

  // --- topology ---
  std::shared_ptr<const hgca::cpu::Topology> topo;
  if (auto s = hgca::cpu::Topology::from_machine(&topo); !s) fail(s.message());
  std::vector<int> gpu_nodes;
  std::string gpu_source = "none";
  if (!cli.gpu_pci_bus_id.empty()) {
    if (auto s = topo->nodes_near_pci(cli.gpu_pci_bus_id, &gpu_nodes); !s) fail("--gpu-pci-bus-id: " + s.message());
    gpu_source = "--gpu-pci-bus-id " + cli.gpu_pci_bus_id;
  } else if (!cli.gpu_cpus.empty()) {
    if (auto s = topo->nodes_near_cpus(cli.gpu_cpus, &gpu_nodes); !s) fail("--gpu-cpus: " + s.message());
    gpu_source = "--gpu-cpus " + cli.gpu_cpus;
  } else if (!topo->gpus().empty()) {
    gpu_nodes = topo->gpus()[0].local_nodes;
    gpu_source = "hwloc PCI " + topo->gpus()[0].pci_bus_id;
  }
  // A GPU local to every node prefers none.
  if (static_cast<int>(gpu_nodes.size()) == topo->node_count()) gpu_nodes.clear();

  // --- what to sweep ---
  int max_tpn = 1, max_hw = 1;
  for (const auto& n : topo->nodes()) {
    max_tpn = std::max(max_tpn, n.cores);
    max_hw = std::max(max_hw, n.hw_threads);
  }
  std::vector<int> threads = cli.threads;
  if (threads.empty()) {
    if (cli.quick) {
      threads = max_tpn > 1 ? std::vector<int>{1, max_tpn} : std::vector<int>{1};
    } else {
      for (int t = 1; t < max_tpn; t *= 2) threads.push_back(t);
      if (max_tpn >= 12 && max_tpn % 4 == 0) threads.push_back(max_tpn * 3 / 4);
      threads.push_back(max_tpn);
      if (max_hw > max_tpn) threads.push_back(max_hw);  // SMT siblings too
    }
  }
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  for (int t : threads) {
    // The pool would run no more threads than the node has: results labelled t would not be t's.
    if (t > max_hw) fail(fmt::format("--threads {}: expected 1 to {} (hardware threads of the largest node)", t, max_hw));
  }
  std::vector<int> packs = cli.max_packed_heads;
  if (packs.empty()) packs = cli.quick ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 2, 4, 8};
  std::vector<int> splits = cli.kv_split;
  if (splits.empty()) splits = cli.quick ? std::vector<int>{0, 2048} : std::vector<int>{0, 512, 2048, 8192};
  for (auto* list : {&packs, &splits}) {  // a value given twice would be measured and ranked twice
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  std::vector<NumaPlacement> placements;
  for (const auto& p : cli.placements) {
    const NumaPlacement parsed = *parse_placement(p);  // checked by the command line's parser
    if (std::find(placements.begin(), placements.end(), parsed) == placements.end()) placements.push_back(parsed);
  }
  if (placements.empty()) {
    placements = {NumaPlacement::kAuto};
    if (topo->node_count() > 1) placements.push_back(NumaPlacement::kBalanced);
    if (topo->node_count() > 1 && !gpu_nodes.empty()) placements.push_back(NumaPlacement::kGpuLocal);
  }
  const std::vector<CpuIsa> isas = hgca::tune::engine_isas(cli.shape.dtype);
  const int repeats = cli.repeats > 0 ? cli.repeats : (cli.quick ? 5 : 9);
  const double llc = static_cast<double>(topo->last_level_cache_bytes());
  const double ws_bytes = cli.working_set_mb > 0 ? cli.working_set_mb * (1 << 20)
                                                  : std::max((cli.quick ? 2.0 : 4.0) * llc, 1024.0 * (1 << 20));
  {
    // The DRAM buffers, then the workload's layers (one after the other), each about this size.
    const double ram = hgca::tools::usable_memory_gib(), need = ws_bytes / hgca::tools::kGiB;
    if (need > 0.9 * ram) {
      fail(fmt::format("{} takes {:.1f} GiB, more than 90 % of the {:.1f} GiB of memory this process may use; lower "
                       "{}", cli.working_set_mb > 0 ? fmt::format("--working-set-mb {}", cli.working_set_mb)
                                                    : std::string("the working set (4x the last-level cache, 2x quick)"),
                       need, ram, cli.working_set_mb > 0 ? "it" : "it with --working-set-mb"));
    }
  }
  if (cli.working_set_mb > 0 && ws_bytes < 2 * llc) {
    hgca::tools::eprint("hgca-tune: warning: --working-set-mb {} is less than twice the last-level cache ({:.0f} MiB): "
                        "the caches serve part of it, so the DRAM read and the engine measure them, not DRAM\n",
                        cli.working_set_mb, llc / (1 << 20));
  }
  if (gpu_nodes.empty() && std::find(placements.begin(), placements.end(), NumaPlacement::kGpuLocal) != placements.end()) {
    hgca::tools::eprint("hgca-tune: note: no node is nearer the GPU than another here ({}), so placement gpu_local "
                        "places as balanced\n", gpu_source == "none" ? "no GPU found" : gpu_source);
  }
  // Printed once every flag has been checked: a refused one leaves nothing half-printed.
  if (!cli.json) {
    fmt::print("{}", topo->describe());
    fmt::print("GPU-local node(s) for placement: {}\n",
               gpu_source == "none"  ? std::string("none (no GPU found)")
               : gpu_nodes.empty()   ? fmt::format("none ({}: no node is nearer than another)", gpu_source)
                                     : fmt::format("{} ({})", fmt::join(gpu_nodes, ", "), gpu_source));
  }

  const double layer_bytes = std::max(hgca::tune::SparseWorkload::layer_bytes_estimate(cli.shape), 1.0);
  const int layers = static_cast<int>(std::clamp<double>(std::ceil(ws_bytes / layer_bytes), 2, 4096));
  const int steps = std::max(repeats, std::min(layers, 2 * repeats));
  const double min_seconds = 0.05;  // per measurement
  // The task shapes, ISAs and placements in rounds, each visiting every configuration (in reverse
  // every other round), each configuration keeping its median visit: the machine's drift over the
  // sweep (seconds) then falls on every configuration alike, not on those measured late. (Measured
  // once each in a row, isa auto ranked up to 12 % from the ISA it resolves to on 16 cores.)
  constexpr int kRounds = 3;
  std::vector<EngineConfig> configs;
  for (NumaPlacement placement : placements) {
    for (CpuIsa isa : isas) {
      for (int pack : packs) {
        for (int split : splits) configs.push_back({0, pack, split, isa, placement});
      }
    }
  }

  hgca::tools::ProgressBar bar("hgca-tune", static_cast<int64_t>(1 + 2 * threads.size() + kRounds * configs.size()),
                               progress);
  int64_t done = 0;

  // --- DRAM read bandwidth, every thread count, with the engine's pool ---
  std::vector<hgca::tune::DramResult> dram;
  bool dram_bound = true;
  {
    const uint64_t per_node = static_cast<uint64_t>(ws_bytes / topo->node_count());
    hgca::tune::DramBuffers buffers(topo, per_node);
    dram_bound = buffers.bound();
    {
      auto pool = make_pool(topo, 0);
      buffers.fill(*pool);
    }
    bar.update(++done);
    for (int t : threads) {
      auto pool = make_pool(topo, t);
      dram.push_back(buffers.measure(*pool, repeats, 4 * min_seconds));
      bar.update(++done);
    }
  }

  // --- the engine: threads first (default task shape), then task shape and placement at the best threads ---
  hgca::tune::SparseWorkload workload(cli.shape, layers, gpu_nodes);
  std::vector<Measured> thread_sweep;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    auto pool = make_pool(topo, threads[i]);
    EngineConfig c;
    c.threads_per_node = threads[i];
    c.max_packed_heads = packs.front();
    c.kv_split_tokens = 0;
    c.placement = placements.front();
    Measured m = time_engine(workload, *pool, c, steps, min_seconds);
    m.dram_gbps = dram[i].gbps;
    thread_sweep.push_back(m);
    bar.update(++done);
  }
  const auto best_threads = std::max_element(thread_sweep.begin(), thread_sweep.end(),
                                             [](const auto& a, const auto& b) { return a.gbps < b.gbps; });
  const int tpn = best_threads->config.threads_per_node;
  const double dram_at_tpn = best_threads->dram_gbps;
  std::vector<Measured> results;
  {
    auto pool = make_pool(topo, tpn);
    std::vector<std::vector<Measured>> visits(configs.size());
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t k = 0; k < configs.size(); ++k) {
        const std::size_t i = round % 2 == 0 ? k : configs.size() - 1 - k;
        EngineConfig c = configs[i];
        c.threads_per_node = tpn;
        visits[i].push_back(time_engine(workload, *pool, c, steps, min_seconds));
        bar.update(++done);
      }
    }
    for (auto& v : visits) {
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.gbps < b.gbps; });
      results.push_back(v[v.size() / 2]);
      results.back().dram_gbps = dram_at_tpn;
    }
  }
  bar.finish();
  // The engine reads what the plain read does and more: faster by a margin, a measurement was
  // disturbed (another load on the machine) and the figures compared are not to be trusted.
  const Measured* fastest = nullptr;
  for (const auto* list : {&thread_sweep, &results}) {
    for (const Measured& m : *list) {
      if (!fastest || m.gbps / m.dram_gbps > fastest->gbps / fastest->dram_gbps) fastest = &m;
    }
  }
  if (fastest->gbps > 1.2 * fastest->dram_gbps) {
    hgca::tools::eprint("hgca-tune: warning: at {} threads per node the engine read {:.1f} GB/s, more than the DRAM read "
                        "measured at those threads ({:.1f} GB/s): a measurement was disturbed (another load on this machine?); "
                        "run again before trusting dram_read_gbps and engine_gbps\n", fastest->config.threads_per_node,
                        fastest->gbps, fastest->dram_gbps);
  }
  std::stable_sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.gbps > b.gbps; });
  // A configuration that names an ISA is refused on a CPU without it; isa auto runs on any. The
  // fastest auto one is written unless a named ISA beats it by more than the noise between runs'
  // medians (a named ISA once won by 0.3 %, and auto the next run).
  constexpr double kIsaMargin = 0.03;
  std::size_t best_index = 0;
  if (results.front().config.isa != CpuIsa::kAuto) {
    const auto fastest_auto = std::find_if(results.begin(), results.end(),
                                           [](const Measured& m) { return m.config.isa == CpuIsa::kAuto; });
    if (fastest_auto != results.end() && fastest_auto->gbps >= (1.0 - kIsaMargin) * results.front().gbps) {
      best_index = static_cast<std::size_t>(fastest_auto - results.begin());
    }
  }
  const Measured& best = results[best_index];

  // --- the configuration ---
  int active_nodes = 0;
  {
    auto pool = make_pool(topo, tpn);
    for (int n = 0; n < pool->node_count(); ++n) active_nodes += pool->threads(n) > 0 ? 1 : 0;
  }
  hgca::Options tuned;
  tuned.threads = tpn * active_nodes;
  tuned.threads_per_node = tpn;
  tuned.max_packed_heads = best.config.max_packed_heads;
  tuned.kv_split_tokens = best.config.kv_split_tokens;
  // The ISA that auto resolves to here is written as auto: the same path, in a file any CPU runs.
  tuned.isa = hgca::to_string(best.config.isa) == hgca::tune::engine_auto_isa() ? CpuIsa::kAuto : best.config.isa;
  tuned.numa_placement = best.config.placement;
  tuned.overflow_cpu_gbps = best.gbps;  // the overflow policy's CPU rate: this engine, measured here
  const hgca::tune::DramResult& dram_full = dram.back();
  json workload_json = {{"q_heads", cli.shape.q_heads},       {"kv_heads", cli.shape.kv_heads},
                        {"head_dim", cli.shape.head_dim},     {"dtype", hgca::to_string(cli.shape.dtype)},
                        {"context", cli.shape.context},       {"selected_fraction", cli.shape.selected_fraction},
                        {"batch", cli.shape.batch},           {"layers_rotated", layers},
                        {"working_set_bytes", workload.total_bytes()}};
  json tuned_on = {{"tool", "hgca-tune"},
                   {"nodes", topo->node_count()},
                   {"cores", topo->total_cores()},
                   {"engine", hgca::tune::engine_name()},
                   {"isa_auto_is", hgca::tune::engine_auto_isa()},
                   {"workload", workload_json},
                   {"dram_read_gbps", dram_full.gbps},
                   {"engine_gbps", best.gbps}};
  const json best_config = hgca::tune::tuned_options_json(tuned, tuned_on);
  // A file that cannot be written (the disk full since the check) fails the run after the report:
  // the sweep's results are printed, not lost.
  std::vector<std::string> write_failures;
  if (!cli.out.empty()) {
    if (const std::string e = write_whole(cli.out, best_config.dump(2) + "\n"); !e.empty()) {
      write_failures.push_back(fmt::format("--out {}: cannot write the file ({}); what was there is kept", cli.out, e));
    }
  }

  // --- the plot ---
  std::vector<std::pair<double, double>> dram_pts, engine_pts;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    dram_pts.emplace_back(threads[i], dram[i].gbps);
    engine_pts.emplace_back(threads[i], thread_sweep[i].gbps);
  }
  if (!cli.svg.empty()) {
    const std::string title = fmt::format("hgca-tune: {} node(s), {} cores; Hq {} Hkv {} D {} {}, |S| {:.0f} % of {}",
                                          topo->node_count(), topo->total_cores(), cli.shape.q_heads, cli.shape.kv_heads,
                                          cli.shape.head_dim, hgca::to_string(cli.shape.dtype),
                                          cli.shape.selected_fraction * 100, cli.shape.context);
    const std::string svg = hgca::tune::svg_line_plot(title, "threads per node", "GB/s",
                                                      {{"DRAM read (engine's pool)", "#1f77b4", dram_pts},
                                                       {"sparse attention, K+V selected", "#d62728", engine_pts}});
    if (const std::string e = write_whole(cli.svg, svg); !e.empty()) {
      write_failures.push_back(fmt::format("--svg {}: cannot write the file ({}); what was there is kept", cli.svg, e));
    }
  }

  // --- report ---
  if (cli.json) {
    json sweep = json::array(), ranked = json::array();
    for (std::size_t i = 0; i < threads.size(); ++i) {
      sweep.push_back({{"threads_per_node", threads[i]}, {"dram_read_gbps", dram[i].gbps},
                       {"dram_read_gbps_per_node", dram[i].node_gbps}, {"engine_gbps", thread_sweep[i].gbps},
                       {"engine_median_step_ms", thread_sweep[i].median_ms}});
    }
    for (const Measured& m : results) {
      json r = config_json(m.config);
      r["engine_gbps"] = m.gbps;
      r["median_step_ms"] = m.median_ms;
      r["fraction_of_dram"] = m.gbps / m.dram_gbps;
      r["slowest_worker_over_mean"] = m.balance;
      ranked.push_back(r);
    }
    json gpus = json::array();
    for (const auto& g : topo->gpus()) gpus.push_back({{"pci_bus_id", g.pci_bus_id}, {"os_names", g.os_names}, {"local_nodes", g.local_nodes}});
    json nodes = json::array();
    for (const auto& n : topo->nodes()) {
      nodes.push_back({{"index", n.index}, {"os_index", n.os_index}, {"cores", n.cores}, {"hw_threads", n.hw_threads},
                       {"cpus", n.cpus}, {"memory_bytes", n.memory_bytes}});
    }
    const json report = {
        // The machine's memory, and in `nodes` each node's as the OS reports it (far less in some
        // virtual machines: 4.8 of 126 GiB on the GPU machine).
        {"topology", {{"memory_bytes", static_cast<uint64_t>(hgca::tools::physical_memory_gib() * hgca::tools::kGiB)},
                      {"nodes", nodes}, {"gpus", gpus}, {"gpu_local_nodes", gpu_nodes},
                      {"last_level_cache_bytes", topo->last_level_cache_bytes()}, {"memory_bound_to_nodes", dram_bound}}},
        {"engine", hgca::tune::engine_name()},
        {"isa_auto_is", hgca::tune::engine_auto_isa()},
        {"workload", workload_json},
        {"steps_per_point", steps},  // at least, and at least min_seconds_per_point
        {"min_seconds_per_point", min_seconds},
        {"rounds", kRounds},  // of the ranked configurations, each reporting its median
        {"dram_read_gbps", dram_full.gbps},
        {"dram_read_gbps_per_node", dram_full.node_gbps},
        {"dram_read_threads_per_node", threads.back()},
        {"engine_gbps", best.gbps},
        {"best_rank", best_index + 1},
        {"engine_vs_dram_same_threads", best.gbps / best.dram_gbps},
        {"thread_sweep", sweep},
        {"ranked", ranked},
        {"best_config", best_config}};
    fmt::print("{}\n", report.dump(2));
    if (!write_failures.empty()) fail(fmt::format("{}", fmt::join(write_failures, "; ")));
    return 0;
  }

  fmt::print("\nengine: {} (isa auto = {})\nworkload: Hq {} Hkv {} D {} {}, context {}, selected {:.1f} % (mean), batch {}; "
             "{} layers rotated, {:.0f} MiB of K+V; at least {} steps and {:.2f} s per point, the ranked the median of {}\n",
             hgca::tune::engine_name(), hgca::tune::engine_auto_isa(), cli.shape.q_heads, cli.shape.kv_heads, cli.shape.head_dim,
             hgca::to_string(cli.shape.dtype), cli.shape.context, cli.shape.selected_fraction * 100, cli.shape.batch,
             layers, static_cast<double>(workload.total_bytes()) / (1 << 20), steps, min_seconds, kRounds);
  fmt::print("\nDRAM read and engine bandwidth against threads per node{}:\n", dram_bound ? "" : " (memory NOT bound to nodes)");
  fmt::print("{:>8} {:>14} {:>14} {:>9}\n", "threads", "DRAM read GB/s", "engine GB/s", "of DRAM");
  for (std::size_t i = 0; i < threads.size(); ++i) {
    fmt::print("{:>8} {:>14.1f} {:>14.2f} {:>8.0f}%\n", threads[i], dram[i].gbps, thread_sweep[i].gbps,
               100 * thread_sweep[i].gbps / dram[i].gbps);
  }
  if (topo->node_count() > 1) {
    fmt::print("DRAM read per node at {} threads: {:.1f} GB/s\n", threads.back(), fmt::join(dram_full.node_gbps, ", "));
  }
  fmt::print("\nRanked at {} threads per node (DRAM read {:.1f} GB/s):\n", tpn, dram_at_tpn);
  fmt::print("{:>4} {:>11} {:>8} {:>12} {:>10} {:>8} {:>9} {:>8} {:>8}\n", "rank", "max packed", "kv split", "isa",
             "placement", "GB/s", "ms/step", "of DRAM", "max/mean");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Measured& m = results[i];
    fmt::print("{:>4} {:>11} {:>8} {:>12} {:>10} {:>8.2f} {:>9.3f} {:>7.0f}% {:>8.2f}\n", i + 1,
               m.config.max_packed_heads == 0 ? std::string("fit") : std::to_string(m.config.max_packed_heads),
               m.config.kv_split_tokens == 0 ? std::string("auto") : std::to_string(m.config.kv_split_tokens),
               hgca::to_string(m.config.isa), hgca::to_string(m.config.placement), m.gbps, m.median_ms,
               100 * m.gbps / m.dram_gbps, m.balance);
  }
  fmt::print("\nbest: {}\n", best_config.dump());
  if (best_index > 0) {
    fmt::print("(rank {}: isa auto, within {:.0f} % of rank 1's {}, runs on any CPU)\n", best_index + 1,
               100 * kIsaMargin, hgca::to_string(results.front().config.isa));
  }
  if (!write_failures.empty()) fail(fmt::format("{}", fmt::join(write_failures, "; ")));
  if (!cli.out.empty()) fmt::print("written to {} (load with hgca::load_options_json or HGCA_CONFIG={})\n", cli.out, cli.out);
  if (!cli.svg.empty()) fmt::print("plot: {}\n", cli.svg);
  return 0;
}

}  // namespace

constexpr const char* kExamples = R"(Prints the topology (NUMA nodes, cores, the GPU's nodes), each thread count's DRAM read
bandwidth and the engine's bandwidth over the selected K+V bytes (GB/s, 1e9 bytes a second),
and the configurations ranked by the engine's GB/s. Progress goes to stderr.

Examples:
  hgca-tune --quick
  hgca-tune --q-heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --context 32768 \
            --selected-fraction 0.1 --batch 8 --out hgca-config.json --svg hgca-tune.svg
  hgca-tune --quick --json > tune.json
  HGCA_CONFIG=hgca-config.json hgca-decode)";

int main(int argc, char** argv) {
  Cli cli;
  CLI::App app{"hgca-tune: measure this machine and tune hgca's CPU engine for a model shape", "hgca-tune"};
  app.footer(kExamples);
  hgca::tools::add_version_flag(app);
  const int32_t int_max = std::numeric_limits<int32_t>::max();
  const auto positive = hgca::tools::integer_in<int32_t>(1, int_max);
  const auto non_negative = hgca::tools::integer_in<int32_t>(0, int_max);
  app.add_option("--q-heads", cli.shape.q_heads, "query heads Hq")->capture_default_str()->transform(positive);
  app.add_option("--kv-heads", cli.shape.kv_heads, "KV heads Hkv (divides Hq)")->capture_default_str()->transform(positive);
  app.add_option("--head-dim", cli.shape.head_dim, "head dim D")->capture_default_str()->transform(hgca::tools::head_dim());
  app.add_option("--dtype", cli.dtype, "KV dtype: bf16, f16 (or fp16) or f32 (or fp32)")->capture_default_str()
      ->check(CLI::IsMember(hgca::tools::kDtypeNames));
  app.add_option("--context", cli.shape.context, "store tokens per sequence")->capture_default_str()
      ->transform(hgca::tools::integer_in<int64_t>(1, int64_t{1} << 40));
  app.add_option("--selected-fraction", cli.shape.selected_fraction,
                 "mean fraction of the store selected per KV head (per-head spread 0.25-1.75x)")
      ->capture_default_str()->transform(hgca::tools::number_in(1e-6, 1.0));
  app.add_option("--batch", cli.shape.batch, "sequences per step")->capture_default_str()->transform(positive);
  app.add_flag("--quick", cli.quick, "a short sweep (under a minute on 2 cores)");
  app.add_flag("--json", cli.json, "print one JSON object on stdout instead of the tables");
  app.add_option("--out", cli.out, "write the best configuration here (the JSON hgca::load_options_json and HGCA_CONFIG read)")
      ->check(hgca::tools::file_path());
  app.add_option("--svg", cli.svg, "write a plot of bandwidth against threads here (SVG)")->check(hgca::tools::file_path());
  app.add_option("--threads", cli.threads, "threads per node to sweep, as 1 2 4 or 1,2,4 (default: 1, 2, 4, …, three quarters of the cores from 12 on, every core "
                 "and every hardware thread; quick: 1 and every core)")->transform(positive)->delimiter(',');
  app.add_option("--max-packed-heads", cli.max_packed_heads,
                 "most small (sequence, KV head) items packed into one task, to sweep; 0 = as many as fit in the split "
                 "(default 0 1 2 4 8, quick 0 1)")->transform(non_negative)->delimiter(',');
  app.add_option("--kv-split", cli.kv_split, "KV split sizes in tokens to sweep, 0 = the engine chooses (default 0 512 2048 8192, quick 0 2048)")
      ->transform(non_negative)->delimiter(',');
  app.add_option("--placement", cli.placements, "placements to sweep: auto balanced gpu_local (default: all that differ here)")
      ->delimiter(',')->check(CLI::IsMember({"auto", "balanced", "gpu_local"}));
  app.add_option("--working-set-mb", cli.working_set_mb,
                 "bytes each measurement streams over, in MiB, at least 1 (default 4x the last-level cache, quick "
                 "2x, and at least 1024; a set the caches hold measures the caches, not DRAM)")
      ->transform(hgca::tools::number_in(1.0, double(1 << 30)));
  app.add_option("--repeats", cli.repeats, "timed runs per point (default 9, quick 5)")->transform(hgca::tools::integer_in<int32_t>(1, 100000));
  auto* gpu_pci = app.add_option("--gpu-pci-bus-id", cli.gpu_pci_bus_id,
                                 "the GPU whose node to prefer (default: the first NVIDIA GPU hwloc finds)")
                      ->check(hgca::tools::non_empty("a PCI bus id such as 0000:65:00.0"));
  app.add_option("--gpu-cpus", cli.gpu_cpus, "the GPU's local CPUs as a list (\"0-15\"), where hwloc cannot see the GPU")
      ->check(hgca::tools::non_empty("a CPU list such as 0-15"))
      ->excludes(gpu_pci);
  if (const auto status = hgca::tools::parse(app, argc, argv)) return *status;
  if (cli.shape.q_heads % cli.shape.kv_heads != 0) {
    return hgca::tools::usage_error(app, fmt::format("--kv-heads: expected a divisor of --q-heads {}, got {}",
                                                     cli.shape.q_heads, cli.shape.kv_heads));
  }
  if (!cli.out.empty() && !cli.svg.empty() && file_named(cli.out) == file_named(cli.svg)) {
    return hgca::tools::usage_error(app, fmt::format("--out {} and --svg {} name the same file", cli.out, cli.svg));
  }
  // With --json the report is the one JSON object on stdout: a file written there too would follow it.
  for (const auto& [flag, path] : {std::pair{"--out", cli.out}, std::pair{"--svg", cli.svg}}) {
    if (cli.json && !path.empty() && is_stdout(path)) {
      return hgca::tools::usage_error(
          app, fmt::format("{} {} is stdout, where --json prints its report: name a file, or drop --json", flag, path));
    }
  }
  try {
    // What was printed must have arrived: a report lost to a full disk is a failed run.
    return hgca::tools::finish_stdout("hgca-tune", run(cli));
  } catch (const std::bad_alloc&) {
    const std::string ws = cli.working_set_mb > 0 ? fmt::format(" or --working-set-mb {}", cli.working_set_mb) : "";
    fail(fmt::format("host memory exhausted: the workload (--batch {} --context {}){} is too large for this machine",
                     cli.shape.batch, cli.shape.context, ws));
  } catch (const std::exception& e) {
    fail(e.what());
  }
}
