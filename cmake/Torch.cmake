# Finds the installed PyTorch for csrc/ and its tests: Torch_DIR if given, else the torch that
# the Python interpreter imports.
if(NOT Torch_DIR)
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
  list(APPEND CMAKE_PREFIX_PATH ${_tb_torch_prefix})
endif()
find_package(Torch REQUIRED)
