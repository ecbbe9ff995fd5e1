// Named temp files that a signal handler can remove.
//
// Store::Create and ReplaceFileAtomically build a new file as a nameless
// O_TMPFILE file where the filesystem allows it: such a file disappears with
// the process, whatever kills it. Where it does not (no O_TMPFILE, no way to
// link it later), they fall back to a hidden named temp beside the
// destination, ".<name>.tmp-<16 hex digits>", which a process killed while
// building it leaves behind. While such a temp exists, its path is kept in a
// fixed-size, lock-free table of the library, so that a handler of SIGINT,
// SIGTERM or SIGHUP can remove it before the process dies (regionctl does).
// SIGKILL cannot be caught: only the nameless temps protect against it.
#ifndef REGIONSTORE_TEMP_FILES_H_
#define REGIONSTORE_TEMP_FILES_H_

#include "regionstore/export.h"

namespace regionstore {

// Unlinks every named temp file that a Store::Create or a
// ReplaceFileAtomically in this process is building at this moment, and
// forgets it; returns how many it unlinked. Each path is unlinked as the
// library was given it, so a relative one is relative to the working
// directory at the time of the call: do not chdir while a create runs if
// you rely on this. A call interrupted by this one then fails (its temp is
// gone) and removes nothing else. At most 64 temps at a time are tracked,
// with paths shorter than 4096 bytes; one beyond that is not removed here.
// Nameless temps need no removal and are not counted.
//
// Async-signal-safe: no allocation, no locks, errno preserved; meant to be
// called from a signal handler that then ends the process. Thread safety:
// may run concurrently with creates on other threads.
REGIONSTORE_EXPORT int RemoveLiveTempFiles() noexcept;

}  // namespace regionstore

#endif  // REGIONSTORE_TEMP_FILES_H_
