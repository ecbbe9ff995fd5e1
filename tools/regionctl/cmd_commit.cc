#include "cmd_commit.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <iostream>
#include <memory>
#include <new>
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

// Streams the rest of `input` into a commit filled in place through
// `append`, in chunks of kStreamChunk, so that memory stays bounded whatever
// the payload's size; `length` bytes are appended already, and the total is
// returned. An input longer than region's capacity, or a failed read, fails
// before its excess is appended: the caller then abandons the commit,
// leaving the region as it was.
constexpr size_t kStreamChunk = size_t{1} << 20;

Status InputOverCapacity(const CommitArgs& args, const InputReader& input,
                         const RegionEntry& region) {
  return Usage(args, QuoteName(input.name()) + " is longer than the capacity of region " +
                         QuoteName(region.name) + " (" + std::to_string(region.capacity) +
                         " bytes); nothing committed");
}

template <typename Append>
Result<uint64_t> StreamInput(const CommitArgs& args, InputReader& input, const RegionEntry& region,
                             std::vector<std::byte>& chunk, uint64_t length, Append&& append) {
  for (;;) {
    Result<size_t> got = input.Read(chunk);
    if (!got.ok()) return got.status();
    if (*got > region.capacity - length) {
      return InputOverCapacity(args, input, region);
    }
    if (Status s = append(std::span(chunk).first(*got)); !s.ok()) return s;
    length += *got;
    if (*got < chunk.size()) return length;
  }
}

// The batch journal (docs/FORMAT.md, "Batch journal"): a record is a head
// of 40 bytes plus 88 per member, then each payload, each part rounded up to
// 4 KiB. A durable batch whose record fits in half the journal is committed
// by one RWF_DSYNC write of that record (Store::CommitBatch).
constexpr uint64_t kJournalUnit = 4096;
constexpr uint64_t RoundUpToJournalUnit(uint64_t bytes) {
  return (bytes + kJournalUnit - 1) / kJournalUnit * kJournalUnit;
}
constexpr uint64_t JournalHeadBytes(uint64_t members) {
  return RoundUpToJournalUnit(40 + 88 * members);
}

// One member of commit --set: its input, and what of it was read into
// memory before the batch began (all of it when the batch takes the
// journal; a part when it turned out not to fit, then streamed after it).
struct BatchInput {
  std::string name, file;
  RegionEntry region;
  std::unique_ptr<InputReader> input;
  std::vector<std::byte> head;  // read already, in order, before the rest
  bool at_end = false;          // `head` is the whole input
};

// Reads what is left of `member`'s input into its head, at most `limit`
// bytes past what it holds, plus one byte to tell whether more follow.
// Returns whether the input ended within the limit.
Result<bool> ReadHead(BatchInput& member, uint64_t limit) {
  std::vector<std::byte>& bytes = member.head;
  const uint64_t wanted = bytes.size() + limit + 1;
  try {
    bytes.reserve(std::min(wanted, bytes.size() + member.input->RegularFileSize()));
    while (bytes.size() < wanted) {
      const size_t filled = bytes.size();
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(wanted - filled, kStreamChunk));
      bytes.resize(filled + chunk);
      Result<size_t> got = member.input->Read(std::span(bytes).subspan(filled, chunk));
      if (!got.ok()) return got.status();
      bytes.resize(filled + *got);
      if (*got < chunk) return true;
    }
  } catch (const std::bad_alloc&) {
    return Status::FromErrno(
        ENOMEM, "read input", member.input->name(),
        "the input does not fit in memory (" + std::to_string(bytes.size()) + " bytes read)");
  }
  return false;
}

bool IsDurableMode(Durability durability) {
  return durability == Durability::kSync || durability == Durability::kPwriteFdatasync;
}

// Whether a batch of `members` in `durability` goes through the journal:
// a durable batch, a store with one, regular files as every input, and a
// record (from their sizes now) that fits in half of it. Anything else
// (a pipe, a terminal, a device, standard input from one) streams.
bool BatchFitsJournal(const StoreInfo& info, const std::vector<BatchInput>& members,
                      Durability durability) {
  if (info.journal_size == 0 || !IsDurableMode(durability)) return false;
  uint64_t record = JournalHeadBytes(members.size());
  for (const BatchInput& member : members) {
    if (!member.input->IsRegularFile()) return false;
    record += RoundUpToJournalUnit(member.input->RegularFileSize());
    if (record > info.journal_size / 2) return false;
  }
  return true;
}

// The whole of every member's input is in its head (BatchFitsJournal, then
// ReadHead within the journal's half): one CommitBatch, whose record is the
// batch's one write and barrier.
Result<std::vector<uint64_t>> CommitFromMemory(Store& store, const std::vector<BatchInput>& members,
                                               Durability durability) {
  std::vector<std::span<const std::byte>> pieces;
  pieces.reserve(members.size());
  for (const BatchInput& member : members) pieces.emplace_back(member.head);
  std::vector<BatchMember> batch;
  for (size_t m = 0; m < members.size(); ++m) {
    batch.push_back({members[m].region.name, PayloadPieces(&pieces[m], 1)});
  }
  return store.CommitBatch(batch, durability);
}

