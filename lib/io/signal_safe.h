// The OS calls of lib/ that must be safe in a signal handler (the temp-file
// registry's removal). Lib-internal.
#ifndef REGIONSTORE_LIB_IO_SIGNAL_SAFE_H_
#define REGIONSTORE_LIB_IO_SIGNAL_SAFE_H_

namespace regionstore::internal {

// unlink(path): 0, or -1 on failure. Async-signal-safe; errno is left as it
// was on entry (a handler must not change what the interrupted code sees).
int UnlinkForSignal(const char* path) noexcept;

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_IO_SIGNAL_SAFE_H_
