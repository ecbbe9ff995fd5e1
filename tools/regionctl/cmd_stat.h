// regionctl stat PATH [--json]: per checkpoint region, capacity, length,
// generation and age of the last commit; per store, what can be counted
// from the file alone. Reads metadata only.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_STAT_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_STAT_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "stat" subcommand on `app`; see SetupCommit for `outcome`.
void SetupStat(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_STAT_H_
