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
# static dependencies. The prefix is the one installed to (`--prefix` included), so that pkg-config
# recognises /usr's directories as the system's: the file is written at install time, straight to
# its place (the build tree may be another user's or read-only by then).
set(HGCA_PC_REQUIRES "")
set(HGCA_PC_LIBS "")
if(HGCA_STATIC)
  set(HGCA_PC_REQUIRES "tbb hwloc fmt")
  set(HGCA_PC_LIBS "-ltbbmalloc -lstdc++ -lm")
  if(HGCA_WITH_CUDA)
    string(APPEND HGCA_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
  endif()
endif()
foreach(dir LIBDIR INCLUDEDIR)  # relative to the prefix unless given absolute
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(HGCA_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(HGCA_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(HGCA_PC_PREFIX "@CMAKE_INSTALL_PREFIX@")  # for the second configure_file, at install time
configure_file(cmake/hgca.pc.in ${PROJECT_BINARY_DIR}/hgca.pc.in @ONLY)
install(CODE "
  set(hgca_pc \"${CMAKE_INSTALL_LIBDIR}/pkgconfig/hgca.pc\")
  cmake_path(ABSOLUTE_PATH hgca_pc BASE_DIRECTORY \"\${CMAKE_INSTALL_PREFIX}\")
  set(hgca_pc \"\$ENV{DESTDIR}\${hgca_pc}\")
  message(STATUS \"Installing: \${hgca_pc}\")
  configure_file(\"${PROJECT_BINARY_DIR}/hgca.pc.in\" \"\${hgca_pc}\" @ONLY)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${hgca_pc}\")" COMPONENT library)

foreach(tool hgca-decode hgca-tune)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
    # The installed tools find the installed libhgca.so from their own place, wherever the prefix
    # is (a distribution's package, installing to the system's directories, passes
    # -DCMAKE_SKIP_INSTALL_RPATH=ON).
    if(NOT HGCA_STATIC)
      file(RELATIVE_PATH _hgca_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
      set_target_properties(${tool} PROPERTIES INSTALL_RPATH "$ORIGIN/${_hgca_bin_to_lib}")
    endif()
  endif()
endforeach()
