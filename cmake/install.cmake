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

# The pkg-config file's prefix is chosen at install time, when the prefix is
# known (`cmake --install --prefix`, cpack's /usr; cmake/install_pc.cmake.in):
# under /usr and /usr/local it is written out, so `pkg-config --cflags` prints
# -I/usr/include (which pkg-config drops as a system directory) or
# -I/usr/local/include; anywhere else it is found relative to the .pc file,
# so a tree installed with --prefix and then moved still works
# (scripts/check-install.sh moves one). Here everything but the prefix is
# filled in; @REGIONSTORE_PC_PREFIX@ stays for the install step.
file(RELATIVE_PATH REGIONSTORE_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" REGIONSTORE_PC_TO_PREFIX "${REGIONSTORE_PC_TO_PREFIX}")
set(REGIONSTORE_PC_PREFIX "@REGIONSTORE_PC_PREFIX@")
configure_file(${PROJECT_SOURCE_DIR}/cmake/regionstore.pc.in
  ${PROJECT_BINARY_DIR}/pkgconfig/regionstore.pc.in @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/install_pc.cmake.in
  ${PROJECT_BINARY_DIR}/pkgconfig/install_pc.cmake @ONLY)
install(SCRIPT ${PROJECT_BINARY_DIR}/pkgconfig/install_pc.cmake COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/regionstore
        COMPONENT runtime)
