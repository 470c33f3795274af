# tide_library(NAME SRCS a.cc b.cc DEPS x y): one static library per module folder.
function(tide_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# tide_test(NAME SRCS a_test.cc DEPS x y): a GoogleTest binary registered with CTest.
# Tests sit beside the code they test; this keeps the registration next to them too.
function(tide_test name)
  if(NOT TIDE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} tide_testutil GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    TIDE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TIDE_TRACES_DIR="${PROJECT_SOURCE_DIR}/../shared/traces")
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES)
endfunction()
