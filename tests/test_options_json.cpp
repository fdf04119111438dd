// Options' tuned fields from JSON: hgca-tune's output round trip, every bad field named, unknown
// keys refused, HGCA_CONFIG applied by Runtime::create, and the C ABI's mirror.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config_json.hpp"
#include "cpu/sparse_engine.hpp"
#include "runtime_backends.hpp"
#include "hgca/hgca.h"
#include "hgca/hgca.hpp"

namespace hgca {
namespace {

using ::testing::HasSubstr;

/// A file in the temporary directory holding `text`, unique to the running test; removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    // ctest runs the tests of this file as parallel processes: the test's name keeps their files apart.
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::temp_directory_path() /
             (std::string("hgca_options_") + test->test_suite_name() + "_" + test->name() + "_" +
              std::to_string(counter_++) + ".json"))
                .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

Options model() {
  Options o;
  o.n_layers = 2;
  o.n_q_heads = 8;
  o.n_kv_heads = 4;
  o.head_dim = 16;
  o.dtype = DType::kFloat32;
  return o;
}

TEST(OptionsJson, RoundTripOfHgcaTuneOutput) {
  Options tuned;
  tuned.threads = 12;
  tuned.threads_per_node = 6;
  tuned.kv_split_tokens = 1024;
  tuned.max_packed_heads = 3;
  tuned.heads_per_task = 2;  // the method's padding: not a tuned field, not written
  tuned.isa = CpuIsa::kAvx2;
  tuned.numa_placement = NumaPlacement::kGpuLocal;
  tuned.overflow_cpu_gbps = 12.5;  // hgca-tune's engine_gbps, for the overflow policy
  const TempFile f(tune::tuned_options_json(tuned, {{"tool", "hgca-tune"}, {"engine_gbps", 12.5}}).dump(2));

  Options o = model();
  o.window_blocks = 3;  // not a tuned field: must survive
  const Status s = load_options_json(f.path(), &o);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(o.threads, 12);
  EXPECT_EQ(o.threads_per_node, 6);
  EXPECT_EQ(o.kv_split_tokens, 1024);
  EXPECT_EQ(o.max_packed_heads, 3);
  EXPECT_EQ(o.heads_per_task, 1);
  EXPECT_EQ(o.isa, CpuIsa::kAvx2);
  EXPECT_EQ(o.numa_placement, NumaPlacement::kGpuLocal);
  EXPECT_EQ(o.overflow_cpu_gbps, 12.5);
  EXPECT_EQ(o.window_blocks, 3);
  EXPECT_EQ(o.n_q_heads, 8);

  // Every enum value goes out and comes back.
  for (auto isa : {CpuIsa::kAuto, CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16}) {
    for (auto p : {NumaPlacement::kAuto, NumaPlacement::kBalanced, NumaPlacement::kGpuLocal}) {
      Options t;
      t.isa = isa;
      t.numa_placement = p;
      const TempFile g(tune::tuned_options_json(t).dump());
      Options back;
      back.isa = CpuIsa::kPortable == isa ? CpuIsa::kAvx512 : CpuIsa::kPortable;
      ASSERT_TRUE(load_options_json(g.path(), &back).is_ok());
      EXPECT_EQ(back.isa, isa);
      EXPECT_EQ(back.numa_placement, p);
    }
  }
}

TEST(OptionsJson, OverflowPolicyKeys) {
  const TempFile f(R"({"overflow": "always", "overflow_margin": 0.25, "overflow_cpu_gbps": 80,
                       "overflow_cpu_row_gbps": 300.5, "overflow_h2d_gbps": 50, "overflow_gpu_gbps": 3000,
                       "overflow_gpu_row_gbps": 800, "overflow_window_gbps": 0})");
  Options o = model();
  o.overflow_window_gbps = 7.0;
  const Status s = load_options_json(f.path(), &o);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(o.overflow, OverflowMode::kAlways);
  EXPECT_EQ(o.overflow_margin, 0.25);
  EXPECT_EQ(o.overflow_cpu_gbps, 80.0);
  EXPECT_EQ(o.overflow_cpu_row_gbps, 300.5);
  EXPECT_EQ(o.overflow_h2d_gbps, 50.0);
  EXPECT_EQ(o.overflow_gpu_gbps, 3000.0);
  EXPECT_EQ(o.overflow_gpu_row_gbps, 800.0);
  EXPECT_EQ(o.overflow_window_gbps, 0.0);  // 0: the default rate
  for (auto mode : {OverflowMode::kAuto, OverflowMode::kOff, OverflowMode::kAlways}) {
    const TempFile g(std::string(R"({"overflow": ")") + to_string(mode) + "\"}");
    Options back;
    ASSERT_TRUE(load_options_json(g.path(), &back).is_ok()) << to_string(mode);
    EXPECT_EQ(back.overflow, mode);
  }
}

