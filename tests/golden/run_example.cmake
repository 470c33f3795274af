# The README's main command on the bundled example, and the foundation's
# acceptance on it: the elastic policy costs less than a fixed cluster sized
# for the peak, and its p95 queue wait is at most the fixed cluster's plus one
# boot delay (the pools' longest, 5 minutes).
file(MAKE_DIRECTORY "${OUT}")

# examples/week.csv is exactly what its documented command generates.
execute_process(
  COMMAND "${TIDE}" trace synth --config examples/cluster.yaml --days 7 --seed 1 --out "${OUT}/week.csv"
  WORKING_DIRECTORY "${SRC}" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tide trace synth failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${SRC}/examples/week.csv" "${OUT}/week.csv"
                RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  message(FATAL_ERROR "examples/week.csv differs from `tide trace synth --config examples/cluster.yaml --days 7 --seed 1`")
endif()
execute_process(
  COMMAND "${TIDE}" simulate --config examples/cluster.yaml --trace examples/week.csv --json "${OUT}/week.json"
  WORKING_DIRECTORY "${SRC}" OUTPUT_VARIABLE table ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tide simulate failed (${rc}): ${err}")
endif()
message("${table}")
file(READ "${OUT}/week.json" json)
string(JSON n LENGTH "${json}" policies)
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" policies ${i} name)
  string(JSON cost GET "${json}" policies ${i} cost_total)
  string(JSON p95 GET "${json}" policies ${i} wait_s p95)
  string(JSON unstarted GET "${json}" policies ${i} jobs_unstarted)
  set(cost_${name} ${cost})
  set(p95_${name} ${p95})
  if(NOT unstarted EQUAL 0)
    message(FATAL_ERROR "${name}: ${unstarted} jobs never started")
  endif()
endforeach()
if(NOT DEFINED cost_tide OR NOT DEFINED cost_fixed:peak)
  message(FATAL_ERROR "the example must compare tide with fixed:peak")
endif()
if(NOT cost_tide LESS cost_fixed:peak)
  message(FATAL_ERROR "tide costs ${cost_tide}, not less than fixed:peak's ${cost_fixed:peak}")
endif()
math(EXPR bound "${p95_fixed:peak} + 300")
if(p95_tide GREATER bound)
  message(FATAL_ERROR "tide's p95 wait ${p95_tide}s exceeds fixed:peak's ${p95_fixed:peak}s plus a 5-minute boot")
endif()
message("tide: cost ${cost_tide} < fixed:peak ${cost_fixed:peak}; p95 wait ${p95_tide}s <= ${bound}s")
