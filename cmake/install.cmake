# Installation: headers, the shared library (with soname), regionctl, a CMake
# package (find_package(regionstore CONFIG) -> regionstore::regionstore) and a
# pkg-config file.
include(CMakePackageConfigHelpers)

set(REGIONSTORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/regionstore)

install(TARGETS regionstore EXPORT regionstoreTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/regionstore
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(EXPORT regionstoreTargets
  NAMESPACE regionstore::
  DESTINATION ${REGIONSTORE_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/regionstoreConfig.cmake.in
  ${PROJECT_BINARY_DIR}/regionstoreConfig.cmake
  INSTALL_DESTINATION ${REGIONSTORE_CMAKE_DIR})
# 0.x: only the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/regionstoreConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/regionstoreConfig.cmake
  ${PROJECT_BINARY_DIR}/regionstoreConfigVersion.cmake
  DESTINATION ${REGIONSTORE_CMAKE_DIR})

# Relocatable: the prefix is found relative to the .pc file itself, so an
# install with `cmake --install --prefix` anywhere still works.
file(RELATIVE_PATH REGIONSTORE_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" REGIONSTORE_PC_TO_PREFIX "${REGIONSTORE_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/regionstore.pc.in
  ${PROJECT_BINARY_DIR}/regionstore.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/regionstore.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/regionstore)
