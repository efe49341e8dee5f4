# Finds the installed PyTorch for csrc/ and its tests -- Torch_DIR if given, else the torch that
# the Python interpreter imports -- and defines tb_torch, the one target our code links for it:
#
#   - torch's CPU libraries only (torch_cpu, c10).  torch_backend never calls CUDA, so a CUDA
#     build of torch (the default wheel on PyPI) needs no CUDA toolkit here: see below.
#   - the C++ standard torch declares for code built against it (TorchConfig sets CXX_STANDARD
#     on its `torch` target, the standard torch.utils.cpp_extension passes as -std=), as a
#     compile feature, so that it reaches every target linking tb_torch and nothing else.
#   - torch's compile options (TORCH_CXX_FLAGS) and its headers as SYSTEM includes, so that
#     warnings inside them are not ours (-Werror stays on for our own code: tb_warnings).
#
# Records TORCH_BACKEND_TORCH_VERSION and TORCH_BACKEND_TORCH_CXX_STANDARD in the build's
# CMakeCache.txt (internal entries); make test-compat's table reads the standard from there.
# A Torch_DIR left in the cache by an earlier configure whose torch is gone (pip's isolated
# builds install torch in a temporary environment each time) is searched for again.
if(NOT Torch_DIR OR NOT EXISTS "${Torch_DIR}/TorchConfig.cmake")
  if(Torch_DIR)
    message(WARNING "Torch_DIR=${Torch_DIR} holds no TorchConfig.cmake: using the torch that "
                    "the Python interpreter imports instead")
  endif()
  unset(Torch_DIR CACHE)
  unset(Caffe2_DIR CACHE)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  # With autoload off: `import torch` would otherwise import an installed torch_backend (an
  # older or half-built one, say), and a broken one would keep this build from finding torch.
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env TORCH_DEVICE_BACKEND_AUTOLOAD=0 ${Python3_EXECUTABLE} -c
            "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _tb_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _tb_torch_result)
  if(NOT _tb_torch_result EQUAL 0)
    message(FATAL_ERROR "TORCH_BACKEND_WITH_TORCH=ON needs PyTorch importable by "
                        "${Python3_EXECUTABLE} (pip install torch==2.13.0), or -DTorch_DIR=...; "
                        "configure with -DTORCH_BACKEND_WITH_TORCH=OFF for the C part alone")
  endif()
  # First: scikit-build-core puts the interpreter's site-packages on CMAKE_PREFIX_PATH, which in
  # pip's isolated build is not where the build environment's torch is.
  list(PREPEND CMAKE_PREFIX_PATH ${_tb_torch_prefix})
endif()

# A CUDA build of torch makes find_package(Torch) look for a CUDA toolkit (Caffe2's
# public/cuda.cmake: FindCUDA, enable_language(CUDA), a try_run against cuda.h) and stop
# without one.  That file begins with an include guard on the target torch::cudart; defining
# it beforehand as an empty interface skips the detection altogether, so the build neither needs
# nor picks up an nvcc that happens to be installed.  What it would have defined (CUDA::*,
# caffe2::cuda, ...) only feeds torch_cuda, which tb_torch does not link.  A CPU build of torch
# never reads the file, so the stand-in is inert there.
if(NOT TARGET torch::cudart)
  add_library(torch::cudart INTERFACE IMPORTED)
endif()
find_package(Torch REQUIRED)

# torch's package version (Caffe2Config leaves it to TorchConfigVersion.cmake), and its release
# (major.minor): the runtime built against it lives in lib/torch-<release>/.
set(TORCH_BACKEND_TORCH_VERSION "${Torch_VERSION}" CACHE INTERNAL "torch version csrc builds against")
string(REGEX MATCH "^[0-9]+\\.[0-9]+" TORCH_BACKEND_TORCH_RELEASE "${Torch_VERSION}")
if(NOT TORCH_BACKEND_TORCH_RELEASE)
  message(FATAL_ERROR "torch_backend: cannot tell the release of torch version '${Torch_VERSION}'")
endif()

# The standard torch was built with and asks of extensions.  Releases say it differently: up to
# 2.14 TorchConfig sets the CXX_STANDARD property of its `torch` target; 2.15 declares a compile
# feature instead (INTERFACE_COMPILE_FEATURES cxx_std_20), or, where the compiler reports no
# such feature, appends -std=c++20 to the target's INTERFACE_COMPILE_OPTIONS.  All three are
# read; a torch whose package says nothing (none we support) gets C++17, csrc's floor.
get_target_property(_tb_torch_std torch CXX_STANDARD)
if(NOT _tb_torch_std)
  get_target_property(_tb_torch_declared torch INTERFACE_COMPILE_FEATURES)
  get_target_property(_tb_torch_options torch INTERFACE_COMPILE_OPTIONS)
  set(_tb_torch_std 0)
  foreach(_tb_item IN LISTS _tb_torch_declared _tb_torch_options)
    string(REGEX MATCH "(^cxx_std_|[-/]std:?=?c\\+\\+)([0-9]+)" _tb_match "${_tb_item}")
    if(_tb_match AND CMAKE_MATCH_2 GREATER _tb_torch_std)
      set(_tb_torch_std ${CMAKE_MATCH_2})
    endif()
  endforeach()
endif()
if(NOT _tb_torch_std OR _tb_torch_std LESS 17)
  set(_tb_torch_std 17)
endif()
set(TORCH_BACKEND_TORCH_CXX_STANDARD "${_tb_torch_std}"
    CACHE INTERNAL "C++ standard csrc builds with (torch's)")

add_library(tb_torch INTERFACE)
# torch_cpu_library is Caffe2's link interface for libtorch_cpu (it adds c10 and torch_cpu's own
# dependencies); libtorch.so and libtorch_cuda.so stay out of our link lines.
target_link_libraries(tb_torch INTERFACE torch_cpu_library c10)
target_include_directories(tb_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
target_compile_options(tb_torch INTERFACE ${TORCH_CXX_FLAGS})
target_compile_features(tb_torch INTERFACE cxx_std_${_tb_torch_std})

if(TARGET torch_cuda)
  set(_tb_torch_kind "a CUDA build; linking its CPU libraries only")
else()
  set(_tb_torch_kind "a CPU build")
endif()
message(STATUS "torch_backend: torch ${Torch_VERSION} (${_tb_torch_kind}), C++${_tb_torch_std}")
