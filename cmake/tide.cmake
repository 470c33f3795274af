# Test sources are mostly GoogleTest and GMock templates: optimising them buys
# nothing at run time (the code under test is built with the build type's
# flags) and is most of the build's cost. scripts/build test sets
# TIDE_TEST_CXX_FLAGS to "-O1 -g0" so that CI's clean build stays short.
set(TIDE_TEST_CXX_FLAGS "" CACHE STRING "Extra compile flags for test sources only (e.g. -O1 -g0)")
function(tide_test_flags target)
  # GCC 12 reports false positives inside GoogleTest's macros and the
  # std::string copies they inline (a memcpy "overlap" in generated test
  # names, "may be used uninitialized" in copied option structs). They are
  # silenced for test sources only; the code under test keeps every warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-maybe-uninitialized)
  endif()
  if(TIDE_TEST_CXX_FLAGS)
    separate_arguments(flags UNIX_COMMAND "${TIDE_TEST_CXX_FLAGS}")
    target_compile_options(${target} PRIVATE ${flags})
  endif()
endfunction()

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
  tide_test_flags(${name})
  target_compile_definitions(${name} PRIVATE
    TIDE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TIDE_TRACES_DIR="${PROJECT_SOURCE_DIR}/../shared/traces")
  include(GoogleTest)
  # A unit test that runs for minutes has hung (a decision loop that never
  # ends, say): fail it rather than hold CI to its limit.
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES PROPERTIES TIMEOUT 300)
endfunction()
