// regionctl read PATH --offset N --length N [--output FILE]: raw read.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_READ_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_READ_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "read" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupRead(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_READ_H_
