# SPDX-License-Identifier: GPL-2.0-or-later
# calibrate_tests.cmake: registers schedlab-calibrate's tests (included by tools/calibrate/CMakeLists.txt
# when SCHEDLAB_TESTS is on). calibrate.short, calibrate.sigterm_removes_instance, calibrate.no_trace and
# calibrate.only_waker_tail run the real program from calibrate_check_test (GoogleTest); calibrate.bad_flags
# is the CMake script bad_flags.cmake.
find_package(GTest REQUIRED)

add_executable(calibrate_check_test calibrate_check_test.cpp)
target_compile_features(calibrate_check_test PRIVATE cxx_std_20)
target_link_libraries(calibrate_check_test PRIVATE GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_definitions(calibrate_check_test PRIVATE SCHEDLAB_CALIBRATE="$<TARGET_FILE:schedlab-calibrate>"
  SCHEDLAB_CALIBRATE_OUT="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(calibrate_check_test schedlab-calibrate)
schedlab_warnings(calibrate_check_test)

# (a) --short end to end: the JSON parses and every available figure is a sane distribution.
add_test(NAME calibrate.short COMMAND calibrate_check_test --gtest_filter=CalibrateShort.*)
# (c) SIGTERM while the trace instance exists: the instance is removed (as root), or the not-root reason.
add_test(NAME calibrate.sigterm_removes_instance COMMAND calibrate_check_test --gtest_filter=CalibrateSignal.*)
# (d) --no-trace with prefixes: only the microbenchmarks chosen, no trace instance.
add_test(NAME calibrate.no_trace COMMAND calibrate_check_test --gtest_filter=CalibrateNoTrace.*)
# (e) --only waker_tail / waker_tail_same_cpu: six and three figures; the same-CPU tails with one CPU named.
add_test(NAME calibrate.only_waker_tail COMMAND calibrate_check_test --gtest_filter=CalibrateOnlyTails.*)
# (b) Bad command lines: exit status 2 and exactly one line on stderr naming the flag.
add_test(NAME calibrate.bad_flags COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:schedlab-calibrate>
  -DOUT=${CMAKE_CURRENT_BINARY_DIR} -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_flags.cmake)
set_tests_properties(calibrate.short calibrate.sigterm_removes_instance calibrate.no_trace calibrate.only_waker_tail
  calibrate.bad_flags PROPERTIES TIMEOUT 60)
# They run the program's measurements (pinned threads): never beside each other.
set_tests_properties(calibrate.short calibrate.sigterm_removes_instance calibrate.no_trace calibrate.only_waker_tail
  PROPERTIES RUN_SERIAL TRUE)
