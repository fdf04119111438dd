// The probe that found what held FlashH2D below 50 GB/s at 16 KB (a one-off, kept with its results,
// not built by CMake): gather kernels with lean host sides on the BM_H2D workload (256 MB of 4/16/64
// KB blocks at random places of a 1 GiB pinned pool): A the shipped kernel (descriptors in the
// kernel parameters, 1360 spans a launch), B/C/D descriptors in device memory, one launch (B the
// same pieces, C each warp a contiguous range of the flattened bytes, D each block one), U the
// 16-byte loads in flight per lane, L2:256 the L2::256B prefetch hint; then the cost of a launch
// with a 32 KB parameter block against one with a pointer. The batch line builds its vectors inside
// the timed region (not a fair peer: BM_H2D/memcpy_batch is); "MISMATCH bulk" is expected (the
// check compares a gathered block, the bulk copy gathers none).
// Built with: nvcc -O3 -std=c++20 --expt-relaxed-constexpr -arch=sm_90 -o probe_h2d probe_h2d.cu
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("ERR %s: %s line %d\n", #x, cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)

constexpr size_t kPool = size_t{1} << 30, kMove = size_t{256} << 20;
constexpr int kThreads = 1024, kWarps = 32;

// ---------------- A: the current kernel (params, pieces, binary search) -------------
constexpr int kMaxSpans = 1360;
struct PSpan { const std::byte* src; std::byte* dst; uint32_t bytes; uint32_t first_piece; };
struct PLaunch { PSpan span[kMaxSpans]; int32_t count; int32_t pieces; int32_t piece_bytes; };

template <int U>
__device__ __forceinline__ void copy_words(const std::byte* src, std::byte* dst, int64_t n, int lane) {
  // src, dst 16-aligned, n multiple of 16 (experiment only)
  const auto* s = reinterpret_cast<const uint4*>(src);
  auto* d = reinterpret_cast<uint4*>(dst);
  const int64_t words = n / 16;
  for (int64_t base = 0; base < words; base += 32 * U) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { const int64_t w = base + u * 32 + lane; if (w < words) r[u] = s[w]; }
#pragma unroll
    for (int u = 0; u < U; ++u) { const int64_t w = base + u * 32 + lane; if (w < words) d[w] = r[u]; }
  }
}
__device__ __forceinline__ uint4 ld256(const uint4* p) {
  uint4 r;
  asm volatile("ld.global.nc.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}
template <int U>
__device__ __forceinline__ void copy_words256(const std::byte* src, std::byte* dst, int64_t n, int lane) {
  const auto* s = reinterpret_cast<const uint4*>(src);
  auto* d = reinterpret_cast<uint4*>(dst);
  const int64_t words = n / 16;
  for (int64_t base = 0; base < words; base += 32 * U) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) { const int64_t w = base + u * 32 + lane; if (w < words) r[u] = ld256(s + w); }
#pragma unroll
    for (int u = 0; u < U; ++u) { const int64_t w = base + u * 32 + lane; if (w < words) d[w] = r[u]; }
  }
}

__global__ void __launch_bounds__(kThreads, 1) k_params(const __grid_constant__ PLaunch l) {
  const int lane = threadIdx.x & 31;
  const int warps = gridDim.x * kWarps;
  for (int g = blockIdx.x * kWarps + threadIdx.x / 32; g < l.pieces; g += warps) {
    int lo = 0, hi = l.count - 1;
    while (lo < hi) { const int mid = (lo + hi + 1) / 2; if ((int)l.span[mid].first_piece <= g) lo = mid; else hi = mid - 1; }
    const PSpan& s = l.span[lo];
    const int64_t off = (int64_t)(g - (int)s.first_piece) * l.piece_bytes;
    const int64_t left = (int64_t)s.bytes - off;
    copy_words<8>(s.src + off, s.dst + off, left < l.piece_bytes ? left : l.piece_bytes, lane);
  }
}

// ---------------- device-resident list -------------
struct DSpan { const std::byte* src; std::byte* dst; int64_t bytes; int64_t start; };  // start: flattened offset

// B: pieces round-robin, binary search over the device list (one launch)
template <int U>
__global__ void __launch_bounds__(kThreads, 1) k_dev_pieces(const DSpan* sp, int count, const int64_t* first_piece, int64_t pieces, int piece_bytes) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = gridDim.x * kWarps;
  for (int64_t g = blockIdx.x * kWarps + threadIdx.x / 32; g < pieces; g += warps) {
    int lo = 0, hi = count - 1;
    while (lo < hi) { const int mid = (lo + hi + 1) / 2; if (__ldg(first_piece + mid) <= g) lo = mid; else hi = mid - 1; }
    const DSpan s = sp[lo];
    const int64_t off = (g - __ldg(first_piece + lo)) * piece_bytes;
    const int64_t left = s.bytes - off;
    copy_words<U>(s.src + off, s.dst + off, left < piece_bytes ? left : piece_bytes, lane);
  }
}

