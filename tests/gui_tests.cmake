# SPDX-License-Identifier: GPL-2.0-or-later
# gui_tests.cmake: the schedlab GUI's command line, headless: screenshots of the window and of one
# view after a given simulated time, and one-line errors with exit status 2 for bad flags and files.
# Invoked by ctest with -DCLI=<schedlab> -DSRC=... -DOUT=<dir>.
set(failures 0)
set(checks 0)
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)
file(REMOVE ${OUT}/x.png)  # only a failed run's output would be there
set(DEBRIS_DIR ${OUT})  # a refused run leaves no NAME.tmp.PID (expect_run.cmake)

# Qt wants a private runtime directory (a desktop session has one); without it every run warns on stderr.
set(ENV{XDG_RUNTIME_DIR} ${OUT}/gui_runtime)
file(MAKE_DIRECTORY ${OUT}/gui_runtime)
file(MAKE_DIRECTORY ${OUT}/d.png)  # a directory named like a picture
file(CHMOD ${OUT}/gui_runtime PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)

set(S ${SRC}/resources/scenarios/i7-4790-hackbench-small.json)
file(REMOVE ${OUT}/gui_win.png ${OUT}/gui_lat.svg ${OUT}/gui_trace.pdf)
expect_run(gui_window_png 0 "i7-4790 \\(8 CPUs\\).*A: baseline · B: idle-delay-v2.*seed 1 · t = 5.000 ms simulated"
           ARGS --scenario ${S} --run-for 5ms --screenshot ${OUT}/gui_win.png)
expect_run(gui_view_svg 0 "t = 2.000 ms" ARGS --scenario ${S} --run-for 2ms --view latency --screenshot ${OUT}/gui_lat.svg)
expect_run(gui_trace_pdf 0 "A: idle-delay-v1" ARGS --scenario ${S} --a idle-delay-v1 --no-ab --run-for 1ms --step-wakeup --screenshot ${OUT}/gui_trace.pdf)
foreach(f gui_win.png gui_lat.svg gui_trace.pdf)
  if(NOT EXISTS ${OUT}/${f})
    message(SEND_ERROR "${f} was not written")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
expect_run(gui_bad_duration 2 "^schedlab: --run-for '5parsecs': not a duration" ARGS --run-for 5parsecs --screenshot ${OUT}/x.png)
expect_run(gui_fast_forward 0 "A: baseline · B: idle-delay-v2.*t = 6.000 ms simulated.*fast-forward 0.006 of 0.006 s simulated"
           ARGS --scenario ${S} --fast-forward 6ms --screenshot ${OUT}/gui_ff.png)
expect_run(gui_bad_fast_forward 2 "^schedlab: --fast-forward '-3ms': not a duration" ARGS --fast-forward -3ms --screenshot ${OUT}/x.png)
# The decision flow view, A and B, with the stepped wakeup lit; a step after the run's end still captures.
expect_run(gui_view_flow 0 "A: baseline · B: idle-delay-v2" ARGS --scenario ${S} --run-for 3ms --step-wakeup --view flow --screenshot ${OUT}/gui_flow.png)
expect_run(gui_step_after_end 0 "t = 17.415 ms simulated" ARGS --scenario ${S} --run-for 20ms --step-wakeup --view flow --screenshot ${OUT}/gui_flow2.png)
# The outcome view with a live knob change and a branch, from the command line; bad ones refused;
# an endless job fast-forwarded until A's steady-state detector says it has settled.
file(WRITE ${OUT}/endless.json "{\"topology\":\"i7-4790\",\"seed\":11,\"workloads\":[{\"type\":\"hackbench\",\"groups\":2,\"fds\":1,\"threads\":true,\"pipe\":true,\"loops\":0}]}\n")
expect_run(gui_view_outcome 0 "B: idle-delay-v2 \\(WA_WEIGHT=0\\), branched from A at t = 4.000 ms, idle_delay_ns=1000000 idle_delay_max_running=4 at t = 4.000 ms, WA_WEIGHT=0 at t = 6.000 ms"
           ARGS --scenario ${S} --run-for 8ms --branch-at 4ms --change 6ms:B:WA_WEIGHT=0 --view outcome --screenshot ${OUT}/gui_outcome.png)
