// regionctl unshare PATH: gives a store blocks of its own (reflinks, snapshots).
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_UNSHARE_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_UNSHARE_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "unshare" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupUnshare(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_UNSHARE_H_
