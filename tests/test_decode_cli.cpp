// hgca-decode's command line end to end: a tiny synthetic run prints the promised JSON, and values
// it cannot use end the run before it starts, with the flag and the value named.
#include <gtest/gtest.h>

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli_run.hpp"
#include "hgca/hgca.hpp"
#include "data_dir.hpp"

namespace {

/// hgca-decode and the tests' preload module: this build's, or where the environment's
/// HGCA_DECODE_EXE and HGCA_SIGINT_FIRST say (a copy of the programs run on another machine).
const char* decode_exe() {
  static const char* const exe = std::getenv("HGCA_DECODE_EXE") ? std::getenv("HGCA_DECODE_EXE") : HGCA_DECODE_EXE;
  return exe;
}
const char* sigint_first() {
  static const char* const module = std::getenv("HGCA_SIGINT_FIRST") ? std::getenv("HGCA_SIGINT_FIRST") : HGCA_SIGINT_FIRST;
  return module;
}

using hgca::test::run;

/// A tiny synthetic run (a 128-token window under a 192-token prompt: the store holds the rest) with
/// `flags`: its JSON, after checking what every backend reports.
nlohmann::json tiny_synthetic_run(const std::string& flags) {
  int status = -1;
  const std::string text = run(std::string("HGCA_CONFIG= ") + decode_exe() + " --layers 2 --window-blocks 2 --context 192"
                                   " --chunk 64 --decode-steps 3 --json " + flags + " 2>/dev/null",
                               &status);
  EXPECT_EQ(status, 0) << text;
  if (status != 0) return {};
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("tbt_ms").size(), 3u);
  EXPECT_EQ(j.at("prefill_steps"), 3);
  EXPECT_GT(j.at("tokens_per_s").get<double>(), 0.0);
  EXPECT_GT(j.at("store_memory").at("used_bytes").get<int64_t>(), 0);
  return j;
}

TEST(HgcaDecode, TinySyntheticRunPrintsItsJson) {
  const auto j = tiny_synthetic_run("--backend host --threads 1");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j.at("backend"), "host");
  EXPECT_TRUE(j.at("decode_sync_growths").is_number_integer());
  EXPECT_EQ(j.at("staging_limit_bytes").get<int64_t>(), int64_t{64} << 20);
  EXPECT_EQ(j.at("threads"), 1);
  EXPECT_EQ(j.at("threads_used"), 1);
  EXPECT_EQ(j.at("cpu").at("threads_per_node").at(0), 1);
  EXPECT_NE(j.at("cpu").at("isa"), "auto");  // the path that ran
  EXPECT_TRUE(j.at("config").is_null());
}

// The same run on the CUDA backend where a GPU is usable (its inputs go to device buffers: a change
// that sized them before the inputs existed crashed there only, stop 48's call 12).
TEST(HgcaDecode, TinySyntheticRunOnTheGpu) {
  if (hgca::cuda_device_count() <= 0) GTEST_SKIP() << "no usable GPU: the CUDA backend's run is checked where one is";
  const auto j = tiny_synthetic_run("--backend cuda");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j.at("backend"), "cuda");
}

// Under taskset the pool counts the CPUs the process may run on, not the machine's: one CPU allowed,
// one thread (it counted every core: threads that could not run, and cpu_stats said they did).
TEST(HgcaDecode, ThreadsFollowTheProcessCpuBinding) {
  if (std::system("taskset -c 0 true >/dev/null 2>&1") != 0) GTEST_SKIP() << "no taskset here";
  int status = -1;
  const std::string text = run(std::string("HGCA_CONFIG= taskset -c 0 ") + decode_exe() +
                                   " --backend host --layers 1 --window-blocks 2 --context 64 --chunk 64"
                                   " --decode-steps 1 --json 2>/dev/null",
                               &status);
  ASSERT_EQ(status, 0) << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("threads_used"), 1) << text;
  EXPECT_EQ(j.at("cpu").at("threads_per_node").at(0), 1) << text;
}

