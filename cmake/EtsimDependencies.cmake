# Every dependency comes from Debian's packages; nothing is downloaded at configure time.
# scripts/install-deps.sh installs what this file looks for.

find_package(PkgConfig REQUIRED)
# SystemC has no CMake package in Debian: pkg-config is the supported way in.
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET GLOBAL systemc>=2.3.4 tlm)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(Threads REQUIRED)
# Boost.Asio (header-only) for the co-simulation sockets.
find_package(Boost 1.74 REQUIRED CONFIG)
# CMake's FindProtobuf module (Debian ships no protobuf-config.cmake); zlib for gzip'd traces.
find_package(Protobuf 3.21 REQUIRED)
find_package(ZLIB REQUIRED)
# MSCCL programs (platforms/collectives/MscclReader).
find_package(LibXml2 REQUIRED)
# libcrypto for the SHA-256 of trace files in the run report (a FIPS-validated implementation
# rather than one of our own).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

# One interface target carries SystemC and the definitions every consumer needs.
# SC_INCLUDE_DYNAMIC_PROCESSES: without it sc_spawn compiles only in files that happen
# to include a tlm_utils header first.
add_library(etsim_systemc INTERFACE)
target_link_libraries(etsim_systemc INTERFACE PkgConfig::SYSTEMC)
target_compile_definitions(etsim_systemc INTERFACE SC_INCLUDE_DYNAMIC_PROCESSES)

if(ETSIM_BUILD_APPS)
    find_package(CLI11 REQUIRED)
endif()
if(ETSIM_BUILD_TESTS)
    find_package(GTest 1.12 REQUIRED)
    include(GoogleTest)
endif()
if(ETSIM_BUILD_BENCH)
    find_package(benchmark 1.7 REQUIRED)
endif()

# Verilator (optional): the RTL co-simulation adapter (cosim/adapters/verilator/). On by
# default when Verilator is installed; -DETSIM_WITH_VERILATOR=OFF skips it, =ON requires it.
find_package(verilator QUIET)
option(ETSIM_WITH_VERILATOR "Build the Verilator RTL adapter, etsim-rtl and its tests"
       ${verilator_FOUND})
if(ETSIM_WITH_VERILATOR AND NOT verilator_FOUND)
    message(FATAL_ERROR "ETSIM_WITH_VERILATOR is ON but Verilator was not found: install the "
                        "Debian package verilator (scripts/install-deps.sh) or pass "
                        "-DETSIM_WITH_VERILATOR=OFF")
endif()
