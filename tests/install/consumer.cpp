// hgca's C++ API from an installed hgca: a refused option names itself, and a prefill through
// hgca::Runtime matches the fp64 reference, on the host backend or (`consumer_cpp cuda`) on the
// CUDA backend, from a program nvcc never compiled. Exits 77 (skipped) where that cannot run.
#include <hgca/hgca.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if HGCA_CONSUMER_CUDA
#include <cuda_runtime.h>
#endif

#include "reference.h"

namespace {

constexpr int kSkipped = 77;

int fail(const char* what, const hgca::Status& s) {
  std::fprintf(stderr, "consumer_cpp: %s: %s\n", what, s.message().c_str());
  return 1;
}

/// The tensors of one call where the backend reads them: host memory, or device copies.
struct Buffers {
  float *q, *k, *v, *out;
};

int prefill(hgca::Backend backend, const Buffers& b) {
  hgca::Options o;
  o.n_layers = 1;
  o.n_q_heads = kHq;
  o.n_kv_heads = kHkv;
  o.head_dim = kD;
  o.dtype = hgca::DType::kFloat32;
  o.backend = backend;
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
  const hgca::SeqId id = 7;
  const int32_t n_new = kTokens;
  if (hgca::Status s = rt->add_sequence(id); !s.is_ok()) return fail("add_sequence", s);
  if (hgca::Status s = rt->begin_step({&id, 1}, {&n_new, 1}); !s.is_ok()) return fail("begin_step", s);
  const auto f32 = hgca::DType::kFloat32;
  const hgca::Status s = rt->attention(0, {b.q, f32, {kTokens, kHq, kD}}, {b.k, f32, {kTokens, kHkv, kD}},
                                       {b.v, f32, {kTokens, kHkv, kD}}, {b.out, f32, {kTokens, kHq, kD}});
  if (!s.is_ok()) return fail("attention", s);
  if (hgca::Status e = rt->end_step(); !e.is_ok()) return fail("end_step", e);
  if (hgca::Status e = rt->synchronize(); !e.is_ok()) return fail("synchronize", e);
  return 0;
}

#if HGCA_CONSUMER_CUDA
int cuda_failed(const char* what, cudaError_t e) {
  std::fprintf(stderr, "consumer_cpp: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

/// The prefill on the CUDA backend, the tensors copied to and from device memory.
int prefill_cuda(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                 std::vector<float>& out) {
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::printf("consumer_cpp: CUDA backend skipped: no usable GPU (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices");
    return kSkipped;
  }
  Buffers d{};
  const std::size_t sizes[] = {q.size(), k.size(), v.size(), out.size()};
  float** ptrs[] = {&d.q, &d.k, &d.v, &d.out};
  const float* from[] = {q.data(), k.data(), v.data()};
  int status = 0;
  for (int i = 0; i < 4 && status == 0; ++i) {
    if (cudaError_t e = cudaMalloc(ptrs[i], sizes[i] * sizeof(float)); e != cudaSuccess) status = cuda_failed("cudaMalloc", e);
    else if (i < 3) {
      if (cudaError_t c = cudaMemcpy(*ptrs[i], from[i], sizes[i] * sizeof(float), cudaMemcpyHostToDevice); c != cudaSuccess)
        status = cuda_failed("cudaMemcpy", c);
    }
  }
  if (status == 0) status = prefill(hgca::Backend::kCuda, d);
  if (status == 0) {
    if (cudaError_t e = cudaMemcpy(out.data(), d.out, out.size() * sizeof(float), cudaMemcpyDeviceToHost); e != cudaSuccess)
      status = cuda_failed("cudaMemcpy", e);
  }
  for (float** p : ptrs) cudaFree(*p);
  return status;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const bool cuda = argc > 1 && std::strcmp(argv[1], "cuda") == 0;
  std::vector<float> q(kTokens * kHq * kD), k(kTokens * kHkv * kD), v(kTokens * kHkv * kD), out(q.size());
  fill_inputs(q.data(), k.data(), v.data());
  int status = 0;
  if (!cuda) {
    status = prefill(hgca::Backend::kHost, {q.data(), k.data(), v.data(), out.data()});
  } else {
#if HGCA_CONSUMER_CUDA
    status = prefill_cuda(q, k, v, out);
#else
    std::printf("consumer_cpp: CUDA backend skipped: this hgca was built without it\n");
    status = kSkipped;
#endif
  }
  if (status != 0) return status;
  if (check_outputs(q.data(), k.data(), v.data(), out.data()) != 0) return 1;
  std::printf("consumer_cpp: %s backend: outputs match the fp64 reference\n", cuda ? "CUDA" : "host");
  return 0;
}
