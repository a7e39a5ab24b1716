# SPDX-License-Identifier: GPL-2.0-or-later
# man_subcommands.cmake: a help2man --include file with each schedlab-cli subcommand's --help, so
# that `man schedlab-cli` documents every command's options, not only the command list.
# cmake -DCLI=schedlab-cli -DOUT=file -P man_subcommands.cmake
execute_process(COMMAND ${CLI} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CLI} --help failed (${rc})")
endif()
string(FIND "${top}" "Subcommands:" at)
if(at LESS 0)
  message(FATAL_ERROR "${CLI} --help lists no subcommands")
endif()
string(SUBSTRING "${top}" ${at} -1 subs)
string(REGEX MATCHALL "\n  [a-z][a-z-]*" names "${subs}")
set(text "[COMMANDS]\n")
foreach(n ${names})
  string(STRIP "${n}" n)
  execute_process(COMMAND ${CLI} ${n} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CLI} ${n} --help failed (${rc})")
  endif()
  string(REPLACE "${CLI}" "schedlab-cli" help "${help}")  # the usage line names the binary by its path
  # roff: a backslash is \e; a line that starts with . or ' would be a request.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND text ".SS \"schedlab-cli ${n}\"\n.nf\n${help}.fi\n")
endforeach()
file(WRITE ${OUT} "${text}")
