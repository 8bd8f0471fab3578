# Fails when a binary or library of the peer side references SystemC (docs/architecture.md:
# peers and adapters never use SystemC). Run as
#   cmake -DNM=<nm> -DREADELF=<readelf> -DFILES="a;b;..." -P CheckNoSystemC.cmake
# Every symbol (defined or undefined) of each file is listed demangled; one in sc_core, sc_dt,
# tlm or named sc_main is an error, as is an executable or shared library that needs
# libsystemc.
if(NOT NM OR NOT FILES)
    message(FATAL_ERROR "CheckNoSystemC: pass -DNM=<nm> and -DFILES=<files>")
endif()
set(failures "")
foreach(file IN LISTS FILES)
    if(NOT EXISTS "${file}")
        message(FATAL_ERROR "CheckNoSystemC: ${file} does not exist; build it first")
    endif()
    execute_process(COMMAND ${NM} -C "${file}" OUTPUT_VARIABLE symbols ERROR_VARIABLE nmError
                    RESULT_VARIABLE nmResult)
    if(NOT nmResult EQUAL 0)
        message(FATAL_ERROR "CheckNoSystemC: ${NM} -C ${file} failed: ${nmError}")
    endif()
    string(REGEX MATCHALL "[^\n]*(sc_core::|sc_dt::|tlm::|tlm_utils::| sc_main\n)[^\n]*"
           bad "${symbols}\n")
    list(LENGTH bad count)
    if(count GREATER 0)
        list(SUBLIST bad 0 5 shown)
        string(REPLACE ";" "\n    " shown "${shown}")
        string(APPEND failures "${file}: ${count} SystemC symbols, e.g.\n    ${shown}\n")
    endif()
    if(READELF AND NOT file MATCHES "\\.a$")
        execute_process(COMMAND ${READELF} -d "${file}" OUTPUT_VARIABLE dynamic
                        RESULT_VARIABLE readelfResult ERROR_QUIET)
        if(readelfResult EQUAL 0 AND dynamic MATCHES "libsystemc")
            string(APPEND failures "${file}: needs libsystemc (readelf -d)\n")
        endif()
    endif()
endforeach()
if(failures)
    message(FATAL_ERROR "SystemC reached the peer side:\n${failures}")
endif()
list(LENGTH FILES checked)
message(STATUS "CheckNoSystemC: ${checked} files free of SystemC")
