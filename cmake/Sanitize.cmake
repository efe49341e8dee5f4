# TORCH_BACKEND_SANITIZE: build every target of this project with the given sanitizers, e.g.
#   -DTORCH_BACKEND_SANITIZE="address;undefined"   (make test-sanitize, build/asan)
#   -DTORCH_BACKEND_SANITIZE=thread                (make test-tsan, build/tsan)
# Empty (the default) builds as usual.  libtorch, CPython, OpenBLAS and googletest come
# prebuilt and stay uninstrumented.  Undefined behaviour stops the program at its first report
# (-fno-sanitize-recover), as address and thread errors do, so a finding fails its test.
set(TORCH_BACKEND_SANITIZE
    ""
    CACHE STRING "Sanitizers to build with: a list of address, undefined, leak, thread (empty: none)")

set(TB_SANITIZE_FLAGS "") # what every compile and link gets; also handed to nested builds
set(TB_SANITIZE_WARNING_FLAGS "") # added to tb_warnings
if(TORCH_BACKEND_SANITIZE)
  foreach(_tb_sanitizer IN LISTS TORCH_BACKEND_SANITIZE)
    if(NOT _tb_sanitizer MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "TORCH_BACKEND_SANITIZE: unknown sanitizer '${_tb_sanitizer}' "
                          "(known: address, undefined, leak, thread)")
    endif()
  endforeach()
  if("thread" IN_LIST TORCH_BACKEND_SANITIZE
     AND ("address" IN_LIST TORCH_BACKEND_SANITIZE OR "leak" IN_LIST TORCH_BACKEND_SANITIZE))
    message(FATAL_ERROR "TORCH_BACKEND_SANITIZE: thread cannot be combined with address or leak "
                        "(one build per runtime: address;undefined, or thread)")
  endif()
  list(JOIN TORCH_BACKEND_SANITIZE "," _tb_sanitizers)
  list(APPEND TB_SANITIZE_FLAGS -fsanitize=${_tb_sanitizers} -fno-omit-frame-pointer)
  if("undefined" IN_LIST TORCH_BACKEND_SANITIZE)
    list(APPEND TB_SANITIZE_FLAGS -fno-sanitize-recover=undefined)
  endif()
  # GCC's manual: "sanitizers tend to increase the rate of false positive warnings, most
  # notably those around -Wmaybe-uninitialized" (GCC 12 reports std::optional<at::Generator>
  # copies in csrc/aten/Random.cpp).  The default build keeps that warning an error.
  set(TB_SANITIZE_WARNING_FLAGS -Wno-maybe-uninitialized)
  add_compile_options(${TB_SANITIZE_FLAGS})
  add_link_options(${TB_SANITIZE_FLAGS})
  message(STATUS "torch_backend: sanitizers ${_tb_sanitizers}")
endif()
