# SPDX-License-Identifier: GPL-2.0-or-later
# install_tests.cmake: `cmake --install` of this build tree into a fresh prefix, then the installed
# programs used as a user of the .deb would: schedlab-cli finds the installed scenarios by name
# (not the source tree's), the desktop entry, icons and man page are where a desktop looks.
# Invoked by ctest with -DBUILD=... -DSRC=... -DOUT=... -DGUI=ON|OFF -DPROJECT_VERSION=...
set(failures 0)
set(checks 0)
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

set(P ${OUT}/install_prefix)
file(REMOVE_RECURSE ${P})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${P} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()

macro(expect_file f)
  math(EXPR checks "${checks} + 1")
  if(NOT EXISTS ${P}/${f})
    message(SEND_ERROR "not installed: ${f}")
    math(EXPR failures "${failures} + 1")
  endif()
endmacro()
foreach(f bin/schedlab-cli share/schedlab/scenarios/mathieu-hackbench-epyc-9654.json share/schedlab/examples/idle-delay-v1.json
          share/doc/schedlab/README.md share/doc/schedlab/LICENSE share/doc/schedlab/scenario-format.md)
  expect_file(${f})
endforeach()
if(GUI)
  foreach(f bin/schedlab share/applications/schedlab.desktop share/icons/hicolor/scalable/apps/schedlab.svg
            share/icons/hicolor/48x48/apps/schedlab.png share/icons/hicolor/256x256/apps/schedlab.png)
    expect_file(${f})
  endforeach()
  find_program(DESKTOP_FILE_VALIDATE desktop-file-validate)
  if(DESKTOP_FILE_VALIDATE)
    set(CLI ${DESKTOP_FILE_VALIDATE})
    expect_run(desktop_entry_valid 0 "" ARGS ${P}/share/applications/schedlab.desktop)
  endif()
endif()
find_program(HELP2MAN help2man)
if(HELP2MAN)
  expect_file(share/man/man1/schedlab-cli.1)
  file(READ ${P}/share/man/man1/schedlab-cli.1 man)
  math(EXPR checks "${checks} + 1")
  if(NOT man MATCHES "reproduce" OR NOT man MATCHES "\\.TH SCHEDLAB-CLI" OR NOT man MATCHES "\\.SS \"schedlab-cli run\"\n\\.nf\n[^\n]*\nUsage: schedlab-cli run " OR NOT man MATCHES "no-coalesce")
    message(SEND_ERROR "schedlab-cli.1 is not the --help of schedlab-cli and of each of its commands")
    math(EXPR failures "${failures} + 1")
  endif()
endif()

# The installed CLI, by scenario name, reads the installed copy: the listing names its folder, and a
# copy changed there (a shorter run) is the one that runs.
set(CLI ${P}/bin/schedlab-cli)
expect_run(installed_version 0 "^schedlab-cli ${PROJECT_VERSION}\n$" ARGS --version)
expect_run(installed_list 0 "shipped scenarios in ${P}/share/schedlab/scenarios .*mathieu-hackbench-epyc-9654 +epyc-9654-2s" ARGS scenarios)
file(READ ${P}/share/schedlab/scenarios/mike-wa-weight-tbench-i7-4790.json sc)
string(REGEX REPLACE "\"name\": *\"[^\"]*\"" "\"name\": \"installed-copy\"" sc "${sc}")
file(WRITE ${P}/share/schedlab/scenarios/mike-wa-weight-tbench-i7-4790.json "${sc}")
expect_run(installed_run_by_name 0 "^schedlab run: installed-copy " ARGS run mike-wa-weight-tbench-i7-4790)
expect_run(installed_run_by_name_json 0 "^schedlab run: installed-copy " ARGS run mike-wa-weight-tbench-i7-4790.json)
expect_run(installed_unknown_name 2 "^schedlab-cli: nosuch: no such file, nor a shipped scenario of that name" ARGS run nosuch)
expect_run(installed_reproduce_list 0 "mathieu-v1" ARGS reproduce --list)
# The trace.dat reader's program, in LIBEXECDIR/schedlab: not for running by hand; the installed
# CLI reads a trace.dat through it.
expect_file(libexec/schedlab/schedlab-trace-reader)
set(CLI_SAVED ${CLI})
set(CLI ${P}/libexec/schedlab/schedlab-trace-reader)
expect_run(installed_reader_by_hand 2 "it is not run by hand" ARGS)
set(CLI ${CLI_SAVED})
expect_run(installed_trace_dat 0 "10119 events on 8 CPUs" ARGS trace ${SRC}/tests/data/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.v7-zstd.dat)
if(GUI)
  set(CLI ${P}/bin/schedlab)
  expect_run(installed_gui_by_name 0 "" ARGS --scenario mike-wa-weight-tbench-i7-4790 --run-for 1ms --screenshot ${P}/shot.png)
  expect_file(shot.png)
endif()

message(STATUS "install_tests: ${checks} checks, ${failures} failures")
if(failures GREATER 0)
  message(FATAL_ERROR "install_tests: ${failures} of ${checks} checks failed")
endif()
