# Runs a command and compares its stdout, byte for byte, with a golden file.
#
#   cmake -DCMD="prog;arg;..." -DEXPECTED=golden -DOUT=actual -P run_and_compare.cmake
#
# Exit status 77 from the command means "cannot run here" (the Python binding
# is not built, say): the script prints "SKIP: ..." and the test's
# SKIP_REGULAR_EXPRESSION turns that into a skip. With RSC_UPDATE_GOLDEN=1 in
# the environment the golden file is rewritten instead of compared.
execute_process(COMMAND ${CMD} OUTPUT_FILE ${OUT} ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 77)
  if(NOT err MATCHES "^SKIP: ")
    set(err "SKIP: ${err}")
  endif()
  message("${err}")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CMD}: exit status ${rc}\n${err}")
endif()
if(DEFINED ENV{RSC_UPDATE_GOLDEN} AND NOT "$ENV{RSC_UPDATE_GOLDEN}" STREQUAL "0")
  configure_file(${OUT} ${EXPECTED} COPYONLY)
  message("updated ${EXPECTED}")
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${EXPECTED} RESULT_VARIABLE differs)
if(differs)
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND ${DIFF} -u ${EXPECTED} ${OUT})
  endif()
  message(FATAL_ERROR "output differs from ${EXPECTED} (actual output: ${OUT}; "
                      "RSC_UPDATE_GOLDEN=1 ctest rewrites it after a deliberate change)")
endif()
