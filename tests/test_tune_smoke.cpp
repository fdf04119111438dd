// hgca-tune end to end on a tiny workload: --quick --json prints the promised keys, and the --out
// file loads back through load_options_json.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.hpp"
#include "hgca/hgca.hpp"

namespace hgca {
namespace {

using test::run;

TEST(HgcaTune, QuickJsonOnATinyWorkload) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string stem = "hgca_tune_smoke_" + std::to_string(::getpid());
  const std::string out = (dir / (stem + ".json")).string(), svg = (dir / (stem + ".svg")).string();
  int status = -1;
  const std::string stdout_text =
      run(std::string(HGCA_TUNE_EXE) + " --quick --json --q-heads 8 --kv-heads 2 --head-dim 64 --dtype f16 --context 4096"
          " --selected-fraction 0.2 --batch 2 --working-set-mb 32 --repeats 3 --kv-split 512,0,512 --out " + out + " --svg " + svg + " 2>/dev/null",
          &status);
  ASSERT_EQ(status, 0) << stdout_text;
  const auto report = nlohmann::json::parse(stdout_text);  // one object, nothing else on stdout
  ASSERT_TRUE(report.is_object());
  EXPECT_GT(report.at("dram_read_gbps").get<double>(), 0.0);
  EXPECT_GT(report.at("engine_gbps").get<double>(), 0.0);
  EXPECT_TRUE(report.at("best_config").is_object());
  std::set<int> splits;  // the comma-separated list swept both
  for (const auto& r : report.at("ranked")) splits.insert(r.at("kv_split_tokens").get<int>());
  EXPECT_EQ(splits, (std::set<int>{0, 512}));
  std::set<std::string> configs;  // a value given twice is measured once
  for (const auto& r : report.at("ranked")) {
    const std::string c = r.at("isa").dump() + r.at("kv_split_tokens").dump() + r.at("max_packed_heads").dump() +
                          r.at("numa_placement").dump();
    EXPECT_TRUE(configs.insert(c).second) << "ranked twice: " << c;
  }
  EXPECT_FALSE(report.at("topology").at("nodes").empty());
  EXPECT_EQ(report.at("min_seconds_per_point").get<double>(), 0.05);
  EXPECT_EQ(report.at("rounds").get<int>(), 3);
  std::ifstream meminfo("/proc/meminfo");  // the machine's memory, as the kernel counts it
  std::string key;
  double kib = 0;
  while (meminfo >> key && key != "MemTotal:") meminfo.ignore(1 << 10, '\n');
  ASSERT_TRUE(meminfo >> kib) << "no MemTotal in /proc/meminfo";
  EXPECT_NEAR(report.at("topology").at("memory_bytes").get<double>(), kib * 1024, 1 << 20);

  Options o;
  const Status s = load_options_json(out, &o);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(o.max_packed_heads, report["best_config"]["max_packed_heads"].get<int>());
  EXPECT_FALSE(report["best_config"].contains("heads_per_task"));  // the method's padding is not tuned
  EXPECT_GE(o.threads, 1);
  // best_config is the fastest, or the fastest isa auto one where a named ISA led it by < 3 %.
  const auto& ranked = report.at("ranked");
  const auto best_rank = report.at("best_rank").get<std::size_t>();
  ASSERT_GE(best_rank, 1u);
  ASSERT_LE(best_rank, ranked.size());
  const auto& chosen = ranked[best_rank - 1];
  for (const char* field : {"kv_split_tokens", "max_packed_heads", "numa_placement"}) {
    EXPECT_EQ(report["best_config"][field], chosen[field]) << field;
  }
  // The ISA auto resolves to is written as auto.
  EXPECT_EQ(report["best_config"]["isa"], chosen["isa"] == report["isa_auto_is"] ? "auto" : chosen["isa"]);
  EXPECT_EQ(report.at("engine_gbps"), chosen.at("engine_gbps"));
  const double top = ranked[0].at("engine_gbps").get<double>();
  if (best_rank > 1) {
    EXPECT_EQ(chosen.at("isa"), "auto");
    EXPECT_GE(chosen.at("engine_gbps").get<double>(), 0.97 * top);
  } else if (chosen.at("isa") != "auto") {
    for (const auto& r : ranked) {
      if (r.at("isa") == "auto") {
        EXPECT_LT(r.at("engine_gbps").get<double>(), 0.97 * top) << r;
      }
    }
  }

