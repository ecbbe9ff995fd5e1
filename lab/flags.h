// The command-line flags every plain benchmark program takes.
#ifndef REGIONSTORE_LAB_FLAGS_H_
#define REGIONSTORE_LAB_FLAGS_H_

#include <string_view>

namespace regionstore::bench {

struct CommonFlags {
  bool quick = false;     // --quick: a short run
  bool realtime = false;  // --realtime: durable arms under SCHED_FIFO
  int rounds = 0;         // --rounds=N; 0: the program's default for the run length
};

// Takes `arg` into `flags` if it is --quick, --realtime or --rounds=N (a
// --rounds that is not a positive number ends the program, Die); false for
// any other argument.
bool ParseCommonFlag(std::string_view arg, CommonFlags& flags);

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_FLAGS_H_
