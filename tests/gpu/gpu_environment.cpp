// Every test of a GPU test program skips, with the reason, where no usable CUDA device exists.
#include <gtest/gtest.h>

#include "hgca/hgca.hpp"

namespace {

class GpuEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (hgca::cuda_device_count() == 0) {
      GTEST_SKIP() << "no usable CUDA device (cudaGetDeviceCount failed or returned 0): GPU tests skipped";
    }
  }
};

[[maybe_unused]] ::testing::Environment* const kGpuEnvironment =
    ::testing::AddGlobalTestEnvironment(new GpuEnvironment);

}  // namespace
