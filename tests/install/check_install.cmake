# CTest's install.find_package: installs the build at BUILD_DIR into WORK/prefix, then configures,
# builds and runs this directory's consumer project against it with hgca's own compilers, as a
# user's project would find hgca (find_package(hgca), hgca::hgca), and the C program through
# pkg-config; the installed tools must report this version.
foreach(var BUILD_DIR WORK SOURCE_DIR GENERATOR VERSION LIBDIR BINDIR C_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_install.cmake: -D${var}=… is required")
  endif()
endforeach()

# Runs a command; fails the test unless it exits 0 (or 77, "skipped", with SKIP_OK).
function(run)
  cmake_parse_arguments(ARG "SKIP_OK" "" "" ${ARGN})
  execute_process(COMMAND ${ARG_UNPARSED_ARGUMENTS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "+ ${ARG_UNPARSED_ARGUMENTS}\n${out}")
  if(NOT rc EQUAL 0 AND NOT (ARG_SKIP_OK AND rc EQUAL 77))
    message(FATAL_ERROR "check_install.cmake: exit status ${rc}: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# hgca's dependencies are found where hgca's build found them (PREFIX_PATH), then hgca in prefix.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK}/build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_PREFIX_PATH=${prefix};${PREFIX_PATH}")
run(${CMAKE_COMMAND} --build ${WORK}/build)
run(${WORK}/build/consumer_c)
run(${WORK}/build/consumer_cpp)
run(${WORK}/build/consumer_cpp cuda SKIP_OK)

# The C program again, compiled and linked by the C compiler alone with pkg-config's flags
# (pkg-config is one of scripts/install-deps.sh's packages).
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
run(${PKG_CONFIG} --cflags --libs hgca)
separate_arguments(flags UNIX_COMMAND "${output}")
run(${C_COMPILER} -std=c11 ${SOURCE_DIR}/consumer.c -o ${WORK}/build/consumer_c_pkg_config ${flags} -lm)  # -lm: the reference
# A shared libhgca.so is not on the loader's path: named for this program only.
set(library_path ${prefix}/${LIBDIR})
if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT "$ENV{LD_LIBRARY_PATH}" STREQUAL "")
  string(APPEND library_path ":$ENV{LD_LIBRARY_PATH}")
endif()
run(${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${library_path}" ${WORK}/build/consumer_c_pkg_config)

foreach(tool hgca-decode hgca-tune)
  if(EXISTS ${BUILD_DIR}/tools/${tool}/${tool})  # built, so installed
    run(${prefix}/${BINDIR}/${tool} --version)
    if(NOT output MATCHES "^${tool} ${VERSION}\n$")
      message(FATAL_ERROR "check_install.cmake: ${tool} --version printed '${output}', expected '${tool} ${VERSION}'")
    endif()
  endif()
endforeach()
