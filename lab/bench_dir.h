// Where a benchmark writes its files, and what that directory sits on. The
// filesystem's name comes from the io seam (Io::StatFs, FsInfo::type_name),
// so the benchmarks, regionctl bench and regionctl inspect name it alike.
#ifndef REGIONSTORE_LAB_BENCH_DIR_H_
#define REGIONSTORE_LAB_BENCH_DIR_H_

#include <string>

#include "regionstore/io.h"

namespace regionstore::bench {

// $REGIONSTORE_BENCH_DIR, or `default_dir` when it is unset or empty.
std::string BenchDirFromEnv(const char* default_dir);

// True when durable arms on `fs` reach no disk: memory (tmpfs, ramfs) or
// overlayfs, whose fdatasync has nothing to flush.
bool MeasuresNoDisk(const FsInfo& fs);

// The running kernel's release (uname -r), or "unknown".
std::string KernelRelease();

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_BENCH_DIR_H_
