// Copy-on-write filesystems: NOCOW at create (btrfs), shared extents at a
// writer's open, and UnshareStore. Lib-internal.
#ifndef REGIONSTORE_LIB_COW_H_
#define REGIONSTORE_LIB_COW_H_

#include <string>
#include <vector>

#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/store.h"

namespace regionstore::internal {

// True where FS_NOCOW_FL exists and keeps overwrites in place: btrfs.
bool CanDisableCopyOnWrite(const FsInfo& fs);

// Sets FS_NOCOW_FL on `file`, which must still be empty (btrfs ignores the
// flag on a file with data), and reads it back. Returns the warning for
// Create's caller: what still holds with the flag set, or, if it could not
// be set, that a full disk can turn a mapped write into SIGBUS, and why.
std::string DisableCopyOnWrite(File& file, const FsInfo& fs, const std::string& directory);

// The check of a writer's open: asks FIEMAP about [0, file_size) unless the
// filesystem cannot share blocks. OK, or OK with a warning appended to
// options.warnings, or kSharedExtents.
Status CheckSharedExtents(Io& io, File& file, const std::string& path, uint64_t file_size,
                          const OpenOptions& options);

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_COW_H_
