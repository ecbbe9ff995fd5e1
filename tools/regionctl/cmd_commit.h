// regionctl commit PATH NAME [--input FILE] [--durability MODE] [--json]:
// replaces the content of a checkpoint region, all or nothing; and
// regionctl commit PATH --set NAME=FILE [--set NAME=FILE ...]: several
// regions as one batch.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_CMD_COMMIT_H_
#define REGIONSTORE_TOOLS_REGIONCTL_CMD_COMMIT_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/status.h"

namespace regionstore::regionctl {

struct CommitArgs : StoreArgs {
  std::string name;
  std::string durability_name = "sync";
  std::string input_path;  // empty: standard input
  bool json = false;
  // --set NAME=FILE, as typed: a batch of several regions (commit only).
  std::vector<std::string> sets;
};

// Commits the input to the region and prints the new generation (a sentence,
// or one JSON object). Also what "import" runs.
Status RunCommit(const CommitArgs& args);

// The options commit and import share: PATH, NAME, --durability, --input
// (required for import), --json; and the callback that runs RunCommit.
void AddCommitOptions(CLI::App* command, const std::shared_ptr<CommitArgs>& args,
                      bool input_required, Status& outcome);

// Registers the "commit" subcommand on `app`. When it runs, its callback
// stores the command's outcome in `outcome`, which must outlive `app`'s
// parse() call.
void SetupCommit(CLI::App& app, Status& outcome);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_CMD_COMMIT_H_