  // A runtime given the file runs what it says.
  o.n_layers = 1;
  o.n_q_heads = 8;
  o.n_kv_heads = 2;
  o.head_dim = 64;
  o.backend = Backend::kHost;
  std::unique_ptr<Runtime> rt;
  const Status c = Runtime::create(o, &rt);
  ASSERT_TRUE(c.is_ok()) << c.message();
  CpuStats st;
  ASSERT_TRUE(rt->cpu_stats(&st).is_ok());
  const auto& best = report["best_config"];
  EXPECT_EQ(st.kv_split_tokens, best["kv_split_tokens"].get<int>());
  EXPECT_EQ(st.max_packed_heads, best["max_packed_heads"].get<int>());
  if (best["isa"] != "auto") {
    EXPECT_EQ(to_string(st.isa), best["isa"].get<std::string>());
  }
  int threads = 0;
  for (const NumaNodeStats& n : st.nodes) {
    EXPECT_LE(n.threads, best["threads_per_node"].get<int>());
    threads += n.threads;
  }
  EXPECT_EQ(threads, best["threads"].get<int>());
  EXPECT_GE(std::filesystem::file_size(svg), 500u);
  std::filesystem::remove(out);
  std::filesystem::remove(svg);
}

TEST(HgcaTune, VersionIsTheHeadersVersion) { test::expect_version(HGCA_TUNE_EXE, "hgca-tune"); }

// A malformed command line, flags that contradict each other included, is a usage error: status 2,
// before anything is measured.
TEST(HgcaTune, BadFlagsAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--q-heads 8 --kv-heads 3", "--kv-heads: expected a divisor of --q-heads 8, got 3"},
      {"--head-dim 12", "--head-dim: expected a multiple of 8 from 8 to 256, got 12"},
      {"--dtype xyz", "--dtype: xyz not in"},
      {"--placement auto,bogus", "--placement: bogus not in"},
      {"--out t.json --svg ./t.json", "--out t.json and --svg ./t.json name the same file"},
      {"--json --out /dev/stdout", "--out /dev/stdout is stdout, where --json prints its report"},
      {"--gpu-cpus 0 --gpu-pci-bus-id 0000:01:00.0", "--gpu-pci-bus-id excludes --gpu-cpus"},
      {"--out ''", "--out: expected a file path, got \"\""},  // the sweep ran and wrote nothing
      {"--svg ''", "--svg: expected a file path, got \"\""},
      {"--out -", "--out: expected a file path, got - (name /dev/stdout"},  // it wrote a file named "-"
      {"--threads 1,,2", "--threads: expected values separated by ',', got 1,,2 (an empty element)"},
      {"--kv-split=0,", "--kv-split: expected values separated by ','"},  // CLI11 dropped the empty one
      {"--placement auto ,balanced", "--placement: expected values separated by ',', got ,balanced"},
  };
  for (const auto& [flags, expected] : cases) {
    int status = -1;
    const std::string text = run(std::string(HGCA_TUNE_EXE) + " " + flags + " 2>&1", &status);
    ASSERT_TRUE(WIFEXITED(status)) << flags;
    EXPECT_EQ(WEXITSTATUS(status), 2) << flags;
    EXPECT_NE(text.find(expected), std::string::npos) << flags << ": " << text;
    EXPECT_NE(text.find("error (usage)"), std::string::npos) << flags << ": " << text;
  }
}

