# Warnings and sanitizers for etsim's own targets (not for generated code).

# Install paths (CMAKE_INSTALL_INCLUDEDIR, ...) must exist before the first library names them
# in its INSTALL_INTERFACE include path.
include(GNUInstallDirs)

add_library(etsim_warnings INTERFACE)
target_compile_options(etsim_warnings INTERFACE -Wall -Wextra -Wpedantic -Wnon-virtual-dtor
                                                -Wno-unused-parameter)
# clang (the fuzz build) has no -Wshadow=local; its -Wshadow would also flag members.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(etsim_warnings INTERFACE -Wshadow=local)
endif()

if(ETSIM_SANITIZE)
    string(REPLACE "," ";" _etsim_sanitizers "${ETSIM_SANITIZE}")
    foreach(_san IN LISTS _etsim_sanitizers)
        if(NOT _san MATCHES "^(address|undefined|leak|thread)$")
            message(FATAL_ERROR "ETSIM_SANITIZE: unknown sanitizer '${_san}' "
                                "(allowed: address, undefined, leak, thread)")
        endif()
    endforeach()
    add_compile_options(-fsanitize=${ETSIM_SANITIZE} -fno-omit-frame-pointer
                        -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=${ETSIM_SANITIZE})
endif()

# Declares an etsim library: the target etsim_<name>, its alias etsim::<name>,
# include paths rooted at the repository so includes name their layer.
function(etsim_add_library name)
    add_library(etsim_${name} ${ARGN})
    add_library(etsim::${name} ALIAS etsim_${name})
    set_target_properties(etsim_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME etsim_${name}
                                                   POSITION_INDEPENDENT_CODE ON)
    target_include_directories(etsim_${name} PUBLIC
        $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
        $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/etsim>)
    target_link_libraries(etsim_${name} PRIVATE $<BUILD_INTERFACE:etsim_warnings>)
endfunction()