// C: each warp a contiguous range of the flattened bytes (multiple of 512 B), walking spans in order
template <int U, bool L256>
__global__ void __launch_bounds__(kThreads, 1) k_dev_range(const DSpan* sp, int count, int64_t total) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = gridDim.x * kWarps, w = blockIdx.x * kWarps + threadIdx.x / 32;
  const int64_t units = (total + 511) / 512;
  const int64_t lo = (units * w / warps) * 512, hi = std::min(total, (units * (w + 1) / warps) * 512);
  if (lo >= hi) return;
  int a = 0, b = count - 1;  // last span with start <= lo
  while (a < b) { const int mid = (a + b + 1) / 2; if (sp[mid].start <= lo) a = mid; else b = mid - 1; }
  for (int i = a; i < count; ++i) {
    const DSpan s = sp[i];
    if (s.start >= hi) break;
    const int64_t from = std::max(lo, s.start) - s.start, to = std::min(hi, s.start + s.bytes) - s.start;
    if (to <= from) continue;
    if (L256) copy_words256<U>(s.src + from, s.dst + from, to - from, lane);
    else copy_words<U>(s.src + from, s.dst + from, to - from, lane);
  }
}

// D: each block a contiguous range, its warps interleaved over it in U*512 B chunks (block streams)
template <int U>
__global__ void __launch_bounds__(kThreads, 1) k_dev_block(const DSpan* sp, int count, int64_t total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  constexpr int64_t kChunk = 512 * U;
  const int64_t chunks = (total + kChunk - 1) / kChunk;
  const int64_t c0 = chunks * blockIdx.x / gridDim.x, c1 = chunks * (blockIdx.x + 1) / gridDim.x;
  int a = 0;
  for (int64_t c = c0 + warp; c < c1; c += kWarps) {
    const int64_t lo = c * kChunk, hi = std::min(total, lo + kChunk);
    int b = count - 1;
    a = 0;
    while (a < b) { const int mid = (a + b + 1) / 2; if (sp[mid].start <= lo) a = mid; else b = mid - 1; }
    for (int i = a; i < count; ++i) {
      const DSpan s = sp[i];
      if (s.start >= hi) break;
      const int64_t from = std::max(lo, s.start) - s.start, to = std::min(hi, s.start + s.bytes) - s.start;
      if (to > from) copy_words<U>(s.src + from, s.dst + from, to - from, lane);
    }
  }
}

