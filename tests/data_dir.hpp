// Where the tests find their data: the directory compiled in (the source tree's), or the one an
// environment variable names, for test programs run away from the tree (bundled to the GPU machine).
#pragma once

#include <cstdlib>
#include <string>

namespace hgca::test {

inline std::string data_dir(const char* env_var, const char* compiled) {
  const char* dir = std::getenv(env_var);
  return dir && *dir ? dir : compiled;
}

}  // namespace hgca::test