TEST(OptionsJson, MissingKeysKeepTheirValues) {
  const TempFile f(R"({"max_packed_heads": 4})");
  Options o = model();
  o.threads = 3;
  ASSERT_TRUE(load_options_json(f.path(), &o).is_ok());
  EXPECT_EQ(o.max_packed_heads, 4);
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.kv_split_tokens, 0);
  const TempFile empty("{}");
  ASSERT_TRUE(load_options_json(empty.path(), &o).is_ok());
}

struct BadCase {
  const char* json;
  std::vector<std::string> parts;  // the message must name each
};

TEST(OptionsJson, EveryBadFieldIsNamed) {
  const BadCase cases[] = {
      {R"({"threads": -1})", {"threads = -1", "≥ 0"}},
      {R"({"threads": 2.5})", {"threads = 2.5", "integer"}},
      {R"({"threads": "8"})", {"threads = \"8\"", "integer"}},
      {R"({"threads": 4294967296})", {"threads = 4294967296", "at most 2147483647"}},
      {R"({"threads": 18446744073709551615})", {"threads = 18446744073709551615"}},
      {R"({"threads_per_node": -2})", {"threads_per_node = -2", "≥ 0"}},
      {R"({"threads_per_node": true})", {"threads_per_node = true"}},
      {R"({"max_packed_heads": -1})", {"max_packed_heads = -1", "≥ 0"}},
      {R"({"max_packed_heads": null})", {"max_packed_heads = null"}},
      // What earlier hgca-tune versions wrote for the packing: refused, pointing to the new name.
      {R"({"heads_per_task": 2})", {"heads_per_task = 2", "not a tuned field", "\"max_packed_heads\""}},
      {R"({"kv_split_tokens": -5})", {"kv_split_tokens = -5", "≥ 0"}},
      {R"({"kv_split_tokens": [1024]})", {"kv_split_tokens = [1024]"}},
      {R"({"isa": "sse9"})", {"isa = \"sse9\"", "\"avx512\""}},
      {R"({"isa": 3})", {"isa = 3", "one of"}},
      {R"({"numa_placement": "near"})", {"numa_placement = \"near\"", "\"gpu_local\""}},
      {R"({"tuned_on": 7})", {"tuned_on = 7", "object"}},
      {R"({"overflow": "sometimes"})", {"overflow = \"sometimes\"", "\"always\""}},
      {R"({"overflow": 2})", {"overflow = 2", "one of"}},
      {R"({"overflow_margin": 1})", {"overflow_margin = 1", "[0, 1)"}},
      {R"({"overflow_margin": -0.1})", {"overflow_margin = -0.1", "[0, 1)"}},
      {R"({"overflow_margin": "0.1"})", {"overflow_margin = \"0.1\""}},
      {R"({"overflow_cpu_gbps": -3})", {"overflow_cpu_gbps = -3", "≥ 0.001"}},
      {R"({"overflow_h2d_gbps": 0.0005})", {"overflow_h2d_gbps = 0.0005", "0 (the default) or ≥ 0.001"}},
      {R"({"overflow_window_gbps": null})", {"overflow_window_gbps = null", "GB/s"}},
      {R"({"overflow_gbps": 3})", {"unknown key \"overflow_gbps\"", "overflow_margin"}},
      {R"({"thread": 4})", {"unknown key \"thread\"", "threads_per_node"}},
      {R"({"window_blocks": 4})", {"unknown key \"window_blocks\""}},
      {R"([1, 2])", {"expected an object"}},
      {R"({"threads": 4,})", {"not valid JSON"}},
      {R"({"threads": 1, "threads": 2})", {"key \"threads\" is given twice"}},
      {R"({"dram_read_gbps": 20.5, "best_config": {"threads": 2}})", {"hgca-tune's --json report", "\"best_config\""}},
  };
  for (const BadCase& c : cases) {
    const TempFile f(c.json);
    Options o = model();
    const Options before = o;
    const Status s = load_options_json(f.path(), &o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(s.message(), HasSubstr(f.path())) << c.json;
    for (const auto& part : c.parts) EXPECT_THAT(s.message(), HasSubstr(part)) << c.json;
    // All or nothing.
    EXPECT_EQ(o.threads, before.threads);
    EXPECT_EQ(o.max_packed_heads, before.max_packed_heads);
  }
  // Values nested deep are refused as the file is read (printing or copying them recursed once per
  // level: 200000 levels ended the process), valid JSON or not, in a field or in tuned_on; a long
  // value is cut in the message.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  for (const std::string& text : {R"({"threads": )" + deep + "}", R"({"tuned_on": {"nodes": )" + deep + "}}"}) {
    const TempFile f(text);
    Options o = model();
    const Status s = load_options_json(f.path(), &o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("values nested more than 64 deep"));
  }
  std::string long_list = R"({"kv_split_tokens": [0)";
  for (int i = 1; i < 10000; ++i) long_list += fmt::format(",{}", i);
  const TempFile long_value(long_list + "]}");
  Options lo = model();
  const Status cut = load_options_json(long_value.path(), &lo);
  EXPECT_THAT(cut.message(), HasSubstr("kv_split_tokens = [0,1,2,3,"));
  EXPECT_THAT(cut.message(), HasSubstr("..., expected an integer"));
  EXPECT_LT(cut.message().size(), 400u);

  // A good field before a bad one is not applied either.
  const TempFile partial(R"({"threads": 5, "max_packed_heads": -1})");
  Options o = model();
  EXPECT_FALSE(load_options_json(partial.path(), &o).is_ok());
  EXPECT_EQ(o.threads, 0);

  const Status missing = load_options_json("/nonexistent/hgca.json", &o);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("/nonexistent/hgca.json"));
  EXPECT_THAT(missing.message(), HasSubstr("No such file or directory"));
  EXPECT_EQ(load_options_json(partial.path(), nullptr).code(), StatusCode::kInvalidArgument);

  // A directory is named as such (it opened, and the read threw), through the C++ API and the C ABI
  // alike.
  const std::string dir = std::filesystem::temp_directory_path().string();
  const Status unreadable = load_options_json(dir, &o);
  EXPECT_EQ(unreadable.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(unreadable.message(), HasSubstr("is a directory, expected a JSON file"));
  hgca_options c;
  hgca_options_default(&c);
  EXPECT_EQ(hgca_load_options_json(dir.c_str(), &c), HGCA_INVALID_ARGUMENT);
  EXPECT_THAT(hgca_last_error(), HasSubstr(dir));
}

