# npu's kernel half, included by ../CMakeLists.txt: every C file of kernels/ (a new kernel file
# needs no edit here; its table goes into registry.c), over the aclnn operator libraries (the
# targets nnopbase and opapi: the stand-in's, or CANN's imported ones) and the C math library
# (attention.c's default softmax scale, 1 / sqrt(E)).
file(GLOB NPU_KERNEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.c)
set(NPU_KERNEL_LIBRARIES opapi nnopbase m)
