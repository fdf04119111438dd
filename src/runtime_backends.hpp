// The backends' factories (runtime.cpp picks one).
#pragma once

#include <memory>

#include "hgca/hgca.hpp"

namespace hgca {

std::unique_ptr<Runtime> make_host_runtime(const Options& options);
/// The CUDA backend; fails with kOutOfMemory when its device or pinned memory cannot be had.
Status make_cuda_runtime(const Options& options, std::unique_ptr<Runtime>* out);

}  // namespace hgca
