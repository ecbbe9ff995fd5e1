// regionctl verify PATH [--json]: checks the superblock, the region table and
// every checksum of every checkpoint slot, with pread.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_VERIFY_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_VERIFY_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "verify" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupVerify(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_VERIFY_H_
