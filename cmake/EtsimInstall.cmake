# `make install` exports a CMake package so a user's project embeds etsim with
# find_package(etsim) and links etsim::kernel (and the other libraries).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(etsim_systemc PROPERTIES EXPORT_NAME systemc)
set_target_properties(etsim_ns3_description PROPERTIES EXPORT_NAME ns3_description)
set(ETSIM_INSTALLED_LIBRARIES etsim_systemc etsim_core etsim_kernel etsim_net_topology etsim_cosim_peer etsim_ns3_description etsim_cosim etsim_models etsim_et_driver etsim_importers etsim_workloads etsim_platforms)
install(TARGETS ${ETSIM_INSTALLED_LIBRARIES} EXPORT etsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(_dir IN ITEMS kernel cosim models et_driver importers workloads platforms)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/etsim/${_dir}
            FILES_MATCHING PATTERN "*.h")
endforeach()
# Generated protobuf headers of et_driver, next to the layer's own headers.
install(FILES ${PROJECT_BINARY_DIR}/et_driver/proto/et_def.pb.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/etsim/et_driver/proto)
install(EXPORT etsimTargets NAMESPACE etsim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etsim)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/etsimConfig.cmake.in
    ${PROJECT_BINARY_DIR}/etsimConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etsim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/etsimConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/etsimConfig.cmake ${PROJECT_BINARY_DIR}/etsimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/etsim)
