// Temp files beside their destination, for publish-by-rename: Store::Create
// and ReplaceFileAtomically build the new file under a hidden random name in
// the destination's directory (so the rename stays on one filesystem), then
// rename it over the destination; on any failure the temp goes.
#ifndef REGIONSTORE_LIB_TEMP_FILE_H_
#define REGIONSTORE_LIB_TEMP_FILE_H_

#include <memory>
#include <string>

#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore::internal {

// The directory holding `path` ("." for a bare file name).
std::string DirectoryOf(const std::string& path);

struct TempFile {
  std::string path;
  std::unique_ptr<File> file;
};

// Creates ".<name of path>.tmp-<16 random hex digits>" in path's directory,
// exclusively (O_EXCL, mode 0600): an unpredictable name that never opens
// something planted there. `operation` prefixes the errors, which name
// `path`: those of FillRandom and CreateExclusive (kNotFound when the
// directory is missing, kPermissionDenied).
Result<TempFile> CreateTempBeside(Io& io, const std::string& path, const std::string& operation);

// Closes and removes the temp after `failure`, and returns `failure`; if the
// temp cannot be removed, the message also says so and names it.
Status DiscardTemp(Io& io, TempFile& temp, const Status& failure);

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_TEMP_FILE_H_
