// regionctl inspect PATH [--json]: shows the superblock, the region table and
// the state of every checkpoint slot of a store.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_INSPECT_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_INSPECT_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "inspect" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupInspect(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_INSPECT_H_
