#include "cmd_commit.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/durability.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {

namespace {

Status Usage(const CommitArgs& args, std::string message) {
  return Status::Error(StatusCode::kInvalidArgument, "commit", args.path, std::move(message));
}

// Streams `input` into a commit filled in place through `append`, in
// chunks of kStreamChunk, so that memory stays bounded whatever the
// payload's size. An input longer than region's capacity, or a failed
// read, fails before its excess is appended: the caller then abandons the
// commit, leaving the region as it was.
constexpr size_t kStreamChunk = size_t{1} << 20;

template <typename Append>
Result<uint64_t> StreamInput(const CommitArgs& args, InputReader& input, const RegionEntry& region,
                             std::vector<std::byte>& chunk, Append&& append) {
  uint64_t length = 0;
  for (;;) {
    Result<size_t> got = input.Read(chunk);
    if (!got.ok()) return got.status();
    if (*got > region.capacity - length) {
      return Usage(args, QuoteName(input.name()) + " is longer than the capacity of region " +
                             QuoteName(region.name) + " (" + std::to_string(region.capacity) +
                             " bytes); nothing committed");
    }
    if (Status s = append(std::span(chunk).first(*got)); !s.ok()) return s;
    length += *got;
    if (*got < chunk.size()) return length;
  }
}

// commit PATH --set NAME=FILE ...: every region named and every input
// opened, then one batch filled in place (BeginBatch), each input streamed
// into its member, and finished with one barrier.
Status RunBatchCommit(const CommitArgs& args, Durability durability) {
  if (!args.name.empty() || !args.input_path.empty()) {
    return Usage(args, "--set commits a batch: give no NAME or --input beside it");
  }
  struct Member {
    std::string name, file;
    RegionEntry region;
    std::unique_ptr<InputReader> input;
    uint64_t length = 0;
  };
  std::vector<Member> members;
  for (const std::string& text : args.sets) {
    // The name ends at the first '=': a region whose name holds one is
    // committed with the positional form.
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
      return Usage(args, "--set " + QuoteName(text) + ": expected NAME=FILE");
    }
    members.push_back({text.substr(0, equals), text.substr(equals + 1), {}, {}, 0});
  }
  size_t from_stdin = 0;
  for (const Member& member : members) from_stdin += member.file == "-" ? 1 : 0;
  if (from_stdin > 1) return Usage(args, "--set: standard input ('-') can be read only once");
  // Open and find every region before reading any input, as for one region.
  Result<Store> store = OpenWriterPrintingWarnings(args);
  if (!store.ok()) return store.status();
  std::vector<BatchReservation> reservations;
  for (size_t m = 0; m < members.size(); ++m) {
    for (size_t earlier = 0; earlier < m; ++earlier) {
      if (members[earlier].name == members[m].name) {
        return Usage(args, "region " + QuoteName(members[m].name) + " is named twice");
      }
    }
    Result<RegionEntry> region = FindRegionEntry(store->info(), members[m].name, args.path, "commit");
    if (!region.ok()) return region.status();
    members[m].region = std::move(*region);
    reservations.push_back({members[m].region.name, members[m].region.capacity});
  }
  for (Member& member : members) {
    Result<std::unique_ptr<InputReader>> input =
        InputReader::Open(member.file == "-" ? "" : member.file);
    if (!input.ok()) return input.status();
    member.input = std::move(*input);
  }
  Result<PendingBatch> pending = store->BeginBatch(reservations);
  if (!pending.ok()) return pending.status();
  std::vector<std::byte> chunk(kStreamChunk);
  std::vector<uint64_t> lengths;
  for (size_t m = 0; m < members.size(); ++m) {
    Result<uint64_t> length =
        StreamInput(args, *members[m].input, members[m].region, chunk,
                    [&](std::span<const std::byte> bytes) { return pending->Append(m, bytes); });
    if (!length.ok()) return length.status();
    lengths.push_back(*length);
  }
  Result<std::vector<uint64_t>> generations = pending->Finish(lengths, durability);
  if (!generations.ok()) return generations.status();
  SetStoreChanged();
  if (args.json) {
    nlohmann::ordered_json regions = nlohmann::ordered_json::array();
    for (size_t m = 0; m < members.size(); ++m) {
      regions.push_back({{"name", members[m].region.name},
                         {"generation", (*generations)[m]},
                         {"length", lengths[m]}});
    }
    const nlohmann::ordered_json document = {
        {"schema_version", kJsonSchemaVersion},
        {"path", args.path},
        {"regions", std::move(regions)},
        {"durability", std::string(DurabilityName(durability))},
    };
    PrintJsonDocument(document);
  } else {
    std::cout << "committed a batch of " << members.size() << " regions, durability "
              << DurabilityName(durability) << ":\n";
    for (size_t m = 0; m < members.size(); ++m) {
      std::cout << "  " << QuoteName(members[m].region.name) << ": generation "
                << (*generations)[m] << " (" << HumanBytes(lengths[m]) << ")\n";
    }
  }
  return Status::Ok();
}

