# CTest's install.find_package: installs the build at BUILD_DIR into WORK/prefix, then configures,
# builds and runs this directory's consumer project against it, as a user's project would find
# hgca (find_package(hgca), hgca::hgca); the installed tools must report this version.
foreach(var BUILD_DIR WORK SOURCE_DIR GENERATOR VERSION)
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

file(REMOVE_RECURSE ${WORK})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK}/build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${WORK}/prefix)
run(${CMAKE_COMMAND} --build ${WORK}/build)
run(${WORK}/build/consumer_c)
run(${WORK}/build/consumer_cpp)
run(${WORK}/build/consumer_cpp cuda SKIP_OK)
foreach(tool hgca-decode hgca-tune)
  if(EXISTS ${WORK}/prefix/bin/${tool})
    run(${WORK}/prefix/bin/${tool} --version)
    if(NOT output MATCHES "^${tool} ${VERSION}\n$")
      message(FATAL_ERROR "check_install.cmake: ${tool} --version printed '${output}', expected '${tool} ${VERSION}'")
    endif()
  endif()
endforeach()
