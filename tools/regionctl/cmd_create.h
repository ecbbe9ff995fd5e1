// regionctl create PATH --size SIZE [--checkpoint NAME:CAPACITY]... [--force]:
// makes a new store file, optionally with checkpoint regions.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_CREATE_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_CREATE_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "create" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupCreate(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_CREATE_H_
