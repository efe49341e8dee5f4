# The vendor libraries' promises, read off the binaries:
#   - every slot fake.h declares is a weak symbol in the fake vendor (so vendors can replace
#     any of them);
#   - no vendor library depends on libtorch, c10 or the C++ standard library.
#
# -DNM=path -DREADELF=path -DFAKE_HEADER=path -DFAKE_LIB=path -DVENDOR_LIBS="a.so;b.so"
file(READ ${FAKE_HEADER} header)
string(REGEX MATCHALL "[a-z_ *]+ \\*?(tbv_[a-z0-9_]+)\\(" declarations "${header}")
set(slots)
foreach(declaration IN LISTS declarations)
  string(REGEX REPLACE ".*(tbv_[a-z0-9_]+)\\($" "\\1" slot "${declaration}")
  list(APPEND slots ${slot})
endforeach()
list(LENGTH slots slot_count)
if(slot_count LESS 30)
  message(FATAL_ERROR "found only ${slot_count} tbv_ slots in ${FAKE_HEADER}")
endif()

execute_process(COMMAND ${NM} -D --defined-only ${FAKE_LIB} OUTPUT_VARIABLE symbols
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${FAKE_LIB}")
endif()
foreach(slot IN LISTS slots)
  if(NOT symbols MATCHES "[0-9a-f]+ W ${slot}\n")
    message(FATAL_ERROR "${slot} is not a weak symbol in ${FAKE_LIB}:\n${symbols}")
  endif()
endforeach()
message(STATUS "${slot_count} slots are weak in ${FAKE_LIB}")

foreach(lib IN LISTS VENDOR_LIBS)
  execute_process(COMMAND ${READELF} -d ${lib} OUTPUT_VARIABLE dynamic)
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
  if(needed MATCHES "torch|c10|stdc\\+\\+|c\\+\\+")
    message(FATAL_ERROR "${lib} depends on libtorch or C++ libraries: ${needed}")
  endif()
  execute_process(COMMAND ${NM} -D ${lib} OUTPUT_VARIABLE all_symbols)
  if(all_symbols MATCHES "_ZN3c10|_ZN2at|torch")
    message(FATAL_ERROR "${lib} references libtorch symbols")
  endif()
  message(STATUS "${lib}: ${needed}")
endforeach()
