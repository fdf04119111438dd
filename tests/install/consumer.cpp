// hgca's C++ API from an installed hgca: a prefill through hgca::Runtime matches the fp64
// reference, and a refused option names itself.
#include <hgca/hgca.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "reference.h"

namespace {

int fail(const char* what, const hgca::Status& s) {
  std::fprintf(stderr, "consumer_cpp: %s: %s\n", what, s.message().c_str());
  return 1;
}

}  // namespace

int main() {
  hgca::Options o;
  o.n_layers = 1;
  o.n_q_heads = kHq;
  o.n_kv_heads = kHkv;
  o.head_dim = kD;
  o.dtype = hgca::DType::kFloat32;
  o.backend = hgca::Backend::kHost;
  o.threads = 1;
  std::unique_ptr<hgca::Runtime> rt;
  {
    hgca::Options bad = o;
    bad.head_dim = 12;
    const hgca::Status s = hgca::Runtime::create(bad, &rt);
    if (s.is_ok() || s.message().find("head_dim = 12") == std::string::npos) {
      std::fprintf(stderr, "consumer_cpp: head_dim = 12 was not refused by name: '%s'\n", s.message().c_str());
      return 1;
    }
  }
  if (hgca::Status s = hgca::Runtime::create(o, &rt); !s.is_ok()) return fail("Runtime::create", s);
  std::vector<float> q(kTokens * kHq * kD), k(kTokens * kHkv * kD), v(kTokens * kHkv * kD), out(q.size());
  fill_inputs(q.data(), k.data(), v.data());
  const hgca::SeqId id = 7;
  const int32_t n_new = kTokens;
  if (hgca::Status s = rt->add_sequence(id); !s.is_ok()) return fail("add_sequence", s);
  if (hgca::Status s = rt->begin_step({&id, 1}, {&n_new, 1}); !s.is_ok()) return fail("begin_step", s);
  const auto f32 = hgca::DType::kFloat32;
  const hgca::Status s = rt->attention(0, {q.data(), f32, {kTokens, kHq, kD}}, {k.data(), f32, {kTokens, kHkv, kD}},
                                       {v.data(), f32, {kTokens, kHkv, kD}}, {out.data(), f32, {kTokens, kHq, kD}});
  if (!s.is_ok()) return fail("attention", s);
  if (hgca::Status e = rt->end_step(); !e.is_ok()) return fail("end_step", e);
  if (check_outputs(q.data(), k.data(), v.data(), out.data()) != 0) return 1;
  std::printf("consumer_cpp: outputs match the fp64 reference\n");
  return 0;
}
