// The regionstore version. CMake reads the project version from the three
// macros below, so this file is the single source of it.
//
// Compatibility: within one MAJOR.MINOR (while MAJOR is 0) the ABI is stable
// and the shared library's soname is libregionstore.so.MAJOR.MINOR; the
// on-disk format has its own version (docs/FORMAT.md). Adding a virtual
// function to Io/File/Mapping or a durability mode (StoreStats::by_mode) is
// an ABI change, so it comes with a new minor version.
#ifndef REGIONSTORE_VERSION_H_
#define REGIONSTORE_VERSION_H_

#include "regionstore/export.h"

#define REGIONSTORE_VERSION_MAJOR 0
#define REGIONSTORE_VERSION_MINOR 15
#define REGIONSTORE_VERSION_PATCH 0
#define REGIONSTORE_VERSION_STRINGIZE_(x) #x
#define REGIONSTORE_VERSION_STRINGIZE(x) REGIONSTORE_VERSION_STRINGIZE_(x)
#define REGIONSTORE_VERSION_STRING                                                                \
  REGIONSTORE_VERSION_STRINGIZE(REGIONSTORE_VERSION_MAJOR)                                        \
  "." REGIONSTORE_VERSION_STRINGIZE(REGIONSTORE_VERSION_MINOR) "." REGIONSTORE_VERSION_STRINGIZE( \
      REGIONSTORE_VERSION_PATCH)

namespace regionstore {

// The version of the library actually loaded, "MAJOR.MINOR.PATCH"; compare
// with REGIONSTORE_VERSION_STRING to detect a header/library mismatch.
REGIONSTORE_EXPORT const char* VersionString();

}  // namespace regionstore

#endif  // REGIONSTORE_VERSION_H_
