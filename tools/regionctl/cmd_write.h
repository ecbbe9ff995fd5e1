// regionctl write PATH --offset N [--durability MODE] [--input FILE]: raw write.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_WRITE_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_WRITE_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "write" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupWrite(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_WRITE_H_
