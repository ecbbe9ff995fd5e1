// Replacing a whole file so that readers see the old content or the new,
// never a part of either: what `regionctl export` uses to write a checkpoint
// to an ordinary file.
#ifndef REGIONSTORE_ATOMIC_FILE_H_
#define REGIONSTORE_ATOMIC_FILE_H_

#include <cstddef>
#include <span>
#include <string>

#include "regionstore/export.h"
#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore {

struct ReplaceOptions {
  // fsync the new file before the rename and its directory after it, so the
  // new content is what survives a power loss once the call returns OK.
  // false: the same steps without either fsync (faster; after a power loss
  // the file may hold the old content, the new, or, on some filesystems,
  // nothing).
  bool durable = true;
  // nullptr: Io::Default().
  Io* io = nullptr;
};

// Creates or replaces the file at `path` with exactly `data`:
//   1. a temp file in path's directory, mode 0600, so the publish stays on
//      one filesystem: nameless (O_TMPFILE) where the Io, kernel and
//      filesystem allow it, else a hidden random name made with O_EXCL
//      (never opens a file planted at a guessable name);
//   2. write all of `data`; 3. fsync; 4. rename over `path` (a nameless temp
//      is first linked onto a hidden random name, then renamed);
//   5. fsync of the directory, so the rename itself is durable.
// A reader that opens `path` at any moment, even while a crash or a SIGKILL
// interrupts this, finds the old file or the new one, complete. On a failure
// before the rename the temp file is removed and `path` is untouched. A
// SIGKILL leaves a nameless temp behind only if it lands between its link
// and the rename; it leaves a named temp (never reused); a signal handler
// can remove named temps with RemoveLiveTempFiles (temp_files.h). One failure comes
// after it: if the directory fsync fails, the new file is in place but its
// name may not survive a power loss (the message says so). The new file has
// mode 0600 whatever the old one had. If `path` is a symbolic link, the link
// itself is replaced, not its target; a link to a directory is refused.
// Something that is not a regular file at `path` (a FIFO, a device, a
// socket, or a link to one) is refused before anything is written: the
// rename would put a regular file in its place.
// Errors, naming `path` and the step: kInvalidArgument (not a regular
// file), kNotFound (no such directory), kPermissionDenied, kNoSpace,
// kIOError (also, with EISDIR, when `path` is a directory).
REGIONSTORE_EXPORT Status ReplaceFileAtomically(const std::string& path,
                                                std::span<const std::byte> data,
                                                const ReplaceOptions& options = {});

}  // namespace regionstore

#endif  // REGIONSTORE_ATOMIC_FILE_H_
