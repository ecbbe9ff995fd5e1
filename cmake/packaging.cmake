# Debian packages, one per install component (cmake/install.cmake):
#   cpack -G DEB --config build/release/CPackConfig.cmake
# makes libregionstore<MAJOR.MINOR> (the shared library), libregionstore-dev
# (headers, CMake and pkg-config files, the static library when built) and
# regionctl (the tool, its man page and bash completion), for /usr, with the
# library in the multiarch directory (/usr/lib/x86_64-linux-gnu: see
# CMAKE_INSTALL_LIBDIR in the top CMakeLists.txt).
# Dependencies are named by hand (no dpkg-shlibdeps): Debian 12's.
set(CPACK_PACKAGE_NAME regionstore)
set(CPACK_PACKAGE_VENDOR "regionstore")
set(CPACK_PACKAGE_CONTACT "regionstore maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Install with DESTDIR and CMAKE_INSTALL_PREFIX=/usr (CPACK_INSTALL_PREFIX:
# with DESTDIR, cpack installs to that, not to the packaging prefix) rather
# than to a staging prefix: the install step's own choices for /usr
# (regionctl without RUNPATH, the pkg-config file naming /usr) then apply to
# the packages.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_COMPONENTS_ALL runtime development tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)

set(regionstore_runtime_package libregionstore${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(regionstore_exact "(= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${regionstore_runtime_package})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libc6 (>= 2.36), libstdc++6 (>= 12), libxxhash0")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "regionstore's shared library (C++ and C API)")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libregionstore-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
    "${regionstore_runtime_package} ${regionstore_exact}, libxxhash-dev")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "regionstore's headers, CMake package and pkg-config file")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME regionctl)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${regionstore_runtime_package} ${regionstore_exact}")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "regionctl: create, inspect, verify, read and write regionstore files")
include(CPack)
