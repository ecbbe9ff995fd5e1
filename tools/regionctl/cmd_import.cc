#include "cmd_import.h"

#include <memory>

#include "cmd_commit.h"

namespace regionstore::regionctl {

void SetupImport(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<CommitArgs>();
  CLI::App* command = AddCommand(
      app, "import", "Commit the bytes of FILE to checkpoint region NAME (the inverse of export)",
      "Example:\n"
      "  regionctl import state.rs state --input state.bin --durability pwrite-fdatasync\n"
      "A commit: all or nothing, durable as --durability says (default sync). A file\n"
      "longer than the region's capacity is refused (exit 2) and nothing changes.");
  AddCommitOptions(command, args, /*input_required=*/true, outcome);
}

}  // namespace regionstore::regionctl