TEST(OptionsJson, RuntimeValidatesTheNewFields) {
  std::unique_ptr<Runtime> rt;
  Options o = model();
  o.kv_split_tokens = -1;
  Status s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kv_split_tokens = -1"));
  o = model();
  o.isa = static_cast<CpuIsa>(9);
  s = Runtime::create(o, &rt);
  EXPECT_THAT(s.message(), HasSubstr("isa = 9"));
  o = model();
  o.numa_placement = static_cast<NumaPlacement>(-1);
  s = Runtime::create(o, &rt);
  EXPECT_THAT(s.message(), HasSubstr("numa_placement = -1"));
  o = model();
  o.threads_per_node = -3;
  s = Runtime::create(o, &rt);
  EXPECT_THAT(s.message(), HasSubstr("threads_per_node = -3"));
  o = model();
  o.max_packed_heads = -2;
  s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("max_packed_heads = -2"));
  o = model();
  o.overflow = static_cast<OverflowMode>(3);
  s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("overflow = 3"));
  o = model();
  o.overflow_margin = 1.0;
  s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("overflow_margin = 1"));
  o = model();
  o.overflow_h2d_gbps = std::nan("");
  s = Runtime::create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("overflow_h2d_gbps = nan"));
  o = model();
  o.overflow_gpu_gbps = -1.0;
  s = Runtime::create(o, &rt);
  EXPECT_THAT(s.message(), HasSubstr("overflow_gpu_gbps = -1"));
  // The host backend ignores the policy, but its options are still checked; valid ones create.
  o = model();
  o.overflow = OverflowMode::kAlways;
  o.overflow_margin = 0.5;
  o.overflow_cpu_gbps = 20.0;
  s = Runtime::create(o, &rt);
  EXPECT_TRUE(s.is_ok()) << s.message();
}

