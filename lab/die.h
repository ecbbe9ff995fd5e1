// How the plain benchmark programs stop on an error they cannot measure
// around: one line on stderr, prefixed with the program's name, and exit 1.
// Not for regionctl, which reports errors as Status values.
#ifndef REGIONSTORE_LAB_DIE_H_
#define REGIONSTORE_LAB_DIE_H_

#include <string>

namespace regionstore::bench {

// "<program>: <what>" on stderr, then exit(1).
[[noreturn]] void Die(const std::string& what);

// "<call> <path>: <strerror(errno)>".
std::string Errno(const char* call, const std::string& path);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_DIE_H_