// commit PATH NAME: streams the input into the slot (PendingCommit::Append).
Result<uint64_t> StreamCommit(const CommitArgs& args, Store& store, const RegionEntry& region,
                              Durability durability, uint64_t& length) {
  Result<std::unique_ptr<InputReader>> input = InputReader::Open(args.input_path);
  if (!input.ok()) return input.status();
  Result<PendingCommit> pending = store.BeginCommit(region.name, region.capacity);
  if (!pending.ok()) return pending.status();
  std::vector<std::byte> chunk(kStreamChunk);
  Result<uint64_t> streamed =
      StreamInput(args, **input, region, chunk,
                  [&](std::span<const std::byte> bytes) { return pending->Append(bytes); });
  if (!streamed.ok()) return streamed.status();
  length = *streamed;
  return pending->Finish(durability);
}

}  // namespace

Status RunCommit(const CommitArgs& args) {
  const std::optional<Durability> durability = ParseDurability(args.durability_name);
  if (!durability.has_value()) {
    std::string message = "unknown durability '";
    message += args.durability_name;
    message += '\'';
    return Status::Error(StatusCode::kInvalidArgument, "commit", args.path, std::move(message));
  }
  if (!args.sets.empty()) return RunBatchCommit(args, *durability);
  if (args.name.empty()) {
    return Usage(args, "name a region (commit PATH NAME), or give --set NAME=FILE");
  }
  // Open and find the region before reading the input, so a missing, damaged
  // or busy store, or a wrong name, fails without consuming standard input.
  // The input then streams into the slot (StreamCommit): never held whole,
  // and refused with nothing committed past the capacity.
  Result<Store> store = OpenWriterPrintingWarnings(args);
  if (!store.ok()) return store.status();
  Result<RegionEntry> region = FindRegionEntry(store->info(), args.name, args.path, "commit");
  if (!region.ok()) return region.status();
  uint64_t length = 0;
  Result<uint64_t> generation = StreamCommit(args, *store, *region, *durability, length);
  if (!generation.ok()) return generation.status();
  SetStoreChanged();
  if (args.json) {
    const nlohmann::ordered_json document = {
        {"schema_version", kJsonSchemaVersion},
        {"path", args.path},
        {"region", region->name},
        {"generation", *generation},
        {"length", length},
        {"durability", std::string(DurabilityName(*durability))},
    };
    // Paths need not be UTF-8: replace bad bytes rather than let dump() throw.
    PrintJsonDocument(document);
  } else {
    std::cout << "committed generation " << *generation << " (" << HumanBytes(length) << ") to "
              << QuoteName(region->name) << ", durability " << DurabilityName(*durability) << '\n';
  }
  return Status::Ok();
}

void SetupCommit(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<CommitArgs>();
  CLI::App* command = AddCommand(
      app, "commit",
      "Replace the content of checkpoint region NAME with standard input (or --input FILE)",
      "Example:\n"
      "  regionctl commit state.rs state --input snapshot.bin\n"
      "All or nothing: after a crash, load returns this commit or the one before,\n"
      "never a mix. Durability (what a returned commit survives): none and async survive\n"
      "kill -9; sync (msync(MS_SYNC) of the slot, the default) and pwrite-fdatasync\n"
      "(fdatasync of the file) also survive power loss; a batch makes one fdatasync in\n"
      "either durable mode. A payload longer than the region's capacity is refused (exit 2).\n"
      "Prints the new generation; a region no store has is a usage error (exit 2).\n"
      "Several regions as one batch (a store made with `create --batch-log`):\n"
      "  regionctl commit state.rs --set model=model.bin --set step=step.bin\n"
      "Every region of the batch holds its new content after a crash, or every one\n"
      "its old; one barrier for the whole batch. NAME ends at the first '='.");
  AddCommitOptions(command, args, /*input_required=*/false, outcome);
  command->add_option("--set", args->sets, "Commit FILE to region NAME, in one batch with the "
                                           "other --set regions ('-': standard input)")
      ->type_name("NAME=FILE");
}

void AddCommitOptions(CLI::App* command, const std::shared_ptr<CommitArgs>& args,
                      bool input_required, Status& outcome) {
  if (input_required) {
    AddStoreRegionArguments(command, *args, args->name);
  } else {
    // commit: NAME, or --set instead (RunCommit says which is missing).
    AddStoreArguments(command, *args);
    command->add_option("NAME", args->name, "Name of the checkpoint region")->type_name("");
  }
  AddDurabilityOption(command, args->durability_name, "commit");
  DashMeansStandardStream(
      command
          ->add_option("--input", args->input_path,
                       input_required ? "The file to commit ('-': standard input)"
                                      : "Read the payload from FILE, not standard input ('-': "
                                        "standard input)")
          ->type_name("FILE")
          ->required(input_required));
  command->add_flag("--json", args->json, "Print one JSON object instead of a sentence");
  command->callback([args, &outcome] { outcome = RunCommit(*args); });
}

}  // namespace regionstore::regionctl