/// Sets HGCA_CONFIG for one scope.
class ScopedConfigEnv {
 public:
  explicit ScopedConfigEnv(const std::string& path) { setenv("HGCA_CONFIG", path.c_str(), 1); }
  ~ScopedConfigEnv() { unsetenv("HGCA_CONFIG"); }
};

// A file tuned on another machine may set an ISA path this CPU lacks: create names the file.
TEST(OptionsJson, AnIsaPathHgcaConfigSetsThatTheCpuLacksIsNamedWithIt) {
  const TempFile f(R"({"isa": "avx512"})");
  Machine m;
  ASSERT_TRUE(Machine::current(&m).is_ok());
  m.isas = {CpuIsa::kAvx2, CpuIsa::kPortable};  // a CPU without AVX-512
  const ScopedConfigEnv env(f.path());
  std::unique_ptr<Runtime> rt;
  Status s = create_runtime_with_config(model(), m, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("create: HGCA_CONFIG = \"" + f.path() + "\" sets isa = avx512: this CPU cannot run"));
  EXPECT_FALSE(rt);
  Options o = model();
  o.isa = CpuIsa::kAvx512;  // asked in code too: the caller's
  s = create_runtime_with_config(o, m, &rt);
  EXPECT_THAT(s.message(), HasSubstr("create: isa = avx512: this CPU cannot run"));
  o.isa = CpuIsa::kAvx2;
  const TempFile portable(R"({"isa": "portable"})");
  const ScopedConfigEnv env2(portable.path());
  EXPECT_TRUE(create_runtime_with_config(o, m, &rt).is_ok());  // a path it runs
}

TEST(OptionsJson, HgcaConfigIsAppliedByCreate) {
  const TempFile f(R"({"threads": 1, "max_packed_heads": 2, "kv_split_tokens": 512, "isa": "portable"})");
  Options o = model();
  o.threads = 2;  // set in code: HGCA_CONFIG overrides it
  {
    const ScopedConfigEnv env(f.path());
    std::unique_ptr<Runtime> rt;
    const Status s = Runtime::create(o, &rt);
    ASSERT_TRUE(s.is_ok()) << s.message();
    EXPECT_EQ(rt->options().threads, 1);
    EXPECT_EQ(rt->options().max_packed_heads, 2);
    EXPECT_EQ(rt->options().kv_split_tokens, 512);
    EXPECT_EQ(rt->options().isa, CpuIsa::kPortable);
    EXPECT_EQ(rt->options().n_kv_heads, 4);

    // The C ABI's create applies it too.
    hgca_options c;
    hgca_options_default(&c);
    c.n_layers = 2;
    c.n_q_heads = 8;
    c.n_kv_heads = 4;
    c.head_dim = 16;
    hgca_runtime* crt = nullptr;
    ASSERT_EQ(hgca_create(&c, &crt), HGCA_OK) << hgca_last_error();
    hgca_options in_effect;
    ASSERT_EQ(hgca_get_options(crt, &in_effect), HGCA_OK) << hgca_last_error();
    EXPECT_EQ(in_effect.threads, 1);
    EXPECT_EQ(in_effect.max_packed_heads, 2);
    EXPECT_EQ(in_effect.kv_split_tokens, 512);
    EXPECT_EQ(in_effect.isa, HGCA_ISA_PORTABLE);
    EXPECT_EQ(in_effect.n_kv_heads, 4);
    hgca_destroy(crt);
  }
  {
    // Empty means unset.
    const ScopedConfigEnv env("");
    std::unique_ptr<Runtime> rt;
    ASSERT_TRUE(Runtime::create(o, &rt).is_ok());
    EXPECT_EQ(rt->options().threads, 2);
  }
  {
    // A bad file fails create and says where the file came from.
    const TempFile bad(R"({"max_packed_heads": -1})");
    const ScopedConfigEnv env(bad.path());
    std::unique_ptr<Runtime> rt;
    const Status s = Runtime::create(o, &rt);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("HGCA_CONFIG"));
    EXPECT_THAT(s.message(), HasSubstr("max_packed_heads = -1"));
  }
  {
    // A file of an earlier hgca-tune (packing under the method's name) fails create, saying why.
    const TempFile old(R"({"heads_per_task": 2, "kv_split_tokens": 512})");
    const ScopedConfigEnv env(old.path());
    std::unique_ptr<Runtime> rt;
    const Status s = Runtime::create(o, &rt);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("HGCA_CONFIG"));
    EXPECT_THAT(s.message(), HasSubstr("max_packed_heads"));
  }
}

