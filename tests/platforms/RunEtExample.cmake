# Generates an 8-rank trace with etsim gen and runs examples/run_et on the hgx_h100 preset.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${ETSIM} gen transformer --layers 1 --hidden 512 --heads 8 --ffn 2048
                        --seq-len 512 --dp 2 --tp 4 --out ${WORK} --name step
                RESULT_VARIABLE genResult OUTPUT_QUIET)
if(NOT genResult EQUAL 0)
    message(FATAL_ERROR "etsim gen failed: ${genResult}")
endif()
execute_process(COMMAND ${RUN_ET} hgx_h100 ${WORK}/step driver.mode=model
                RESULT_VARIABLE runResult OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT runResult EQUAL 0)
    message(FATAL_ERROR "run_et failed (${runResult}): ${out}${err}")
endif()
if(NOT out MATCHES "ranks: 8, outcome: all-idle, simulated time: [0-9.]+ [mu]s, collectives: [1-9]")
    message(FATAL_ERROR "unexpected output: ${out}")
endif()
message(STATUS "${out}")
