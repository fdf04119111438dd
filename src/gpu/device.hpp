// What the CUDA runtime can see, for choosing a backend (host-only declaration).
#pragma once

namespace hgca::gpu {

/// Number of usable CUDA devices: 0 when the driver or runtime fails or there is none.
int usable_device_count();

}  // namespace hgca::gpu