// Without decode steps there is no rate: null, as the percentiles (tokens_per_s said 0).
TEST(HgcaDecode, NoDecodeStepsReportNoRate) {
  int status = -1;
  const std::string text =
      run(std::string(decode_exe()) + " --backend host --context 64 --decode-steps 0 --json 2>/dev/null", &status);
  ASSERT_EQ(status, 0) << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_TRUE(j.at("tokens_per_s").is_null()) << text;
  EXPECT_TRUE(j.at("tbt_ms_p50").is_null()) << text;
}

// --backend auto without a usable GPU runs on the host: the CUDA backend's flags given are named as
// having no effect (they used to vanish in silence).
TEST(HgcaDecode, CudaFlagsWithoutAGpuAreNamed) {
  if (hgca::cuda_device_count() > 0) GTEST_SKIP() << "a usable GPU: --backend auto runs on it";
  int status = -1;
  const std::string text = run(std::string(decode_exe()) +
                                   " --context 64 --decode-steps 1 --handoff poll --staging-mib 8 2>&1 >/dev/null",
                               &status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("runs on the host, where --handoff poll, --staging-mib 8 have no effect"), std::string::npos) << text;
}

// --backend cuda without a usable GPU says so, whatever --cuda-wait asks (the wait mode used to be
// set first, and its CUDA error came out instead).
TEST(HgcaDecode, BackendCudaWithoutAGpuIsSaid) {
  if (hgca::cuda_device_count() > 0) GTEST_SKIP() << "a usable GPU: --backend cuda runs on it";
  for (const char* wait : {"auto", "blocking"}) {
    int status = -1;
    const std::string text = run(std::string(decode_exe()) + " --backend cuda --cuda-wait " + wait +
                                     " --context 64 --decode-steps 1 2>&1 >/dev/null", &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << wait << ": " << text;
    // (A build without CUDA says that instead.)
    EXPECT_TRUE(text.find("backend = cuda: no usable CUDA device") != std::string::npos ||
                text.find("backend = cuda: this build has no CUDA") != std::string::npos) << wait << ": " << text;
  }
}

TEST(HgcaDecode, ValuesItCannotUseAreRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--layers 0", "--layers: expected an integer from 1 to 2147483647, got 0"},
      {"--decode-steps -1", "--decode-steps: expected an integer from 0 to 2147483647, got -1"},
      {"--staging-mib 0", "--staging-mib: expected an integer from 1 to 2147483647, got 0"},
      {"--seed -1", "--seed: expected an integer from 0 to 18446744073709551615, got -1"},
      {"--seed 99999999999999999999999", "--seed: expected an integer from 0 to 18446744073709551615, got 9999"},
      // What CLI11 alone said without the expected type ("Could not convert: --threads = abc"),
      // truncated, or called out of range.
      {"--threads abc", "--threads: expected an integer from 0 to 2147483647, got abc"},
      {"--context 1.5", "--context: expected an integer from 1 to 2147483647, got 1.5"},
      {"--window-blocks 8x", "--window-blocks: expected an integer, got 8x"},
      {"--block-tokens 99999999999", "--block-tokens: expected an integer from -2147483648 to 2147483647, got 9999"},
      {"--alpha fast", "--alpha: expected a finite number that a float holds (0, or magnitudes from 1.4e-45 to 3.4e+38), got fast"},
      {"--beta nan", "--beta: expected a finite number that a float holds (0, or magnitudes from 1.4e-45 to 3.4e+38), got nan"},
      {"--beta 1e-50", "got 1e-50"},  // a float would read 0: exact attention
      {"--backend host --handoff poll", "--handoff poll needs the CUDA backend"},
      {"--backend host --overflow always", "--overflow always needs the CUDA backend"},
      {"--backend host --staging-mib 1", "--staging-mib 1 needs the CUDA backend"},
      // Sizes the machine cannot hold, refused up front (before 2^31 tokens wrapped the step count).
      {"--backend host --context 2000000000 --chunk 2000000000 --decode-steps 0", "--chunk 2000000000"},
      {"--backend host --context 2000000000", "--context 2000000000"},
      {"--backend host --q-heads 2000000000 --kv-heads 1", "--q-heads 2000000000"},
      // Windows held whole from the start count too (32 TiB here). A head dim the runtime cannot
      // take is a usage error, as in hgca-tune.
      {"--backend host --window-blocks 262144 --head-dim 256 --q-heads 16 --kv-heads 16 --layers 64 --context 64 "
       "--decode-steps 1", "--window-blocks 262144"},
      {"--head-dim 100000", "--head-dim: expected a multiple of 8 from 8 to 256, got 100000"},
      {"--head-dim 12", "--head-dim: expected a multiple of 8 from 8 to 256, got 12"},
      {"--config -", "--config: expected a file path, got - (name /dev/stdout or /dev/stdin for those)"},
      // The runtime's refusals name the flag that set the field.
      {"--backend host --window-blocks 0", "window_blocks = 0, expected ≥ 1 (set by --window-blocks)"},
      {"--backend host --alpha 2", "(set by --alpha)"},
      {"--backend host --window-blocks 2147483647", "expected ≤ 2^24 tokens (set by --window-blocks and --block-tokens)"},
  };
  hgca::test::expect_refused(decode_exe(), cases);
}