// Each member's head (if any), then the rest of its input, streamed into a
// batch filled in place (BeginBatch): memory stays bounded whatever the
// inputs' sizes.
Result<std::vector<uint64_t>> StreamBatch(const CommitArgs& args, Store& store,
                                          std::vector<BatchInput>& members,
                                          std::vector<uint64_t>& lengths, Durability durability) {
  std::vector<BatchReservation> reservations;
  for (const BatchInput& member : members) {
    reservations.push_back({member.region.name, member.region.capacity});
  }
  Result<PendingBatch> pending = store.BeginBatch(reservations);
  if (!pending.ok()) return pending.status();
  std::vector<std::byte> chunk(kStreamChunk);
  lengths.clear();
  for (size_t m = 0; m < members.size(); ++m) {
    BatchInput& member = members[m];
    if (!member.head.empty()) {
      if (Status s = pending->Append(m, member.head); !s.ok()) return s;
    }
    uint64_t length = member.head.size();
    std::vector<std::byte>().swap(member.head);
    if (!member.at_end) {
      Result<uint64_t> streamed =
          StreamInput(args, *member.input, member.region, chunk, length,
                      [&](std::span<const std::byte> bytes) { return pending->Append(m, bytes); });
      if (!streamed.ok()) return streamed.status();
      length = *streamed;
    }
    lengths.push_back(length);
  }
  return pending->Finish(lengths, durability);
}

// commit PATH --set NAME=FILE ...: every region named and every input
// opened, then one batch. A durable batch of regular files whose record
// fits in half of a protocol 2 store's journal is read into memory and
// committed by CommitBatch: one write of the record, its barrier. Any other
// streams into a batch filled in place, finished with one barrier.
Status RunBatchCommit(const CommitArgs& args, Durability durability) {
  if (!args.name.empty() || !args.input_path.empty()) {
    return Usage(args, "--set commits a batch: give no NAME or --input beside it");
  }
  std::vector<BatchInput> members;
  for (const std::string& text : args.sets) {
    // The name ends at the first '=': a region whose name holds one is
    // committed with the positional form.
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
      return Usage(args, "--set " + QuoteName(text) + ": expected NAME=FILE");
    }
    members.push_back({text.substr(0, equals), text.substr(equals + 1), {}, {}, {}, false});
  }
  size_t from_stdin = 0;
  for (const BatchInput& member : members) from_stdin += member.file == "-" ? 1 : 0;
  if (from_stdin > 1) return Usage(args, "--set: standard input ('-') can be read only once");
  // Open and find every region before reading any input, as for one region.
  Result<Store> store = OpenWriterPrintingWarnings(args);
  if (!store.ok()) return store.status();
  for (size_t m = 0; m < members.size(); ++m) {
    for (size_t earlier = 0; earlier < m; ++earlier) {
      if (members[earlier].name == members[m].name) {
        return Usage(args, "region " + QuoteName(members[m].name) + " is named twice");
      }
    }
    Result<RegionEntry> region =
        FindRegionEntry(store->info(), members[m].name, args.path, "commit");
    if (!region.ok()) return region.status();
    members[m].region = std::move(*region);
  }
  for (BatchInput& member : members) {
    Result<std::unique_ptr<InputReader>> input =
        InputReader::Open(member.file == "-" ? "" : member.file);
    if (!input.ok()) return input.status();
    member.input = std::move(*input);
  }
  // The journal's half bounds what is read into memory: an input that grew
  // past its size above is found here, and the batch streams after all,
  // starting with the bytes read.
  bool journaled = BatchFitsJournal(store->info(), members, durability);
  if (journaled) {
    uint64_t room = store->info().journal_size / 2 - JournalHeadBytes(members.size());
    for (BatchInput& member : members) {
      const uint64_t limit = std::min(member.region.capacity, room);
      Result<bool> ended = ReadHead(member, limit);
      if (!ended.ok()) return ended.status();
      if (member.head.size() > member.region.capacity) {
        return InputOverCapacity(args, *member.input, member.region);
      }
      member.at_end = *ended;
      if (!member.at_end) {
        journaled = false;
        break;
      }
      room -= RoundUpToJournalUnit(member.head.size());
    }
  }
  const StoreStats before = store->Stats();
  std::vector<uint64_t> lengths;
  if (journaled) {
    for (const BatchInput& member : members) lengths.push_back(member.head.size());
  }
  Result<std::vector<uint64_t>> generations =
      journaled ? CommitFromMemory(*store, members, durability)
                : StreamBatch(args, *store, members, lengths, durability);
  if (!generations.ok()) return generations.status();
  SetStoreChanged();
  // The barriers this batch made, as the library counts them (msync,
  // fdatasync, RWF_DSYNC writes, and a full journal's fdatasync).
  const uint64_t barriers = store->Stats().of(durability).flushes - before.of(durability).flushes;
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
        {"journaled", journaled},
        {"barriers", barriers},
    };
    PrintJsonDocument(document);
  } else {
    std::cout << "committed a batch of " << members.size() << " regions, durability "
              << DurabilityName(durability)
              << (journaled ? ", one record in the batch journal" : "") << ":\n";
    for (size_t m = 0; m < members.size(); ++m) {
      std::cout << "  " << QuoteName(members[m].region.name) << ": generation " << (*generations)[m]
                << " (" << HumanBytes(lengths[m]) << ")\n";
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
      StreamInput(args, **input, region, chunk, 0,
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
      "its old; one barrier for the whole batch. NAME ends at the first '='.\n"
      "In a protocol 2 store, a durable batch whose inputs are regular files and\n"
      "fit in half the batch journal is read into memory and committed by one\n"
      "RWF_DSYNC write of its journal record; any other batch streams its inputs\n"
      "into their slots (--json: journaled, barriers).");
  AddCommitOptions(command, args, /*input_required=*/false, outcome);
  command
      ->add_option("--set", args->sets,
                   "Commit FILE to region NAME, in one batch with the "
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
