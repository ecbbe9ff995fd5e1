// The table behind RemoveLiveTempFiles (regionstore/temp_files.h): the paths
// of the named temp files this process is building, in static storage that a
// signal handler can walk without locks or allocation.
#ifndef REGIONSTORE_LIB_TEMP_REGISTRY_H_
#define REGIONSTORE_LIB_TEMP_REGISTRY_H_

#include <string>

namespace regionstore::internal {

// Records `path` until UnregisterTemp; returns the slot, or -1 if the table
// is full or the path too long (the temp is then not removable by signal).
int RegisterTemp(const std::string& path) noexcept;

// Forgets `slot` (-1: nothing). If a RemoveLiveTempFiles on another thread
// is unlinking it right now, waits until that unlink returns, so the slot is
// never reused under it.
void UnregisterTemp(int slot) noexcept;

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_TEMP_REGISTRY_H_
