# Every examples/<name>/ with an expected.txt: `tide simulate` on its
# cluster.yaml and jobs.csv (or, when the example has a command.txt, tide with
# the arguments in it) prints exactly expected.txt. The design pages quote
# these numbers, so this keeps them true.
# Regenerate after a deliberate change: tests/golden/update.sh, and review the diff.
file(GLOB expected RELATIVE "${SRC}/examples" "${SRC}/examples/*/expected.txt")
set(failed "")
foreach(e IN LISTS expected)
  get_filename_component(name "${e}" DIRECTORY)
  set(dir "${SRC}/examples/${name}")
  set(args simulate --config cluster.yaml --trace jobs.csv --threads 1)
  if(EXISTS "${dir}/command.txt")
    file(READ "${dir}/command.txt" line)
    string(STRIP "${line}" line)
    separate_arguments(args UNIX_COMMAND "${line}")
  endif()
  execute_process(COMMAND "${TIDE}" ${args}
                  WORKING_DIRECTORY "${dir}" OUTPUT_VARIABLE got ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message("${name}: tide ${args} failed (${rc}): ${err}")
    list(APPEND failed ${name})
    continue()
  endif()
  file(READ "${dir}/expected.txt" want)
  if(NOT got STREQUAL want)
    file(WRITE "${OUT}/${name}.txt" "${got}")
    execute_process(COMMAND diff -u "${dir}/expected.txt" "${OUT}/${name}.txt" OUTPUT_VARIABLE d)
    message("${name}: output differs from expected.txt:\n${d}")
    list(APPEND failed ${name})
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "examples differ: ${failed}")
endif()