// What the run writes arrives whole or the run fails: a --out file that cannot be written keeps
// what it held, a report lost to a full stdout fails the run, and a closed stderr (no progress
// shown) does not end it.
TEST(HgcaTune, OutputThatDoesNotArriveFailsTheRunAndKeepsTheOldFile) {
  const std::string tiny = std::string(HGCA_TUNE_EXE) + " --quick --threads 1 --kv-split 0 --max-packed-heads 0"
                           " --repeats 1 --working-set-mb 8 --context 1024 --batch 1";
  const auto out = std::filesystem::temp_directory_path() / ("hgca_tune_keep_" + std::to_string(::getpid()) + ".json");
  std::ofstream(out) << "{\"threads\": 3}\n";
  int status = -1;
  // A file size limit of 0 (SIGXFSZ ignored): every write to a file fails, the pipe still works.
  std::string text = run("bash -c \"trap '' XFSZ; ulimit -f 0; " + tiny + " --out " + out.string() + "\" 2>&1", &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  EXPECT_NE(text.find("cannot write the file"), std::string::npos) << text;
  EXPECT_NE(text.find("Ranked"), std::string::npos) << "the results are printed before the failure:\n" << text;
  std::ifstream kept(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "{\"threads\": 3}\n");
  std::filesystem::remove(out);
  for (const auto& dir : std::filesystem::directory_iterator(out.parent_path())) {  // no temporary file left
    EXPECT_FALSE(dir.path().filename().string().starts_with(out.filename().string())) << dir.path();
  }

  text = run(tiny + " --json 2>&1 >/dev/full", &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  EXPECT_NE(text.find("writing the output to stdout failed"), std::string::npos) << text;

  text = run(tiny + " 2>&-", &status);  // without --json: progress lines go to stderr
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_NE(text.find("Ranked"), std::string::npos) << text;
}

// --out and --svg naming stdout or stderr write through the stream: a log either appends to keeps its
// lines, and the file comes where it was written among what was printed (it used to truncate the
// log, and the tables printed after it overwrote it).
TEST(HgcaTune, OutputNamingStdoutOrStderrAppendsToTheirLogs) {
  const std::string tiny = std::string(HGCA_TUNE_EXE) + " --quick --threads 1 --kv-split 0 --max-packed-heads 0"
                           " --repeats 1 --working-set-mb 8 --context 1024 --batch 1";
  const auto stem = std::filesystem::temp_directory_path() / ("hgca_tune_logs_" + std::to_string(::getpid()));
  const std::string out_log = stem.string() + ".out", err_log = stem.string() + ".err";
  std::ofstream(out_log) << "earlier line\n";
  std::ofstream(err_log) << "earlier error\n";
  int status = -1;
  run(tiny + " --out /dev/stdout --svg /dev/stderr >>" + out_log + " 2>>" + err_log, &status);
  EXPECT_EQ(status, 0);
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string out = read(out_log), err = read(err_log);
  EXPECT_TRUE(out.starts_with("earlier line\n")) << out;
  const std::size_t config = out.find("\"kv_split_tokens\""), ranked = out.find("Ranked");
  EXPECT_NE(config, std::string::npos) << out;
  EXPECT_NE(ranked, std::string::npos) << out;
  EXPECT_LT(config, ranked) << "the file was written before the tables were printed:\n" << out;
  EXPECT_TRUE(err.starts_with("earlier error\n")) << err;
  EXPECT_NE(err.find("</svg>"), std::string::npos) << err;
  std::filesystem::remove(out_log);
  std::filesystem::remove(err_log);
}

// A working set the caches can hold measures them: said, where the topology knows the cache.
TEST(HgcaTune, AWorkingSetTheCachesHoldIsSaid) {
  const auto err = std::filesystem::temp_directory_path() / ("hgca_tune_llc_" + std::to_string(::getpid()) + ".txt");
  int status = -1;
  const std::string text = run(std::string(HGCA_TUNE_EXE) + " --quick --threads 1 --kv-split 0 --max-packed-heads 0"
                               " --repeats 1 --working-set-mb 8 --context 1024 --batch 1 --json 2>" + err.string(), &status);
  ASSERT_EQ(status, 0) << text;
  const auto llc = nlohmann::json::parse(text).at("topology").at("last_level_cache_bytes").get<double>();
  std::ifstream in(err);
  const std::string warnings(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove(err);
  EXPECT_EQ(warnings.find("--working-set-mb 8 is less than twice the last-level cache") != std::string::npos,
            8.0 * (1 << 20) < 2 * llc) << "last-level cache " << llc << " bytes; stderr:\n" << warnings;
}

// Values the sweep could not use, or would silently replace, end the run before it starts, with the
// flag named; so does a workload too large for the machine's memory (not an abort).
TEST(HgcaTune, ValuesItCannotUseAreRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--selected-fraction nan", "--selected-fraction: expected a number from 1e-06 to 1, got nan"},
      {"--kv-split -5", "--kv-split: expected an integer from 0 to 2147483647, got -5"},
      {"--max-packed-heads 1,-3", "--max-packed-heads: expected an integer from 0 to 2147483647, got -3"},
      {"--repeats 0", "--repeats"},
      {"--working-set-mb 0.001", "--working-set-mb"},
      {"--working-set-mb 1000000", "--working-set-mb 1000000 takes 976.6 GiB"},
      {"--gpu-cpus 0-99999", "--gpu-cpus: cpu_list = \"0-99999\" names CPUs"},
      {"--gpu-cpus -1", "error: --gpu-cpus: cpu_list = \"-1\", expected a CPU list such as"},
      {"--gpu-cpus ''", "--gpu-cpus: expected a CPU list such as 0-15, got \"\""},
      {"--gpu-pci-bus-id ''", "--gpu-pci-bus-id: expected a PCI bus id such as 0000:65:00.0, got \"\""},
      {"--threads 100000", "--threads 100000"},
      {"--out /nonexistent-dir/x.json", "--out /nonexistent-dir/x.json"},
      {"--out /tmp", "--out /tmp: is a directory"},
      {"--svg /nonexistent-dir/p.svg", "--svg /nonexistent-dir/p.svg"},
      {"--q-heads 0", "--q-heads: expected an integer from 1 to 2147483647, got 0"},
      {"--threads 1,a", "--threads: expected an integer from 1 to 2147483647, got a"},
      {"--quick --working-set-mb 64 --batch 2000000000", "--batch 2000000000"},
      {"--quick --q-heads 2000000000 --kv-heads 1 --context 1 --batch 1", "of memory this process may use"},
      {"--quick --context 1099511627776 --q-heads 1000000 --kv-heads 1000000 --batch 100000", "of memory this process may use"},  // bytes past 2^64
      {"--context 99999999999999999999", "--context: expected an integer from 1 to 1099511627776, got 9999"},
  };
  test::expect_refused(HGCA_TUNE_EXE, cases);
}

// An output file the OS refuses (here even to root, whom access() lets through) ends the run before
// the sweep, not after it with the results lost.
TEST(HgcaTune, UnwritableOutputIsRefusedBeforeTheSweep) {
  for (const char* flag : {"--out", "--svg"}) {
    int status = -1;
    const std::string text = run(std::string(HGCA_TUNE_EXE) + " --quick " + flag + " /proc/hgca-tune-test 2>&1", &status);
    EXPECT_NE(status, 0) << flag;
    EXPECT_NE(text.find(std::string(flag) + " /proc/hgca-tune-test: cannot write"), std::string::npos) << text;
    EXPECT_EQ(text.find("GB/s"), std::string::npos) << flag << ": measured before refusing:\n" << text;
  }
  // A loop of links is named, and stays as it was (it used to be replaced by a file).
  const auto dir = std::filesystem::temp_directory_path() / ("hgca_tune_loop_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("b", dir / "a");
  std::filesystem::create_symlink("a", dir / "b");
  int status = -1;
  const std::string text = run(std::string(HGCA_TUNE_EXE) + " --quick --out " + (dir / "a").string() + " 2>&1", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("/a: Too many levels of symbolic links"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "a") && std::filesystem::is_symlink(dir / "b"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hgca
