// An error Status with a formatted message: the one helper the library builds its errors with.
#pragma once

#include <fmt/format.h>

#include <utility>

#include "hgca/hgca.hpp"

namespace hgca {

template <typename... Args>
Status error(StatusCode code, fmt::format_string<Args...> format, Args&&... args) {
  return {code, fmt::format(format, std::forward<Args>(args)...)};
}

}  // namespace hgca
