# Install rules: the library, its headers, a CMake package (find_package(hgca) gives hgca::hgca)
# and a pkg-config file, and the tools. `cmake --install build/default --prefix <dir>`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HGCA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hgca)
install(TARGETS hgca EXPORT hgcaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT library
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/hgca DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT library)
install(EXPORT hgcaTargets NAMESPACE hgca:: DESTINATION ${HGCA_CMAKE_DIR} COMPONENT library)

# A static libhgca.a needs its private dependencies at the caller's link too: the package finds them.
get_target_property(_hgca_type hgca TYPE)
if(_hgca_type STREQUAL "STATIC_LIBRARY")
  set(HGCA_STATIC ON)
else()
  set(HGCA_STATIC OFF)
endif()
configure_package_config_file(cmake/hgcaConfig.cmake.in ${PROJECT_BINARY_DIR}/hgcaConfig.cmake
                              INSTALL_DESTINATION ${HGCA_CMAKE_DIR})
# Until 1.0 a new minor version may change the ABI (hgca.h).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hgcaConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hgcaConfig.cmake ${PROJECT_BINARY_DIR}/hgcaConfigVersion.cmake
              cmake/FindHWLOC.cmake
        DESTINATION ${HGCA_CMAKE_DIR} COMPONENT library)

# pkg-config for builds without CMake: `pkg-config --cflags --libs hgca`. A static libhgca.a lists
# what it links with (shared libraries) as its own requirements: --static would also ask for their
# static dependencies. The prefix is found from the file's own place, so the install may move.
file(RELATIVE_PATH HGCA_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" HGCA_PC_TO_PREFIX "${HGCA_PC_TO_PREFIX}")
set(HGCA_PC_REQUIRES "")
set(HGCA_PC_LIBS "")
if(HGCA_STATIC)
  set(HGCA_PC_REQUIRES "tbb hwloc fmt")
  set(HGCA_PC_LIBS "-ltbbmalloc -lstdc++ -lm")
  if(HGCA_WITH_CUDA)
    string(APPEND HGCA_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
  endif()
endif()
configure_file(cmake/hgca.pc.in ${PROJECT_BINARY_DIR}/hgca.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hgca.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT library)

foreach(tool hgca-decode hgca-tune)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
    if(NOT HGCA_STATIC)  # the installed tools find the installed libhgca.so
      set_target_properties(${tool} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    endif()
  endif()
endforeach()
