// regionctl load PATH NAME [--output FILE]: copies out the newest valid
// commit of a checkpoint region.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_LOAD_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_LOAD_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "load" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupLoad(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_LOAD_H_