expect_run(gui_fast_forward_steady 0 "fast-forward [0-9.]+ of 60.000 s simulated" ARGS --scenario ${OUT}/endless.json --fast-forward steady --screenshot ${OUT}/gui_steady.png)
expect_run(gui_steady_with_change 2 "^schedlab: --change, --branch-at: give --fast-forward a time, not steady" ARGS --scenario ${S} --fast-forward steady --branch-at 1ms --screenshot ${OUT}/x.png)
expect_run(gui_bad_change 2 "^schedlab: --change '6ms:C:WA_WEIGHT=0': expected T:A.B:knob=value" ARGS --scenario ${S} --run-for 8ms --change 6ms:C:WA_WEIGHT=0 --screenshot ${OUT}/x.png)
expect_run(gui_bad_change_knob 2 "^schedlab: --change '6ms:B:nope=1': " ARGS --scenario ${S} --run-for 8ms --change 6ms:B:nope=1 --screenshot ${OUT}/x.png)
expect_run(gui_change_past_end 2 "^schedlab: --change, --branch-at: the time is past" ARGS --scenario ${S} --run-for 8ms --branch-at 9ms --screenshot ${OUT}/x.png)
# --state: a checkpoint of schedlab-cli's opens at its time (B from A's state with the scenario's
# second variant); a damaged one, or --state beside --scenario: one line, exit 2.
file(WRITE ${OUT}/gui_endless.json "{\"topology\":\"i7-4790\",\"workloads\":[{\"type\":\"hackbench\",\"groups\":1,\"fds\":4,\"threads\":true,\"pipe\":true,\"loops\":0}],\"variants\":{\"A\":\"baseline\",\"B\":\"idle-delay-v2\"}}\n")
execute_process(COMMAND ${SCHEDLAB_CLI} run ${OUT}/gui_endless.json --until 20ms --save-state ${OUT}/gui.state --digest RESULT_VARIABLE rc OUTPUT_QUIET)
expect_run(gui_state 0 "A: baseline · B: idle-delay-v2, branched from A at t = 20.000 ms.* · t = 20.000 ms simulated" ARGS --state ${OUT}/gui.state --screenshot ${OUT}/gui_state.png)
file(WRITE ${OUT}/bad.state "SCHEDLAB-STATE\nnot really")
expect_run(gui_state_damaged 2 "^schedlab: [^\n]*bad.state: damaged state" ARGS --state ${OUT}/bad.state --screenshot ${OUT}/x.png)
expect_run(gui_state_and_scenario 2 "^schedlab: --state and --scenario: the state file carries its run" ARGS --state ${OUT}/gui.state --scenario ${S} --screenshot ${OUT}/x.png)
expect_run(gui_bad_soak 2 "^schedlab: --soak '0': not a number of seconds \\(1 to 604800\\)" ARGS --soak 0)
expect_run(gui_soak_and_screenshot 2 "^schedlab: --soak and --screenshot: give one of them" ARGS --soak 5 --screenshot ${OUT}/x.png)
# A short soak goes through every action once: sliders, restarts, the trace opened, a disagreement.
expect_run(gui_soak_short 0 "soak done: [0-9]+ actions, [1-9][0-9]* restarts, [1-9][0-9]* trace opens, 0 failures"
           ARGS --soak 6 --trace ${SRC}/tests/data/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.dat --topology qemu-2s2c2t)
expect_run(gui_fast_forward_and_run_for 2 "^schedlab: --fast-forward and --run-for: give one of them" ARGS --fast-forward 3ms --run-for 1ms --screenshot ${OUT}/x.png)
expect_run(gui_bad_format 2 "^schedlab: --screenshot x.bmp: use a .png, .svg or .pdf file name" ARGS --screenshot x.bmp)
expect_run(gui_bad_view 2 "^schedlab: --view 'nosuch': unknown view" ARGS --view nosuch --screenshot ${OUT}/x.png)
expect_run(gui_bad_preset 2 "^schedlab: --a: .*nosuch" ARGS --a nosuch --screenshot ${OUT}/x.png)
expect_run(gui_bad_knob 2 "^schedlab: --b: .*WA_IDEL" ARGS --set-b WA_IDEL=0 --screenshot ${OUT}/x.png)
expect_run(gui_missing_scenario 2 "^schedlab: /nonexistent.json: cannot open" ARGS --scenario /nonexistent.json --screenshot ${OUT}/x.png)
expect_run(gui_bad_flag 2 "^schedlab: " ARGS --frobnicate)
# A picture that cannot be saved is refused before anything is simulated (it exited 1
# after the run); a scenario nested 100 000 deep is an error, not a crash.
expect_run(gui_screenshot_no_dir 2 "^schedlab: --screenshot /etc/passwd/x.png: directory /etc/passwd does not exist" ARGS --screenshot /etc/passwd/x.png)
expect_run(gui_screenshot_is_dir 2 "^schedlab: --screenshot ${OUT}/d.png: is a directory" ARGS --screenshot ${OUT}/d.png)
string(REPEAT "[" 100000 deep_open)
string(REPEAT "]" 100000 deep_close)
file(WRITE ${OUT}/deep.json "{\"topology\":\"i7-4790\",\"comment\":${deep_open}1${deep_close},\"workloads\":[{\"type\":\"hackbench\"}]}\n")
expect_run(gui_deep_json 2 "^schedlab: .*deep.json: JSON nested more than 64 levels deep" ARGS --scenario ${OUT}/deep.json --screenshot ${OUT}/x.png)