// Usage errors, CLI11's own included, share one form and exit status; --help is no error.
TEST(HgcaDecode, UsageErrorsExitTwo) {
  for (const char* flags : {"--threads abc", "--no-such-flag", "--layers 2 --model /nonexistent.bin"}) {
    int status = -1;
    const std::string text = hgca::test::run(std::string(decode_exe()) + " " + flags + " 2>&1", &status);
    ASSERT_TRUE(WIFEXITED(status)) << flags;
    EXPECT_EQ(WEXITSTATUS(status), 2) << flags << ": " << text;
    EXPECT_EQ(text.rfind("hgca-decode: error (usage): ", 0), 0u) << flags << ": " << text;
  }
  int status = -1;
  hgca::test::run(std::string(decode_exe()) + " --help", &status);
  EXPECT_EQ(status, 0);
  // Help that did not arrive is no success.
  const std::string text = hgca::test::run(std::string(decode_exe()) + " --help 2>&1 >/dev/full", &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  EXPECT_NE(text.find("writing the output to stdout failed"), std::string::npos) << text;
}

TEST(HgcaDecode, VersionIsTheHeadersVersion) { hgca::test::expect_version(decode_exe(), "hgca-decode"); }

TEST(HgcaDecode, OutputThatCannotBeWrittenFailsTheRun) {
  int status = -1;
  const std::string text = hgca::test::run(
      std::string(decode_exe()) + " --backend host --context 64 --decode-steps 1 --json 2>&1 >/dev/full", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(text.find("writing the output to stdout failed"), std::string::npos) << text;
}

// HGCA_CONFIG applies over the command line (the runtime's precedence); what it overrode is said.
TEST(HgcaDecode, WhatHgcaConfigOverridesIsSaid) {
  const auto config = std::filesystem::temp_directory_path() / ("hgca_decode_config_" + std::to_string(::getpid()) + ".json");
  std::ofstream(config) << R"({"threads": 1, "kv_split_tokens": 512})";
  int status = -1;
  const std::string text = run("HGCA_CONFIG=" + config.string() + " " + decode_exe() +
                               " --backend host --threads 2 --context 64 --decode-steps 2 --json 2>&1 >/dev/null", &status);
  std::filesystem::remove(config);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("applies over the command line: threads 2 -> 1, kv_split_tokens 0 -> 512"), std::string::npos)
      << text;
  // --json says what ran and which file set it.
  std::ofstream(config) << R"({"threads": 1, "kv_split_tokens": 512})";
  const std::string json_text = run("HGCA_CONFIG=" + config.string() + " " + decode_exe() +
                                    " --backend host --context 64 --decode-steps 2 --json 2>/dev/null", &status);
  std::filesystem::remove(config);
  ASSERT_EQ(status, 0) << json_text;
  const auto j = nlohmann::json::parse(json_text);
  EXPECT_EQ(j.at("cpu").at("kv_split_tokens"), 512);
  EXPECT_EQ(j.at("threads_used"), 1);
  EXPECT_EQ(j.at("config"), config.string());
}

// --config applies the file's tuned fields under the flags given; a bad file is named.
TEST(HgcaDecode, ConfigFlagYieldsToTheFlagsGiven) {
  const auto config = std::filesystem::temp_directory_path() / ("hgca_decode_flag_config_" + std::to_string(::getpid()) + ".json");
  std::ofstream(config) << R"({"threads": 1, "kv_split_tokens": 512})";
  const std::string base = std::string("HGCA_CONFIG= ") + decode_exe() + " --backend host --context 64 --decode-steps 1 --json --config " + config.string();
  int status = -1;
  std::string text = run(base + " 2>/dev/null", &status);
  ASSERT_EQ(status, 0) << text;
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("threads_used"), 1);
  EXPECT_EQ(j.at("cpu").at("kv_split_tokens"), 512);
  EXPECT_EQ(j.at("config_flag"), config.string());  // said, as HGCA_CONFIG's file is in "config"
  EXPECT_TRUE(j.at("config").is_null());
  text = run(base + " --threads 2 2>/dev/null", &status);
  ASSERT_EQ(status, 0) << text;
  j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("threads"), 2);  // the flag's, over the file's 1
  EXPECT_EQ(j.at("cpu").at("kv_split_tokens"), 512);
  std::ofstream(config) << R"({"threads": -1})";
  text = run(base + " 2>&1", &status);
  std::filesystem::remove(config);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  EXPECT_NE(text.find(config.string()), std::string::npos) << text;
  EXPECT_NE(text.find("threads = -1"), std::string::npos) << text;
}

