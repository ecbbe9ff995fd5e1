#include "cmd_read.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "common.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct ReadArgs : StoreArgs {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string output_path;  // empty: standard output
};

Status RunRead(const ReadArgs& args) {
  Result<Store> store = Store::Open(args.path, OpenMode::kReadOnly, {.symlinks = args.symlinks});
  if (!store.ok()) return store.status();
  // A view of the mapping instead of a copy: any length within the data area
  // streams out without a buffer of that size. The store validates the range.
  Result<std::span<const std::byte>> bytes = store->View(args.offset, args.length);
  if (!bytes.ok()) return bytes.status().WithOperation("read", args.path);
  return WriteOutput(args.output_path, *bytes, args.path);
}

}  // namespace

void SetupRead(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<ReadArgs>();
  CLI::App* command = AddCommand(
      app, "read", "Copy bytes of the data area to standard output (or --output FILE)",
      "Example:\n"
      "  regionctl read state.rs --offset 2MiB --length 1MiB --output region.bin\n"
      "The output is the raw bytes, nothing added. Reading takes no lock. --output FILE\n"
      "is truncated, then written (not atomic). An --output, or a standard output, that\n"
      "is the store itself is refused (exit 2).");
  AddStoreArguments(command, *args);
  AddSizeOption(command, "--offset", args->offset, "Data-area offset of the first byte")
      ->required();
  AddSizeOption(command, "--length", args->length, "Number of bytes to read")->required();
  DashMeansStandardStream(
      command
          ->add_option("--output", args->output_path,
                       "Write the bytes to FILE (created or truncated, mode 0644; '-': standard "
                       "output)")
          ->type_name("FILE"));
  command->callback([args, &outcome] { outcome = RunRead(*args); });
}

}  // namespace regionstore::regionctl
