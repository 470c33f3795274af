# Runs `tide simulate` on DIR/cluster.yaml and DIR/jobs.csv and compares the
# table, the JSON summary and the decision log with DIR/expected/.
# Regenerate after a deliberate change with tests/golden/update.sh, and review the diff.
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(
  COMMAND "${TIDE}" simulate --config cluster.yaml --trace jobs.csv --threads 1
          --json "${OUT}/summary.json" --decision-log "${OUT}/decisions.log"
  WORKING_DIRECTORY "${DIR}"
  OUTPUT_FILE "${OUT}/table.txt"
  ERROR_VARIABLE err
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tide simulate failed (${rc}): ${err}")
endif()
set(failed "")
foreach(f table.txt summary.json decisions.log)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${DIR}/expected/${f}" "${OUT}/${f}" RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    execute_process(COMMAND diff -u "${DIR}/expected/${f}" "${OUT}/${f}" OUTPUT_VARIABLE d)
    message("${f} differs from ${DIR}/expected/${f}:\n${d}")
    list(APPEND failed ${f})
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "golden files differ: ${failed} (if the change is intended: tests/golden/update.sh)")
endif()
