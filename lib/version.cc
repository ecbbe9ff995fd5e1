#include "regionstore/version.h"

namespace regionstore {

const char* VersionString() { return REGIONSTORE_VERSION_STRING; }

}  // namespace regionstore
