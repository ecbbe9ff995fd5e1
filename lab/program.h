// What the plain benchmark programs (bench/*.cc with a main of their own)
// do around their measurements: make the directory they write into, skip a
// size the disk has no room for, and write their --json file. Each ends the
// program on an error it cannot measure around (Die). Not for regionctl.
#ifndef REGIONSTORE_LAB_PROGRAM_H_
#define REGIONSTORE_LAB_PROGRAM_H_

#include <cstdint>
#include <string>

#include "regionstore/io.h"

namespace regionstore::bench {

// Creates `dir` (and its parents) and returns what it sits on.
FsInfo PrepareBenchDir(const std::string& dir);

// False, after printing "### <what>: skipped: X free in <dir>, Y needed",
// when `dir`'s filesystem has less than `needed` bytes free; true when it
// has room (or its free space cannot be read).
bool HasRoom(const std::string& dir, uint64_t needed, const std::string& what);

// Writes `text` to `path`, replacing it; `flag` names the option that asked
// for it in the error.
void WriteOutputFile(const std::string& path, const std::string& text, const char* flag);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_PROGRAM_H_