int main() {
  std::byte *pool = nullptr, *dst = nullptr;
  CK(cudaHostAlloc((void**)&pool, kPool, cudaHostAllocDefault));
  for (size_t i = 0; i < kPool; i += 8) { uint64_t x = i * 0x9E3779B97F4A7C15ull; memcpy(pool + i, &x, 8); }
  CK(cudaMalloc((void**)&dst, kMove));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const int kDraws = 4;
  printf("%-28s %6s %4s %8s\n", "variant", "blk_KB", "SMs", "GB/s");
  for (size_t block : {size_t{4096}, size_t{16384}, size_t{65536}}) {
    const size_t count = kMove / block;
    std::vector<std::vector<DSpan>> lists(kDraws);
    for (int d = 0; d < kDraws; ++d) {
      std::vector<size_t> slots(kPool / block);
      std::iota(slots.begin(), slots.end(), 0);
      std::shuffle(slots.begin(), slots.end(), std::mt19937_64(100 + d));
      for (size_t i = 0; i < count; ++i)
        lists[d].push_back({pool + slots[i] * block, dst + i * block, (int64_t)block, (int64_t)(i * block)});
    }
    DSpan *hlist = nullptr, *dlist = nullptr; int64_t *hfp = nullptr, *dfp = nullptr;
    CK(cudaHostAlloc((void**)&hlist, count * sizeof(DSpan) * kDraws, 0));
    CK(cudaMalloc((void**)&dlist, count * sizeof(DSpan) * kDraws));
    CK(cudaHostAlloc((void**)&hfp, count * 8 * kDraws, 0));
    CK(cudaMalloc((void**)&dfp, count * 8 * kDraws));
    for (int d = 0; d < kDraws; ++d) {
      memcpy(hlist + d * count, lists[d].data(), count * sizeof(DSpan));
      for (size_t i = 0; i < count; ++i) hfp[d * count + i] = (int64_t)(i * std::max<size_t>(1, block / 16384));
    }
    auto run = [&](const char* name, int sms, auto&& gather) {
      gather(0); CK(cudaStreamSynchronize(s)); CK(cudaGetLastError());
      std::vector<float> ms;
      for (int it = 0; it < 10; ++it) {
        const int d = 1 + it % (kDraws - 1);
        CK(cudaEventRecord(e0, s)); gather(d); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
        float m; CK(cudaEventElapsedTime(&m, e0, e1)); ms.push_back(m);
      }
      CK(cudaGetLastError());
      std::sort(ms.begin(), ms.end());
      printf("%-28s %6zu %4d %8.2f\n", name, block >> 10, sms, kMove / (ms[ms.size() / 2] * 1e-3) / 1e9);
      // check one draw's bytes
      std::vector<std::byte> got(block);
      CK(cudaMemcpy(got.data(), dst + (count / 3) * block, block, cudaMemcpyDeviceToHost));
      if (memcmp(got.data(), lists[(1 + 9 % (kDraws - 1))][count / 3].src, block) != 0) printf("  MISMATCH %s\n", name);
    };
    auto up = [&](int d) {  // the descriptor upload, as a real call would pay it
      CK(cudaMemcpyAsync(dlist + d * count, hlist + d * count, count * sizeof(DSpan), cudaMemcpyHostToDevice, s));
    };
    for (int sms : {2, 8}) {
      run("A params/pieces", sms, [&](int d) {
        static PLaunch l;
        l.count = 0; l.pieces = 0; l.piece_bytes = 16384;
        auto launch = [&] { if (l.count) k_params<<<std::min(sms, (l.pieces + 31) / 32), kThreads, 0, s>>>(l); l.count = 0; l.pieces = 0; };
        for (const DSpan& x : lists[d]) {
          const int p = (int)((x.bytes + 16383) / 16384);
          if (l.count == kMaxSpans) launch();
          l.span[l.count++] = {x.src, x.dst, (uint32_t)x.bytes, (uint32_t)l.pieces};
          l.pieces += p;
        }
        launch();
      });
      run("B dev/pieces U8", sms, [&](int d) {
        up(d);
        CK(cudaMemcpyAsync(dfp + d * count, hfp + d * count, count * 8, cudaMemcpyHostToDevice, s));
        const int64_t pieces = (int64_t)(count * std::max<size_t>(1, block / 16384));
        k_dev_pieces<8><<<sms, kThreads, 0, s>>>(dlist + d * count, (int)count, dfp + d * count, pieces, 16384);
      });
      run("C dev/warp-range U8", sms, [&](int d) { up(d); k_dev_range<8, false><<<sms, kThreads, 0, s>>>(dlist + d * count, (int)count, kMove); });
      run("C dev/warp-range U16", sms, [&](int d) { up(d); k_dev_range<16, false><<<sms, kThreads, 0, s>>>(dlist + d * count, (int)count, kMove); });
      run("C dev/warp-range U8 L2:256", sms, [&](int d) { up(d); k_dev_range<8, true><<<sms, kThreads, 0, s>>>(dlist + d * count, (int)count, kMove); });
      run("D dev/block-range U8", sms, [&](int d) { up(d); k_dev_block<8><<<sms, kThreads, 0, s>>>(dlist + d * count, (int)count, kMove); });
    }
    run("C dev/warp-range U8", 4, [&](int d) { up(d); k_dev_range<8, false><<<4, kThreads, 0, s>>>(dlist + d * count, (int)count, kMove); });
    run("C dev/warp-range U8", 16, [&](int d) { up(d); k_dev_range<8, false><<<16, kThreads, 0, s>>>(dlist + d * count, (int)count, kMove); });
    run("memcpy2D-free batch", 0, [&](int d) {
      std::vector<void*> ds(count); std::vector<const void*> ss(count); std::vector<size_t> sz(count, block);
      for (size_t i = 0; i < count; ++i) { ds[i] = lists[d][i].dst; ss[i] = lists[d][i].src; }
      cudaMemcpyAttributes attr{}; attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream; size_t ai = 0;
      for (size_t i = 0; i < count; i += 4096) {
        const size_t n = std::min<size_t>(4096, count - i);
        CK(cudaMemcpyBatchAsync(ds.data() + i, ss.data() + i, sz.data() + i, n, &attr, &ai, 1, s));
      }
    });
    run("bulk contiguous memcpy", 0, [&](int) { CK(cudaMemcpyAsync(dst, pool, kMove, cudaMemcpyHostToDevice, s)); });
    cudaFreeHost(hlist); cudaFree(dlist); cudaFreeHost(hfp); cudaFree(dfp);
  }
  // launch-cost probe: empty-ish launches with a 32 KB param vs a pointer, back to back
  {
    static PLaunch l; l.count = 1; l.pieces = 0; l.piece_bytes = 16384;
    for (int rep = 0; rep < 2; ++rep) {
      CK(cudaEventRecord(e0, s));
      for (int i = 0; i < 100; ++i) k_params<<<8, kThreads, 0, s>>>(l);
      CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      float m; CK(cudaEventElapsedTime(&m, e0, e1));
      if (rep) printf("probe: 100 empty launches with 32 KB params: %.1f us each\n", m * 10);
      CK(cudaEventRecord(e0, s));
      for (int i = 0; i < 100; ++i) k_dev_range<8, false><<<8, kThreads, 0, s>>>(nullptr, 0, 0);
      CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
      CK(cudaEventElapsedTime(&m, e0, e1));
      if (rep) printf("probe: 100 empty launches with a pointer param: %.1f us each\n", m * 10);
    }
  }
  return 0;
}
