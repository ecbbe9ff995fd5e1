// regionctl copy SRC DST [--protocol N] [--size SIZE] [--force] [--json]:
// a new store holding one consistent set of SRC's commits and its data area.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_COPY_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_COPY_H_

#include <CLI/CLI.hpp>

#include "regionstore/status.h"

namespace regionstore::regionctl {

// Registers the "copy" subcommand on `app`; its outcome goes to `outcome`.
void SetupCopy(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_COPY_H_
