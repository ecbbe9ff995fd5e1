// regionctl dump PATH [--offset N --length N | --region NAME]: bytes of the
// data area, or the newest valid commit of a checkpoint region, as hex and
// ASCII lines in the style of xxd.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_DUMP_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_DUMP_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "dump" subcommand on `app`; see SetupCommit for `outcome`.
void SetupDump(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_DUMP_H_