/// hgca-decode mid-prefill on a terminal (a pty), sent SIGINT once its bar shows: what the terminal
/// received and the wait status. `preload`: a library loaded first (LD_PRELOAD), or null.
struct Interrupted {
  std::string seen;
  int status = 0;
};
Interrupted interrupt_mid_prefill(const char* preload) {
  Interrupted r;
  // The child's environment and arguments, made before the fork (the child only execs).
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view var(*e);
    if (!preload || (!var.starts_with("LD_PRELOAD=") && !var.starts_with("ASAN_OPTIONS="))) env.emplace_back(var);
  }
  if (preload) {
    env.push_back(std::string("LD_PRELOAD=") + preload);
    // Under AddressSanitizer (the sanitize preset) its runtime would refuse to come second.
    const char* asan = std::getenv("ASAN_OPTIONS");
    env.push_back(std::string("ASAN_OPTIONS=") + (asan ? asan : "") + ":verify_asan_link_order=0");
  }
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const char* argv[] = {decode_exe(), "--backend", "host", "--context", "1000000", "--chunk", "64",
                        "--decode-steps", "0", nullptr};
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) {
    ADD_FAILURE() << "forkpty failed";
    return r;
  }
  if (pid == 0) {  // on the terminal: a run long enough to be interrupted mid-prefill
    ::execve(argv[0], const_cast<char* const*>(argv), envp.data());
    ::_exit(127);
  }
  bool interrupted = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buf[4096];
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // EIO: the child is gone and the terminal closed
      r.seen.append(buf, static_cast<std::size_t>(n));
    }
    if (!interrupted && r.seen.find("] ") != std::string::npos) {  // a bar was drawn
      ::kill(pid, SIGINT);
      interrupted = true;
    }
  }
  if (!interrupted) ::kill(pid, SIGKILL);
  ::waitpid(pid, &r.status, 0);
  ::close(master);
  EXPECT_TRUE(interrupted) << "no progress bar within 60 s:\n" << r.seen;
  return r;
}

// Ctrl-C while the progress bar is drawn on a terminal ends its line before the process dies of
// the signal, so that the shell's prompt does not land on the bar.
TEST(HgcaDecode, InterruptEndsTheProgressLine) {
  const Interrupted r = interrupt_mid_prefill(nullptr);
  EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGINT) << "status " << r.status;
  EXPECT_TRUE(r.seen.ends_with("\n")) << "the bar's line was left open:\n" << r.seen;
}

