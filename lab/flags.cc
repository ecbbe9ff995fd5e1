#include "lab/flags.h"

#include <cstdlib>
#include <string>

#include "lab/die.h"

namespace regionstore::bench {

bool ParseCommonFlag(std::string_view arg, CommonFlags& flags) {
  if (arg == "--quick") {
    flags.quick = true;
  } else if (arg == "--realtime") {
    flags.realtime = true;
  } else if (arg.starts_with("--rounds=")) {
    flags.rounds = std::atoi(std::string(arg.substr(9)).c_str());
    if (flags.rounds < 1) Die("--rounds needs a positive number");
  } else {
    return false;
  }
  return true;
}

}  // namespace regionstore::bench
