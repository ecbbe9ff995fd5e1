// What regionctl does on SIGINT, SIGTERM and SIGHUP.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_SIGNALS_H_
#define REGIONSTORE_TOOLS_REGIONCTL_SIGNALS_H_

namespace regionstore::regionctl {

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the named
// temp files the library is building (regionstore::RemoveLiveTempFiles),
// then die of the same signal (default action restored, signal re-raised),
// so the parent sees the usual "killed by signal" status. A nameless
// (O_TMPFILE) temp needs nothing: it goes with the process. Call once, at
// start, before any other thread exists.
void RemoveTempFilesOnTerminatingSignals();

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_SIGNALS_H_