// A library's SIGINT handler, there before the bar (on the GPU machine LLVM's, which hwloc's OpenCL
// plugin loaded through pocl: the line was left open), still runs, after the line is ended.
TEST(HgcaDecode, InterruptEndsTheProgressLineBeforeALibrarysHandler) {
  const Interrupted r = interrupt_mid_prefill(sigint_first());
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3) << "status " << r.status << ":\n" << r.seen;
  const std::size_t bar = r.seen.rfind("] ");
  ASSERT_NE(bar, std::string::npos) << r.seen;
  const std::size_t line_end = r.seen.find('\n', bar), library = r.seen.find("library handler", bar);
  EXPECT_TRUE(line_end != std::string::npos && library != std::string::npos && line_end < library)
      << "the bar's line, then the library's handler:\n" << r.seen;
}

// Progress and messages that cannot reach stderr (closed, or a full disk) do not end the run: it
// finishes with its status, never an abort.
TEST(HgcaDecode, AStderrThatCannotBeWrittenDoesNotEndTheRun) {
  for (const char* redirect : {"2>&-", "2>/dev/full"}) {
    int status = -1;
    // Without --json: its progress lines go to stderr.
    std::string text = hgca::test::run(
        std::string(decode_exe()) + " --backend host --context 64 --decode-steps 2 " + redirect, &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << redirect << ": status " << status;
    EXPECT_NE(text.find("time between tokens"), std::string::npos) << redirect << ": " << text;
    text = hgca::test::run(std::string(decode_exe()) + " --threads abc " + redirect, &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << redirect << ": status " << status;
  }
}

/// Where the tiny model lies (../shared beside the checkout, or HGCA_SHARED_DIR).
std::string stories_dir() { return hgca::test::data_dir("HGCA_SHARED_DIR", HGCA_SHARED_DIR) + "/data/stories260K"; }

// --steps counts the prompt's positions (run.c's rule): fewer than the prompt runs part of it and
// generates nothing, which the user is told.
TEST(HgcaDecode, StepsShorterThanThePromptAreReported) {
  const std::string dir = stories_dir();
  if (!std::filesystem::exists(dir + "/stories260K.bin")) GTEST_SKIP() << "stories260K not found under " << dir;
  const std::string cmd = std::string(decode_exe()) + " --backend host --model " + dir + "/stories260K.bin --tokenizer " +
                          dir + "/tok512.bin --prompt 'Once upon a time there was' --steps ";
  int status = -1;
  std::string text = run(cmd + "2 2>&1", &status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("warning: --steps 2 runs 2 positions, fewer than the prompt's 7 tokens"), std::string::npos) << text;
  text = run(cmd + "12 2>&1", &status);
  EXPECT_EQ(status, 0) << text;
  EXPECT_EQ(text.find("warning"), std::string::npos) << text;
}

// A checkpoint whose head size (dim / n_heads) the runtime does not take: the refusal names the
// checkpoint's fields, not a flag (it named nothing).
TEST(HgcaDecode, AHeadSizeTheRuntimeCannotTakeIsTheCheckpoints) {
  const std::string dir = stories_dir();
  if (!std::filesystem::exists(dir + "/stories260K.bin")) GTEST_SKIP() << "stories260K not found under " << dir;
  // dim 8, hidden 8, 1 layer, 4 heads of 2 (and 4 KV heads), vocabulary 512 (shared classifier), 8 positions.
  const int32_t header[7] = {8, 8, 1, 4, 4, 512, 8};
  const std::size_t floats = 512 * 8 + 8 + 4 * 8 * 8 + 8 + 3 * 8 * 8 + 8 + 2 * 8 * 1;
  const auto path = std::filesystem::temp_directory_path() / ("hgca_decode_hs2_" + std::to_string(::getpid()) + ".bin");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    const std::vector<float> zeros(floats, 0.0f);
    out.write(reinterpret_cast<const char*>(zeros.data()), static_cast<std::streamsize>(zeros.size() * sizeof(float)));
  }
  int status = -1;
  const std::string text = run(std::string(decode_exe()) + " --backend host --model " + path.string() +
                                   " --tokenizer " + dir + "/tok512.bin --steps 2 2>&1", &status);
  std::filesystem::remove(path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  EXPECT_NE(text.find("head_dim = 2, expected a multiple of 8 in [8, 256] (set by the checkpoint's dim / n_heads)"),
            std::string::npos) << text;
}

}  // namespace
