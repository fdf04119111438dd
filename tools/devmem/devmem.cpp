// devmem over the CUDA runtime; in a build without CUDA every call fails with kUnsupported (the
// callers choose the CUDA backend only when hgca::built_with_cuda() says it exists).
#include "devmem/devmem.hpp"

#include <fmt/format.h>

#include <utility>

#ifdef HGCA_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace hgca::devmem {
namespace {

#ifdef HGCA_WITH_CUDA
Status check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  cudaGetLastError();
  return {e == cudaErrorMemoryAllocation ? StatusCode::kOutOfMemory : StatusCode::kInternal,
          fmt::format("{}: {}", what, cudaGetErrorString(e))};
}
#define HGCA_DEVMEM(expr) check((expr), #expr)
cudaStream_t cuda(const Stream& s) { return static_cast<cudaStream_t>(s.get()); }
#else
Status no_cuda() { return {StatusCode::kUnsupported, "this build has no CUDA"}; }
#define HGCA_DEVMEM(expr) no_cuda()
#endif

}  // namespace

Status set_host_wait(HostWait wait) {
#ifdef HGCA_WITH_CUDA
  const unsigned flag = wait == HostWait::kSpin    ? cudaDeviceScheduleSpin
                        : wait == HostWait::kYield ? cudaDeviceScheduleYield
                        : wait == HostWait::kBlocking ? cudaDeviceScheduleBlockingSync
                                                      : cudaDeviceScheduleAuto;
  return HGCA_DEVMEM(cudaSetDeviceFlags(flag));
#else
  (void)wait;
  return HGCA_DEVMEM();
#endif
}

Stream::~Stream() {
#ifdef HGCA_WITH_CUDA
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
#endif
}

Status Stream::create(Stream* out) {
#ifdef HGCA_WITH_CUDA
  cudaStream_t s = nullptr;
  if (Status st = HGCA_DEVMEM(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); !st) return st;
  out->stream_ = s;
  return Status::ok();
#else
  (void)out;
  return HGCA_DEVMEM();
#endif
}

Status Stream::synchronize() const {
  return HGCA_DEVMEM(cudaStreamSynchronize(cuda(*this)));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(ptr_, other.ptr_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
#ifdef HGCA_WITH_CUDA
  if (ptr_) cudaFree(ptr_);
#endif
}

Status DeviceBuffer::reserve(std::size_t bytes) {
  if (bytes <= bytes_ && ptr_) return Status::ok();
#ifdef HGCA_WITH_CUDA
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
  if (Status s = HGCA_DEVMEM(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes)); !s) return s;
  bytes_ = bytes;
  return Status::ok();
#else
  return HGCA_DEVMEM();
#endif
}

Status DeviceBuffer::upload([[maybe_unused]] const void* host, [[maybe_unused]] std::size_t bytes,
                            [[maybe_unused]] const Stream& stream) {  // unused without CUDA
  return HGCA_DEVMEM(cudaMemcpyAsync(ptr_, host, bytes, cudaMemcpyHostToDevice, cuda(stream)));
}

Status DeviceBuffer::download([[maybe_unused]] void* host, [[maybe_unused]] std::size_t bytes,
                              [[maybe_unused]] const Stream& stream) const {
  return HGCA_DEVMEM(cudaMemcpyAsync(host, ptr_, bytes, cudaMemcpyDeviceToHost, cuda(stream)));
}

Status DeviceBuffer::fill([[maybe_unused]] uint8_t value, [[maybe_unused]] std::size_t bytes,
                          [[maybe_unused]] const Stream& stream) {
  return HGCA_DEVMEM(cudaMemsetAsync(ptr_, value, bytes, cuda(stream)));
}

}  // namespace hgca::devmem
