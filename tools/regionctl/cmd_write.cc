#include "cmd_write.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/durability.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct WriteArgs {
  std::string path;
  SymlinkPolicy symlinks = SymlinkPolicy::kRefuse;
  uint64_t offset = 0;
  std::string durability_name = "sync";
  std::string input_path;  // empty: standard input
  bool json = false;
};

Status RunWrite(const WriteArgs& args) {
  // DurabilityCheck already refused anything else; this keeps the value honest.
  const std::optional<Durability> durability = ParseDurability(args.durability_name);
  if (!durability.has_value()) {
    return Status::Error(StatusCode::kInvalidArgument, "write", args.path,
                         "unknown durability '" + args.durability_name + "'");
  }
  // Open before reading the input, so a missing, damaged or busy store fails
  // without consuming standard input.
  // Warnings of the open: shared blocks on btrfs (a snapshot), which a full
  // disk can turn into SIGBUS on a mapped write.
  std::vector<std::string> warnings;
  Result<Store> store = Store::Open(
      args.path, OpenMode::kReadWrite,
      {.symlinks = args.symlinks, .warnings = &warnings});
  for (const std::string& warning : warnings) {
    std::cerr << "regionctl: warning: " << warning << '\n';
  }
  if (!store.ok()) return store.status();
  const uint64_t data_size = store->data_size();
  if (args.offset > data_size) {
    return Status::Error(StatusCode::kInvalidArgument, "write", args.path,
                         "offset " + std::to_string(args.offset) +
                             " is past the end of the data area (" + std::to_string(data_size) +
                             " bytes)");
  }
  // Never buffer more than could be written: the input stops one byte past
  // the room left, and a longer input is refused before anything changes.
  const uint64_t room = data_size - args.offset;
  Result<Input> input = ReadInput(args.input_path, room);
  if (!input.ok()) return input.status();
  if (input->exceeds_limit) {
    return Status::Error(StatusCode::kInvalidArgument, "write", args.path,
                         "the input is longer than the " + std::to_string(room) +
                             " bytes from offset " + std::to_string(args.offset) +
                             " to the end of the data area (" + std::to_string(data_size) +
                             " bytes); nothing written");
  }
  Status written = store->Write(args.offset, input->bytes, *durability);
  if (!written.ok()) return written;
  SetStoreChanged();
  if (args.json) {
    PrintJsonDocument({{"path", args.path},
               {"offset", args.offset},
               {"file_offset", store->info().data_offset + args.offset},
               {"length", input->bytes.size()},
               {"durability", std::string(DurabilityName(*durability))}});
    return Status::Ok();
  }
  std::cout << "wrote " << input->bytes.size() << " bytes at data offset " << args.offset
            << " (file offset " << store->info().data_offset + args.offset << "), durability "
            << DurabilityName(*durability) << '\n';
  return Status::Ok();
}

}  // namespace

void SetupWrite(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<WriteArgs>();
  CLI::App* command = app.add_subcommand(
      "write", "Write the bytes of standard input (or --input FILE) at a data-area offset");
  command->footer(
      "Example:\n"
      "  head -c 1MiB /dev/urandom | regionctl write state.rs --offset 2MiB --durability sync\n"
      "Durability: none (memcpy), async (+ msync MS_ASYNC, starts nothing on Linux),\n"
      "sync (+ msync MS_SYNC), pwrite-fdatasync (pwrite + fdatasync). A multi-page write\n"
      "is not atomic under a crash.");
  command->add_option("PATH", args->path, "Path of the store file")->required()->type_name("");
  AddFollowSymlinksFlag(command, args->symlinks);
  command->add_option("--offset", args->offset, "Data-area offset of the first byte")
      ->required()
      ->type_name("N")
      ->transform(SizeTransform());
  command
      ->add_option("--durability", args->durability_name,
                   "What the write survives once it returns: none|async|sync|pwrite-fdatasync")
      ->type_name("MODE")
      ->capture_default_str()
      ->check(DurabilityCheck());
  command->add_option("--input", args->input_path, "Read the bytes from FILE, not standard input")
      ->type_name("FILE");
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunWrite(*args); });
}

}  // namespace regionstore::regionctl
