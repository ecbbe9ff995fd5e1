// Umbrella header: the whole public API of regionstore.
#ifndef REGIONSTORE_REGIONSTORE_H_
#define REGIONSTORE_REGIONSTORE_H_

#include "regionstore/atomic_file.h"  // IWYU pragma: export
#include "regionstore/checkpoint.h"   // IWYU pragma: export
#include "regionstore/durability.h"   // IWYU pragma: export
#include "regionstore/io.h"           // IWYU pragma: export
#include "regionstore/status.h"       // IWYU pragma: export
#include "regionstore/store.h"        // IWYU pragma: export
#include "regionstore/store_info.h"   // IWYU pragma: export
#include "regionstore/temp_files.h"   // IWYU pragma: export
#include "regionstore/version.h"      // IWYU pragma: export

#endif  // REGIONSTORE_REGIONSTORE_H_
