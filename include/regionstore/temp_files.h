// Named temp files that a signal handler can remove.
//
// Store::Create and ReplaceFileAtomically build a new file as a nameless
// O_TMPFILE file where the filesystem allows it: such a file disappears with
// the process, whatever kills it. Where it does not (no O_TMPFILE, no way to
// link it later), they fall back to a hidden named temp beside the
// destination, which a process killed while building it leaves behind. A
// replace (Store::Create with replace_existing, ReplaceFileAtomically over an
// existing file) also gives a nameless temp such a name for the one syscall
// between its link and its rename.
//
// The name is ".<name>.tmp-<pid>-<boot>-<random>": the owner's process id
// (8 hex digits), the first 4 bytes of the boot id
// (/proc/sys/kernel/random/boot_id; 00000000 if it could not be read) and 4
// random bytes, all in hex. Before a create or an export makes its temp, it
// removes the temps of the same destination whose owner is gone (made in
// another boot, or by a process id that no longer exists), so SIGKILL loops
// do not pile them up. 0.10 and older named them ".<name>.tmp-<16 hex>":
// nothing tells whether their owner lives, so they are reported
// (FindStrayTemps) but never removed.
//
// While a named temp exists, its path is also kept in a fixed-size,
// lock-free table of the library, so that a handler of SIGINT, SIGTERM or
// SIGHUP can remove it before the process dies (regionctl does).
#ifndef REGIONSTORE_TEMP_FILES_H_
#define REGIONSTORE_TEMP_FILES_H_

#include <string>
#include <vector>

#include "regionstore/export.h"
#include "regionstore/io.h"
#include "regionstore/status.h"

namespace regionstore {

// A temp file beside a destination that no live process is building.
struct StrayTemp {
  std::string path;  // in the destination's directory, as that was named
  // true: its name says who made it, and that process is gone (the next
  // create or export of the destination removes it). false: named before
  // 0.11, with no owner in its name; remove it by hand once no create or
  // export of the destination is running.
  bool owner_gone = false;
};

// The stray temps of destination `path` (a store, an export's output), in
// path order: those whose owner is gone, and those named before 0.11.
// Temps of live processes, and of a boot that cannot be told, are left out.
// Caveat: "gone" is judged by /proc of this PID namespace, so a process in
// another PID namespace that writes into the same directory may look gone;
// if a create or export here removes its temp, that process's own create or
// export fails with kNotFound (nothing else is lost). Errors (listing the
// directory): kNotFound, kPermissionDenied, kIOError. `io` nullptr means
// Io::Default(). Thread safety: any thread.
REGIONSTORE_EXPORT Result<std::vector<StrayTemp>> FindStrayTemps(const std::string& path,
                                                                 Io* io = nullptr);

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
