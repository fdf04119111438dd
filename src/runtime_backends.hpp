// The backends' factories (runtime.cpp picks one).
#pragma once

#include <memory>

#include "hgca/hgca.hpp"

namespace hgca {

/// The host backend; fails when the store memory cannot be set up.
Status make_host_runtime(const Options& options, std::unique_ptr<Runtime>* out);
/// The CUDA backend; fails with kOutOfMemory when its device or pinned memory cannot be had.
Status make_cuda_runtime(const Options& options, std::unique_ptr<Runtime>* out);

}  // namespace hgca
