// regionctl commit PATH NAME [--input FILE] [--durability MODE] [--json]:
// replaces the content of a checkpoint region, all or nothing.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_COMMIT_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_COMMIT_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "commit" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupCommit(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_COMMIT_H_