# A recorded trace in the same views: headless screenshot at a cursor, and its bad input.
set(TR ${SRC}/tests/data/traces/qemu-6.1-2s2c2t-hackbench-small/trace.txt.gz)
file(REMOVE ${OUT}/gui_rec.png)
expect_run(gui_recorded_png 0 "recorded trace trace.txt.gz · qemu-2s2c2t \\(8 CPUs\\) · 8406 events · cursor t = 150.000 ms of 521.221 ms"
           ARGS --trace ${TR} --topology qemu-2s2c2t --at 150ms --screenshot ${OUT}/gui_rec.png)
if(NOT EXISTS ${OUT}/gui_rec.png)
  message(SEND_ERROR "gui_recorded_png wrote no file")
  math(EXPR failures "${failures} + 1")
endif()
expect_run(gui_recorded_dat 0 "recorded trace trace.v7-zstd.dat · qemu-2s2c2t" ARGS --trace ${SRC}/tests/data/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.v7-zstd.dat --topology qemu-2s2c2t --view heatmapA --screenshot ${OUT}/gui_rec_dat.png)
# The agreement on the timeline, one disagreement opened in the inspector (both CPUs in the caption).
file(REMOVE ${OUT}/gui_agree.png)
expect_run(gui_recorded_disagreement 0 "agree \\(knobs baseline, sync [^)]*\\): [0-9]+ decisions · agreement [0-9.]+ % · moved [0-9]+: [0-9.]+ % · stay-on-prev [0-9.]+ % · [0-9]+ disagreements · disagreement 2 \\(line [0-9]+, pid [0-9]+\\): kernel CPU [0-7], schedlab CPU [0-7]"
           ARGS --trace ${TR} --topology qemu-2s2c2t --disagreement 2 --screenshot ${OUT}/gui_agree.png)
if(NOT EXISTS ${OUT}/gui_agree.png)
  message(SEND_ERROR "gui_recorded_disagreement wrote no file")
  math(EXPR failures "${failures} + 1")
endif()
expect_run(gui_disagreement_zero 2 "^schedlab: --disagreement '0': not a positive integer" ARGS --trace ${TR} --topology qemu-2s2c2t --disagreement 0 --screenshot ${OUT}/x.png)
expect_run(gui_disagreement_word 2 "^schedlab: --disagreement 'first': not a positive integer" ARGS --trace ${TR} --topology qemu-2s2c2t --disagreement first --screenshot ${OUT}/x.png)
expect_run(gui_disagreement_no_trace 2 "^schedlab: --disagreement needs --trace" ARGS --disagreement 1 --screenshot ${OUT}/x.png)
expect_run(gui_disagreement_past_the_end 2 "^schedlab: --disagreement 100000: the trace has [0-9]+ disagreements" ARGS --trace ${TR} --topology qemu-2s2c2t --disagreement 100000 --screenshot ${OUT}/x.png)
expect_run(gui_recorded_no_topology 2 "^schedlab: --trace needs --topology: the trace has 8 CPUs \\(presets with 8 CPUs: .*qemu-2s2c2t" ARGS --trace ${TR} --screenshot ${OUT}/x.png)
expect_run(gui_recorded_not_a_trace 2 "^schedlab: .*i7-4790-hackbench-small.json: not an ftrace text trace" ARGS --trace ${S} --topology qemu-2s2c2t --screenshot ${OUT}/x.png)
expect_run(gui_recorded_bad_at 2 "^schedlab: --at 'soon': not a duration" ARGS --trace ${TR} --topology qemu-2s2c2t --at soon --screenshot ${OUT}/x.png)
# Two traces side by side (before/after), and a simulation beside a trace.
set(DAT ${SRC}/tests/data/traces/qemu-6.1-2s2c2t-hackbench-small-dat/trace.dat)
file(REMOVE ${OUT}/gui_ab.png ${OUT}/gui_beside.png ${OUT}/gui_beside_b.png)
expect_run(gui_two_traces 0 "A: recorded trace trace.txt.gz \\(8406 events, 521.221 ms\\) · B: recorded trace trace.dat \\([0-9]+ events, [0-9.]+ ms\\) · qemu-2s2c2t \\(8 CPUs\\) · cursor t = 100.000 ms since each trace's first event · agree A \\(knobs baseline[^)]*\\): [0-9]+ decisions.* · agree B \\(knobs baseline[^)]*\\): [0-9]+ decisions"
           ARGS --trace ${TR} --trace-b ${DAT} --topology qemu-2s2c2t --at 100ms --screenshot ${OUT}/gui_ab.png)
