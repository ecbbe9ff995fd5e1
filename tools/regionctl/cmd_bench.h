// regionctl bench [--dir DIR] [--json] [--seconds S]: the region lab on the
// user's disk, every durability mode, with a recommendation.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_BENCH_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_BENCH_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "bench" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupBench(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_BENCH_H_
