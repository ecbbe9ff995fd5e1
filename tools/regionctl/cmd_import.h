// regionctl import PATH NAME --input FILE [--durability MODE] [--json]: the
// inverse of export, a commit of FILE's bytes to a checkpoint region.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_IMPORT_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_IMPORT_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "import" subcommand on `app`; see SetupCommit for `outcome`.
void SetupImport(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_IMPORT_H_
