# Installation: headers, the shared library (with soname), regionctl, a CMake
# package (find_package(regionstore CONFIG) -> regionstore::regionstore) and a
# pkg-config file.
include(CMakePackageConfigHelpers)

set(REGIONSTORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/regionstore)

# Components, one package each (cmake/packaging.cmake): runtime (the shared
# library), development (headers, the linker name, the static library, the
# CMake and pkg-config files) and tools (regionctl, its man page and
# completion: tools/regionctl/CMakeLists.txt).
set(regionstore_install_targets regionstore)
if(REGIONSTORE_BUILD_STATIC)
  list(APPEND regionstore_install_targets regionstore_static)
endif()
install(TARGETS ${regionstore_install_targets} EXPORT regionstoreTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    COMPONENT runtime NAMELINK_COMPONENT development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/regionstore
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
  FILES_MATCHING PATTERN "*.h")
install(EXPORT regionstoreTargets
  NAMESPACE regionstore::
  DESTINATION ${REGIONSTORE_CMAKE_DIR} COMPONENT development)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/regionstoreConfig.cmake.in
  ${PROJECT_BINARY_DIR}/regionstoreConfig.cmake
  INSTALL_DESTINATION ${REGIONSTORE_CMAKE_DIR})
# 0.x: only the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/regionstoreConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/regionstoreConfig.cmake
  ${PROJECT_BINARY_DIR}/regionstoreConfigVersion.cmake
  DESTINATION ${REGIONSTORE_CMAKE_DIR} COMPONENT development)

# Relocatable: the prefix is found relative to the .pc file itself, so an
# install with `cmake --install --prefix` anywhere still works.
file(RELATIVE_PATH REGIONSTORE_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" REGIONSTORE_PC_TO_PREFIX "${REGIONSTORE_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/regionstore.pc.in
  ${PROJECT_BINARY_DIR}/regionstore.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/regionstore.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/regionstore
        COMPONENT runtime)