// A file measured on another machine loads, and says so on stderr (once); one that says this
// machine's nodes, cores and ISA path, or nothing of them, loads without a word.
TEST(OptionsJson, TunedElsewhereIsSaid) {
  Machine here;
  ASSERT_TRUE(Machine::current(&here));
  const int nodes = here.topology->node_count(), cores = here.topology->total_cores();
  const std::string isa = cpu::to_string(cpu::best_isa());
  const TempFile other(fmt::format(R"({{"threads": 3, "tuned_on": {{"nodes": {}, "cores": {}, "isa_auto_is": "{}"}}}})",
                                   nodes, cores + 1, isa));
  const TempFile same(fmt::format(R"({{"threads": 2, "tuned_on": {{"nodes": {}, "cores": {}, "isa_auto_is": "{}"}}}})",
                                  nodes, cores, isa));
  const TempFile unsaid(R"({"threads": 1, "tuned_on": {"tool": "hgca-tune", "cores": "many"}})");
  Options o;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(load_options_json(other.path(), &o));
  ASSERT_TRUE(load_options_json(other.path(), &o));
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(o.threads, 3);
  EXPECT_THAT(said, HasSubstr(fmt::format("hgca: options file \"{}\" was tuned on another machine ({} NUMA nodes, {} "
                                          "cores, ISA path {}; this one: {}, {}, {})",
                                          other.path(), nodes, cores + 1, isa, nodes, cores, isa)));
  EXPECT_EQ(said.find("tuned on"), said.rfind("tuned on")) << said;  // once
  for (const TempFile* f : {&same, &unsaid}) {
    ::testing::internal::CaptureStderr();
    ASSERT_TRUE(load_options_json(f->path(), &o));
    said = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(said, "") << f->path();
  }
  EXPECT_EQ(o.threads, 1);
}

TEST(OptionsJson, CAbiMirror) {
  const TempFile f(R"({"threads": 6, "threads_per_node": 3, "max_packed_heads": 2, "kv_split_tokens": 2048,
                       "isa": "avx512", "numa_placement": "balanced", "tuned_on": {"tool": "hgca-tune"}})");
  hgca_options c;
  hgca_options_default(&c);
  c.alpha = 0.3f;
  ASSERT_EQ(hgca_load_options_json(f.path().c_str(), &c), HGCA_OK) << hgca_last_error();
  EXPECT_EQ(c.threads, 6);
  EXPECT_EQ(c.threads_per_node, 3);
  EXPECT_EQ(c.max_packed_heads, 2);
  EXPECT_EQ(c.kv_split_tokens, 2048);
  EXPECT_EQ(c.isa, HGCA_ISA_AVX512);
  EXPECT_EQ(c.numa_placement, HGCA_NUMA_PLACEMENT_BALANCED);
  EXPECT_EQ(c.alpha, 0.3f);
  const TempFile policy(R"({"overflow": "off", "overflow_margin": 0.2, "overflow_cpu_gbps": 90.5,
                            "overflow_gpu_row_gbps": 700})");
  ASSERT_EQ(hgca_load_options_json(policy.path().c_str(), &c), HGCA_OK) << hgca_last_error();
  EXPECT_EQ(c.overflow, HGCA_OVERFLOW_OFF);
  EXPECT_EQ(c.overflow_margin, 0.2);
  EXPECT_EQ(c.overflow_cpu_gbps, 90.5);
  EXPECT_EQ(c.overflow_gpu_row_gbps, 700.0);
  EXPECT_EQ(c.overflow_h2d_gbps, 0.0);
  EXPECT_EQ(c.threads, 6);  // kept

  const TempFile bad(R"({"isa": "mmx"})");
  EXPECT_EQ(hgca_load_options_json(bad.path().c_str(), &c), HGCA_INVALID_ARGUMENT);
  EXPECT_THAT(hgca_last_error(), HasSubstr("isa = \"mmx\""));
  EXPECT_EQ(c.isa, HGCA_ISA_AVX512);  // unchanged
  EXPECT_EQ(hgca_load_options_json(nullptr, &c), HGCA_INVALID_ARGUMENT);
  EXPECT_THAT(hgca_last_error(), HasSubstr("path is null"));
  EXPECT_EQ(hgca_load_options_json(f.path().c_str(), nullptr), HGCA_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace hgca
