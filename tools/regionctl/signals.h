// What regionctl does on SIGINT, SIGTERM and SIGHUP.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_SIGNALS_H_
#define REGIONSTORE_TOOLS_REGIONCTL_SIGNALS_H_

#include <string>

namespace regionstore::regionctl {

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the named
// temp files the library is building (regionstore::RemoveLiveTempFiles),
// then die of the same signal (default action restored, signal re-raised),
// so the parent sees the usual "killed by signal" status. A nameless
// (O_TMPFILE) temp needs nothing: it goes with the process. Call once, at
// start, before any other thread exists.
void RemoveTempFilesOnTerminatingSignals();

// Files of regionctl's own that the same handlers remove: bench's stores and
// their sidecars, which live for the whole run (~15 s) and which an
// interrupted bench would otherwise leave in DIR. Up to kMaxOwnFiles paths shorter than 4096 bytes
// at a time; Remember returns false (and remembers nothing) past that. Forget before removing the
// file yourself. Not thread-safe against each other; safe against the handler.
inline constexpr int kMaxOwnFiles = 8;
bool RememberToRemoveOnSignal(const std::string& path);
void ForgetToRemoveOnSignal(const std::string& path);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_SIGNALS_H_
