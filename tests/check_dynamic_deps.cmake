# Fails when an executable names a forbidden library in its dynamic section.
#   cmake -D READELF=... -D FORBIDDEN=libcuda.so -D FILES="a;b" -P check_dynamic_deps.cmake
# dlc loads libcuda with dlopen (runtime/cuda_driver.cc): a NEEDED entry for it would stop
# every binary from starting on a machine without a GPU driver.
foreach(_file IN LISTS FILES)
  execute_process(COMMAND ${READELF} -d ${_file} OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${_file} failed (${_rc})")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" _needed "${_out}")
  foreach(_entry IN LISTS _needed)
    if(_entry MATCHES "${FORBIDDEN}")
      message(FATAL_ERROR "${_file} needs ${FORBIDDEN}: ${_entry}")
    endif()
  endforeach()
  list(LENGTH _needed _count)
  message(STATUS "${_file}: ${_count} NEEDED entries, none is ${FORBIDDEN}")
endforeach()
