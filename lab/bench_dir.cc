#include "lab/bench_dir.h"

#include <sys/utsname.h>

#include <cstdint>
#include <cstdlib>

namespace regionstore::bench {

std::string BenchDirFromEnv(const char* default_dir) {
  const char* dir = std::getenv("REGIONSTORE_BENCH_DIR");
  return dir != nullptr && *dir != '\0' ? dir : default_dir;
}

bool MeasuresNoDisk(const FsInfo& fs) {
  // ramfs has no name in FsInfo (its magic, linux/magic.h, shows as hex).
  constexpr uint64_t kRamfsMagic = 0x858458f6;
  return fs.type_name == "tmpfs" || fs.type_name == "overlayfs" || fs.type_magic == kRamfsMagic;
}

std::string KernelRelease() {
  struct utsname names {};
  if (::uname(&names) != 0) return "unknown";
  return names.release;
}

}  // namespace regionstore::bench
