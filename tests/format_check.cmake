# SPDX-License-Identifier: GPL-2.0-or-later
# Fails when a C++ file of app/ core/ widgets/ tests/ is not as clang-format (.clang-format)
# leaves it, naming the files; `clang-format -i FILE` fixes one.
file(GLOB_RECURSE files ${SRC}/app/*.cpp ${SRC}/app/*.h ${SRC}/core/*.cpp ${SRC}/core/*.h
     ${SRC}/widgets/*.cpp ${SRC}/widgets/*.h ${SRC}/tests/*.cpp ${SRC}/tests/*.h)
set(bad "")
foreach(f ${files})
  execute_process(COMMAND ${CLANG_FORMAT} --style=file --dry-run -Werror ${f}
                  WORKING_DIRECTORY ${SRC} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    file(RELATIVE_PATH rel ${SRC} ${f})
    list(APPEND bad ${rel})
  endif()
endforeach()
list(LENGTH files n)
if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "not formatted as .clang-format says (clang-format -i FILE):\n  ${text}")
endif()
message(STATUS "${n} files formatted as .clang-format says")
