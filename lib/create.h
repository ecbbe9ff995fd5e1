// Store::Create's steps with a hook before the new file is synced and
// published: what Store::CopyTo uses to build a store that already holds
// commits, with every guarantee of Create (a temp beside the path, one
// publish, nothing at the path after a failure or a kill).
#ifndef REGIONSTORE_LIB_CREATE_H_
#define REGIONSTORE_LIB_CREATE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store.h"
#include "regionstore/store_info.h"

namespace regionstore::internal {

// Writes into the temp file, zero-filled and with its superblock, before it
// is synced. `info` is the new store's layout. An error discards the temp.
using PopulateFn = std::function<Status(File& file, const StoreInfo& info)>;

// Store::Create, with `populate` (may be empty) run before the sync.
Status CreateStore(const std::string& path, uint64_t data_size, const CreateOptions& options,
                   const PopulateFn& populate);

// The CreateOptions that lay a new store out as the store `info` describes
// (its batch log, its journal's size), in `protocol` (0: the same one; a
// protocol 2 copy of a protocol 1 store gets the default journal). Regions
// and everything else are the caller's. Errors: kInvalidArgument (no such
// protocol), its message naming the choices.
Result<CreateOptions> LayoutLike(const StoreInfo& info, uint32_t protocol);

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_CREATE_H_
