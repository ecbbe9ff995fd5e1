// regionctl export PATH NAME --output FILE [--no-fsync] [--json]: the newest
// valid commit of a checkpoint region to an ordinary file, replaced
// atomically (readers of FILE see the old content or the new, never part).
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_EXPORT_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_EXPORT_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "export" subcommand on `app`; see SetupCommit for `outcome`.
void SetupExport(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_EXPORT_H_
