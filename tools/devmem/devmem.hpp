// Device memory and streams for hgca's tools and tests, without CUDA types in the header: the
// model runner, hgca-decode and the test harness hand the CUDA backend device pointers through it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hgca/hgca.hpp"

namespace hgca::devmem {

/// How a thread that waits for the current device (a stream's synchronize, and CUDA's own threads)
/// waits: CUDA's cudaDeviceSchedule{Auto, Spin, Yield, BlockingSync}. auto spins while there are no
/// more CUDA contexts than cores, so a waiting caller holds a core the CPU pool may need.
enum class HostWait { kAuto, kSpin, kYield, kBlocking };
/// Sets how threads wait for the current device; call before its context starts (before
/// Runtime::create), else CUDA may refuse.
Status set_host_wait(HostWait wait);

/// A CUDA stream (non-blocking) owned by the caller; get() is the cudaStream_t.
class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  static Status create(Stream* out);
  void* get() const { return stream_; }
  Status synchronize() const;

 private:
  void* stream_ = nullptr;
};

/// Device memory of a fixed size, freed on destruction. Copies are asynchronous on `stream` (host
/// memory may be pageable, which makes them synchronous in effect).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  /// Allocates (or re-allocates when too small) `bytes` of device memory.
  Status reserve(std::size_t bytes);
  void* get() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  Status upload(const void* host, std::size_t bytes, const Stream& stream);
  Status download(void* host, std::size_t bytes, const Stream& stream) const;
  /// Every byte set to `value` (to poison outputs in tests).
  Status fill(uint8_t value, std::size_t bytes, const Stream& stream);

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace hgca::devmem
