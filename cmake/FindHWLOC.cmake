# Finds hwloc through pkg-config (Debian's libhwloc-dev ships no CMake package) as HWLOC::hwloc.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_HWLOC QUIET hwloc)
endif()
find_path(HWLOC_INCLUDE_DIR hwloc.h HINTS ${PC_HWLOC_INCLUDE_DIRS})
find_library(HWLOC_LIBRARY hwloc HINTS ${PC_HWLOC_LIBRARY_DIRS})
set(HWLOC_VERSION ${PC_HWLOC_VERSION})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(HWLOC NAME_MISMATCHED REQUIRED_VARS HWLOC_LIBRARY HWLOC_INCLUDE_DIR
                                  VERSION_VAR HWLOC_VERSION)
if(HWLOC_FOUND AND NOT TARGET HWLOC::hwloc)
  add_library(HWLOC::hwloc UNKNOWN IMPORTED)
  set_target_properties(HWLOC::hwloc PROPERTIES IMPORTED_LOCATION "${HWLOC_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${HWLOC_INCLUDE_DIR}")
endif()
mark_as_advanced(HWLOC_INCLUDE_DIR HWLOC_LIBRARY)
