// The backend a test program exercises: hgca_tests and hgca_model_tests build their sources for
// the host backend, hgca_gpu_tests and hgca_gpu_model_tests the same sources for CUDA.
#pragma once

#include "hgca/hgca.hpp"

#ifndef HGCA_TEST_BACKEND
#define HGCA_TEST_BACKEND 1  // Backend::kHost
#endif

namespace hgca::test {

constexpr Backend kBackend = static_cast<Backend>(HGCA_TEST_BACKEND);

}  // namespace hgca::test
