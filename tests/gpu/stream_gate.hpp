// A kernel that holds a stream until the host opens a gate, to show that enqueueing work behind it
// does not block the calling thread.
#pragma once

namespace hgca::test {

class StreamGate {
 public:
  /// Enqueues the waiting kernel on `stream` (a cudaStream_t); it gives up after ~20 s.
  explicit StreamGate(void* stream);
  ~StreamGate();
  void open();
  /// Whether the kernel gave up waiting (only meaningful once the stream has passed it).
  bool timed_out() const;
  /// Whether the kernel holds the stream: its flags were allocated and it was launched (otherwise
  /// nothing holds the stream, and a test that relies on the gate proves nothing).
  bool holding() const { return holding_; }

 private:
  volatile int* flags_ = nullptr;  // [0] gate, [1] timed out; mapped pinned memory
  bool holding_ = false;
};

}  // namespace hgca::test
