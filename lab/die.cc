#include "lab/die.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace regionstore::bench {

void Die(const std::string& what) {
  // The name the program was started as (glibc), e.g. regionstore_commit_bench.
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(1);
}

std::string Errno(const char* call, const std::string& path) {
  std::string message = call;
  message += " ";
  message += path;
  message += ": ";
  message += std::strerror(errno);
  return message;
}

}  // namespace regionstore::bench