expect_run(gui_beside_sim 0 "recorded trace trace.txt.gz .* B: simulated qemu-2s2c2t-hackbench-trace.json \\(qemu-2s2c2t, 8 CPUs\\), knobs baseline, seed 1, t = 3.000 ms simulated"
           ARGS --trace ${TR} --beside-sim ${SRC}/resources/scenarios/qemu-2s2c2t-hackbench-trace.json --topology qemu-2s2c2t --at 3ms --screenshot ${OUT}/gui_beside.png)
expect_run(gui_beside_variant_b 0 "B: simulated qemu-2s2c2t-hackbench-trace.json \\(qemu-2s2c2t, 8 CPUs\\), knobs idle-delay-v2, seed 1, t = 3.000 ms simulated"
           ARGS --trace ${TR} --beside-sim ${SRC}/resources/scenarios/qemu-2s2c2t-hackbench-trace.json --beside-variant B --topology qemu-2s2c2t --at 3ms --screenshot ${OUT}/gui_beside_b.png)
expect_run(gui_beside_variant_unknown 2 "^schedlab: .*qemu-2s2c2t-hackbench-trace.json: no variant 'C' \\(the scenario's: A, B\\)"
           ARGS --trace ${TR} --beside-sim ${SRC}/resources/scenarios/qemu-2s2c2t-hackbench-trace.json --beside-variant C --topology qemu-2s2c2t --screenshot ${OUT}/x.png)
expect_run(gui_beside_variant_no_sim 2 "^schedlab: --beside-variant needs --beside-sim" ARGS --trace ${TR} --topology qemu-2s2c2t --beside-variant B --screenshot ${OUT}/x.png)
foreach(f gui_ab.png gui_beside.png gui_beside_b.png)
  if(NOT EXISTS ${OUT}/${f})
    message(SEND_ERROR "${f} was not written")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
file(WRITE ${OUT}/gui_wide.txt "# tracer: nop\n#\n            bash-100   [015] d..2.   1.000000: sched_waking: comm=cat pid=200 prio=120 target_cpu=015\n")
expect_run(gui_trace_b_no_trace 2 "^schedlab: --trace-b needs --trace" ARGS --trace-b ${DAT} --screenshot ${OUT}/x.png)
expect_run(gui_beside_no_trace 2 "^schedlab: --beside-sim needs --trace" ARGS --beside-sim ${S} --screenshot ${OUT}/x.png)
expect_run(gui_trace_b_and_beside 2 "^schedlab: --trace-b and --beside-sim: side B is one or the other" ARGS --trace ${TR} --topology qemu-2s2c2t --trace-b ${DAT} --beside-sim ${S} --screenshot ${OUT}/x.png)
expect_run(gui_trace_b_too_many_cpus 2 "^schedlab: --trace-b .*gui_wide.txt: has 16 CPUs, more than --topology qemu-2s2c2t \\(8 CPUs\\)" ARGS --trace ${TR} --topology qemu-2s2c2t --trace-b ${OUT}/gui_wide.txt --screenshot ${OUT}/x.png)
expect_run(gui_trace_b_not_a_trace 2 "^schedlab: .*i7-4790-hackbench-small.json: not an ftrace text trace" ARGS --trace ${TR} --topology qemu-2s2c2t --trace-b ${S} --screenshot ${OUT}/x.png)
expect_run(gui_beside_other_machine 2 "^schedlab: --beside-sim .*mathieu-hackbench-epyc-9654.json: topology epyc-9654-2s \\(384 CPUs\\) is not the trace's qemu-2s2c2t \\(8 CPUs\\)" ARGS --trace ${TR} --topology qemu-2s2c2t --beside-sim ${SRC}/resources/scenarios/mathieu-hackbench-epyc-9654.json --screenshot ${OUT}/x.png)
expect_run(gui_beside_missing 2 "^schedlab: /nonexistent.json: cannot open" ARGS --trace ${TR} --topology qemu-2s2c2t --beside-sim /nonexistent.json --screenshot ${OUT}/x.png)
if(EXISTS ${OUT}/x.png)
  message(SEND_ERROR "a failed run wrote ${OUT}/x.png")
  math(EXPR failures "${failures} + 1")
endif()

message(STATUS "gui_tests: ${checks} checks, ${failures} failed")
if(failures GREATER 0)
  message(FATAL_ERROR "gui_tests failed")
endif()
