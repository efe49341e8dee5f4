# npu's kernel half, included by ../CMakeLists.txt: the kernels over the aclnn operator API and
# the operator libraries they link (the stand-in's targets, or CANN's libopapi/libnnopbase).
# Every C file of kernels/ (a new kernel file needs no edit here; its table goes into
# registry.c).
file(GLOB NPU_KERNEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
if(TARGET opapi)
  set(NPU_KERNEL_LIBRARIES opapi nnopbase)
else()
  find_library(NPU_OPAPI_LIBRARY opapi PATHS ${TORCH_BACKEND_ASCEND_HOME}/lib64 REQUIRED
               NO_DEFAULT_PATH)
  find_library(NPU_NNOPBASE_LIBRARY nnopbase PATHS ${TORCH_BACKEND_ASCEND_HOME}/lib64 REQUIRED
               NO_DEFAULT_PATH)
  set(NPU_KERNEL_LIBRARIES ${NPU_OPAPI_LIBRARY} ${NPU_NNOPBASE_LIBRARY})
endif()
