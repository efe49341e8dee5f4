# CTest driver for the out-of-tree vendor: install this build into a scratch prefix, configure
# and build test/out_of_tree/project against it with find_package(TorchBackend), then run that
# project's own CTest, which runs tb-conformance on the new vendor.
#
# Inputs (-D): TB_BUILD_DIR (this build tree), PROJECT_DIR, WORK_DIR; SANITIZE_FLAGS, the
# sanitizer flags of this build separated by spaces (cmake/Sanitize.cmake), which the vendor
# needs as well to link the instrumented porting kit; PYTHON, passed on to the project (a
# Python interpreter with torch_backend installed, for projects that test from Python).
foreach(var TB_BUILD_DIR PROJECT_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake needs -D${var}=...")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${result}): ${command}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${TB_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
file(GLOB_RECURSE config ${WORK_DIR}/prefix/*/TorchBackendConfig.cmake)
list(GET config 0 config)
get_filename_component(config_dir ${config} DIRECTORY)
set(sanitize_args)
if(SANITIZE_FLAGS)
  set(sanitize_args "-DCMAKE_C_FLAGS=${SANITIZE_FLAGS}" "-DCMAKE_SHARED_LINKER_FLAGS=${SANITIZE_FLAGS}")
endif()
set(python_args)
if(PYTHON)
  set(python_args "-DPYTHON=${PYTHON}")
endif()
run(${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build -DTorchBackend_DIR=${config_dir}
    -DCMAKE_BUILD_TYPE=Release ${sanitize_args} ${python_args})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure)
