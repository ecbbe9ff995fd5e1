#include "cmd_verify.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "progress_bar.h"
#include "region_report.h"
#include "regionstore/checkpoint.h"

namespace regionstore::regionctl {
namespace {

struct VerifyArgs : StoreArgs {
  bool json = false;
};

// Stores above this size get a progress bar, when stderr is a terminal.
constexpr uint64_t kProgressBarAbove = uint64_t{64} << 20;

// What verify concluded, beyond the per-slot states.
struct Verdict {
  size_t incomplete_slots = 0;
  std::vector<std::string> damaged_regions;
  // Regions whose newest header checks out over a payload that does not.
  std::vector<const RegionReport*> torn_regions;
  // Regions with a valid commit beside a header that fails its checks: a
  // kill cannot leave one, so it is damage or a power loss's trace, and it
  // may have held a newer commit than the one Load returns.
  std::vector<std::string> bad_header_regions;
  // Batches (by id) whose record fails its checksum while a member stands:
  // no kill leaves that, so it is damage or a power loss, and the batch no
  // longer loads.
  std::vector<uint64_t> torn_batch_records;
  // Records of the batch journal that fail their checks while a newer whole
  // record follows: no crash leaves that (each record is written after the
  // one before returned), so it is damage (exit 3).
  std::vector<DamagedJournalRecord> damaged_journal_records;
  std::vector<std::string> notes;

  bool ok() const {
    return damaged_regions.empty() && torn_regions.empty() && bad_header_regions.empty() &&
           torn_batch_records.empty() && damaged_journal_records.empty();
  }
};

// An incomplete slot whose header fails its own checks (no generation can
// be trusted from it), as opposed to an older header over a bad payload.
bool HeaderFailed(const SlotReport& slot) {
  return slot.state == SlotState::kIncomplete && slot.generation == 0;
}

// What an incomplete (invalid, older) slot means: after a kill the writer
// leaves none, so it is a power loss's trace or damage, never "expected".
std::string IncompleteNote(const RegionView& region, const SlotReport& slot) {
  const RegionReport& report = region.report;
  std::string note = "region ";
  note += QuoteName(region.entry.name);
  note += " slot ";
  note += std::to_string(slot.index);
  note += " is incomplete (";
  note += slot.reason;
  if (slot.batch_record_torn) {
    note +=
        "): its batch's record in the batch log fails its checksum, which no kill leaves: the "
        "batch log was damaged, or a power loss tore the record; load skips the batch and returns "
        "the commit before it in each of its regions, so the batch is lost";
    return note;
  }
  if (slot.batch_incomplete) {
    note +=
        "): a member of a batch that did not complete, the trace of a batch interrupted by a kill "
        "or a power loss (or of damage to another member); load skips it and returns the commit "
        "before it, so the batch's regions stay consistent, and the next writer's open removes it";
    return note;
  }
  if (HeaderFailed(slot)) {
    note +=
        "): its header fails its checks, which no kill leaves: damage, or a power loss while it "
        "was written; nothing says how new it was, so it may have held a newer commit than the "
        "one load returns";
    return note;
  }
  note +=
      "): an invalid slot older than the newest commit: the trace of a commit interrupted by a "
      "power loss, or damage; ";
  if (report.torn) {
    note += "the newest commit is torn (see the note on the region)";
  } else {
    note += "the newest commit (generation ";
    note += std::to_string(report.generation);
    note += ", slot ";
    note += std::to_string(report.active_slot);
    note += ") is intact, and a later commit overwrites the slot";
  }
  return note;
}

// "the batch journal's record at file offset N (batch 7 by its head)".
std::string JournalRecordName(const DamagedJournalRecord& record) {
  std::string name = "the batch journal's record at file offset ";
  name += std::to_string(record.file_offset);
  name += record.batch_id != 0 ? " (batch " + std::to_string(record.batch_id) + " by its head)"
                               : " (its head has no record magic)";
  return name;
}

Verdict Judge(const StoreRegions& store) {
  Verdict verdict;
  for (const DamagedJournalRecord& record : store.damaged_journal_records) {
    verdict.damaged_journal_records.push_back(record);
    verdict.notes.push_back(
        JournalRecordName(record) + " is damaged: it fails its checks, and a whole record of a " +
        "newer batch (" + std::to_string(record.next_batch_id) + ") follows it " +
        std::to_string(record.length) +
        " bytes on, which no crash leaves (a record is written only after the one before it "
        "returned); the newer batch is read and replayed as usual, and the damaged record's "
        "batch counts by its slots alone");
  }
  for (const RegionView& region : store.regions) {
    if (region.report.damaged) verdict.damaged_regions.push_back(region.entry.name);
    if (region.report.torn) {
      verdict.torn_regions.push_back(&region.report);
      verdict.notes.push_back("region " + QuoteName(region.entry.name) +
                              " is torn: " + TornVerdict(region.report));
    }
    bool bad_header = false;
    for (const SlotReport& slot : region.report.slots) {
      if (slot.state != SlotState::kIncomplete) continue;
      ++verdict.incomplete_slots;
      bad_header = bad_header || HeaderFailed(slot);
      if (slot.batch_record_torn &&
          std::find(verdict.torn_batch_records.begin(), verdict.torn_batch_records.end(),
                    slot.batch_id) == verdict.torn_batch_records.end()) {
        verdict.torn_batch_records.push_back(slot.batch_id);
      }
      verdict.notes.push_back(IncompleteNote(region, slot));
    }
    if (bad_header && !region.report.torn) {
      verdict.bad_header_regions.push_back(region.entry.name);
    }
  }
  return verdict;
}

void PrintHuman(const std::string& path, const StoreRegions& store, const Verdict& verdict,
                const StrayTempReport& stray) {
  std::cout << QuoteName(path) << ": superblock and region table valid (format "
            << store.info.format_version << "), data area " << HumanBytes(store.info.data_size)
            << " readable (it has no checksums), " << store.regions.size() << " checkpoint region"
            << (store.regions.size() == 1 ? "" : "s") << '\n';
  for (const RegionView& region : store.regions) {
    std::cout << "region " << QuoteName(region.entry.name) << ": " << CapacitySummary(region.entry)
              << "; " << CommitSummary(region.report) << '\n';
    for (const SlotReport& slot : region.report.slots) {
      std::cout << "  slot " << slot.index << ": " << SlotSummary(slot) << '\n';
    }
  }
  for (const std::string& note : verdict.notes) std::cout << "note: " << note << '\n';
  for (const std::string& line : stray.lines) std::cout << "note: " << line << '\n';
  // A torn or damaged region is reported on stderr (the failure line).
  if (verdict.ok()) {
    std::cout << "ok: every checksum verified";
    if (verdict.incomplete_slots > 0) {
      std::cout << "; " << verdict.incomplete_slots << " incomplete slot"
                << (verdict.incomplete_slots == 1 ? "" : "s")
                << " (older than the newest commit: see the note"
                << (verdict.incomplete_slots == 1 ? "" : "s") << ")";
    }
    std::cout << '\n';
  }
}

void PrintJson(const std::string& path, const StoreRegions& store, const Verdict& verdict,
               const StrayTempReport& stray) {
  nlohmann::ordered_json torn_regions = nlohmann::ordered_json::array();
  for (const RegionReport* report : verdict.torn_regions) torn_regions.push_back(report->name);
  nlohmann::ordered_json journal_records = nlohmann::ordered_json::array();
  for (const DamagedJournalRecord& record : verdict.damaged_journal_records) {
    journal_records.push_back({
        {"file_offset", record.file_offset},
        {"length", record.length},
        {"batch_id", record.batch_id != 0 ? nlohmann::ordered_json(record.batch_id)
                                          : nlohmann::ordered_json(nullptr)},
        {"next_batch_id", record.next_batch_id},
    });
  }
  const nlohmann::ordered_json document = {
      {"schema_version", kJsonSchemaVersion},
      {"path", path},
      {"ok", verdict.ok()},
      {"format_version", store.info.format_version},
      {"data_size", store.info.data_size},
      {"regions", nullptr},  // printed one region at a time
      {"incomplete_slots", verdict.incomplete_slots},
      {"damaged_regions", verdict.damaged_regions},
      {"torn_regions", std::move(torn_regions)},
      {"bad_header_regions", verdict.bad_header_regions},
      {"torn_batch_records", verdict.torn_batch_records},
      {"damaged_journal_records", std::move(journal_records)},
      {"notes", verdict.notes},
      {"stray_temps", stray.json},
  };
  // Names and paths need not be UTF-8 in a damaged file: replace bad bytes
  // rather than let dump() throw.
  PrintJsonDocumentWithArray(
      document, "regions", store.regions.size(),
      [&store](std::string& out, size_t index) { AppendRegionJson(out, store.regions[index], 2); });
}

// The failure line: damaged regions (exit 3) outrank torn ones (exit 6): a
// damaged region has lost every commit, a torn one may still hold an older.
Status VerdictStatus(const std::string& path, const Verdict& verdict) {
  if (!verdict.damaged_regions.empty()) {
    std::string message = std::to_string(verdict.damaged_regions.size());
    message += verdict.damaged_regions.size() == 1 ? " region is" : " regions are";
    message += " damaged (slots hold data but none is valid; every commit is lost):";
    for (const std::string& name : verdict.damaged_regions) {
      message += ' ';
      message += QuoteName(name);
    }
    return Status::Error(StatusCode::kCorruption, "verify", path, std::move(message));
  }
  // Also damage (exit 3), though nothing may be lost: the newer record is
  // read past it, and its own batch counts by its slots.
  if (!verdict.damaged_journal_records.empty()) {
    std::string message;
    for (size_t index = 0; index < verdict.damaged_journal_records.size(); ++index) {
      const DamagedJournalRecord& record = verdict.damaged_journal_records[index];
      message += index == 0 ? "" : "; ";
      message += JournalRecordName(record);
      message += " is damaged: a whole record of a newer batch (";
      message += std::to_string(record.next_batch_id);
      message += ") follows it, which no crash leaves";
    }
    message +=
        " (the newer batch is still replayed; a damaged record's batch counts by its slots "
        "alone)";
    return Status::Error(StatusCode::kCorruption, "verify", path, std::move(message));
  }
  if (verdict.torn_regions.empty() && verdict.bad_header_regions.empty()) {
    std::string message = std::to_string(verdict.torn_batch_records.size());
    message += verdict.torn_batch_records.size() == 1 ? " batch has" : " batches have";
    message +=
        " a record that fails its checksum while its members stand (damage to the batch log, or "
        "a power loss that tore it; load returns the commits before it):";
    for (const uint64_t id : verdict.torn_batch_records) message += " " + std::to_string(id);
    return Status::Error(StatusCode::kTornCommit, "verify", path, std::move(message));
  }
  if (verdict.torn_regions.empty()) {
    std::string message = std::to_string(verdict.bad_header_regions.size());
    message += verdict.bad_header_regions.size() == 1 ? " region has" : " regions have";
    message +=
        " a slot header that fails its checks beside the commit load returns (damage, or a power "
        "loss while it was written; it may have held a newer commit):";
    for (const std::string& name : verdict.bad_header_regions) {
      message += ' ';
      message += QuoteName(name);
    }
    return Status::Error(StatusCode::kTornCommit, "verify", path, std::move(message));
  }
  std::string message = std::to_string(verdict.torn_regions.size());
  message += verdict.torn_regions.size() == 1 ? " region has" : " regions have";
  message += " a torn newest commit (intact header, payload does not match):";
  for (size_t index = 0; index < verdict.torn_regions.size(); ++index) {
    const RegionReport& report = *verdict.torn_regions[index];
    message += index == 0 ? " " : ", ";
    message += QuoteName(report.name);
    message += " (generation ";
    message += std::to_string(report.torn_generation);
    message += ", slot ";
    message += std::to_string(report.torn_slot);
    message += report.has_commit
                   ? "; load returns generation " + std::to_string(report.generation) + ")"
                   : "; no older commit is intact: load fails)";
  }
  return Status::Error(StatusCode::kTornCommit, "verify", path, std::move(message));
}

Status RunVerify(const VerifyArgs& args) {
  // Superblock and region table first (kCorruption: exit 3), then every slot
  // header and payload checksum, all with pread: a bad disk gives an error,
  // not a SIGBUS.
  // Everything is read: slot payloads against their checksums, and the data
  // area, which has none, so that an unreadable block shows up here.
  std::error_code size_error;
  const uint64_t file_size = std::filesystem::file_size(args.path, size_error);
  // The bar is erased (its destructor) before the report is printed.
  const auto read_everything = [&]() -> Result<StoreRegions> {
    ProgressBar bar("verify", StderrIsTerminal() && !size_error && file_size > kProgressBarAbove);
    VerifyOptions options;
    options.read_data_area = true;
    options.symlinks = args.symlinks;
    options.progress = [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); };
    return ReadStoreRegions(args.path, options);
  };
  Result<StoreRegions> store = read_everything();
  if (!store.ok()) return store.status();
  const Verdict verdict = Judge(*store);
  // Not damage: a killed create's leftovers beside the store, said so.
  const StrayTempReport stray = ReportStrayTemps(args.path);
  // The report goes out even for a damaged store: it says which slots and why.
  if (args.json) {
    PrintJson(args.path, *store, verdict, stray);
  } else {
    PrintHuman(args.path, *store, verdict, stray);
  }
  if (verdict.ok()) return Status::Ok();
  return VerdictStatus(args.path, verdict);
}

}  // namespace

void SetupVerify(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* command = AddCommand(
      app, "verify", "Check the superblock, region table and every checkpoint slot's checksums",
      "Example:\n"
      "  regionctl verify state.rs --json\n"
      "Reads with pread only (no mapping, no lock). Exit 0 if every region's newest\n"
      "commit is intact, also beside an older header whose payload does not match (a\n"
      "power loss's trace or damage; reported as a note). Exit 6 if a region's newest\n"
      "commit is torn (its header is intact, its payload does not match: a power loss\n"
      "interrupted that commit, or it was damaged after it returned), or a slot header\n"
      "fails its checks (no kill leaves one; it may have held a newer commit); the notes\n"
      "say what load returns instead. Exit 3 (it outranks 6) if the superblock or\n"
      "region table is damaged, a region's slots hold data but none is valid, or (after a\n"
      "reboot, before a writer's open) a batch journal record is damaged: it fails its\n"
      "checks while a newer record follows it, which no crash leaves. The data\n"
      "area has no checksums; it is read whole, so an unreadable block fails (exit 1);\n"
      "pages already in the page cache are not read from the disk again. A commit running\n"
      "meanwhile may show as incomplete. A progress bar goes to stderr when it is a\n"
      "terminal and the store is larger than 64 MiB.");
  AddStoreArguments(command, *args);
  command->add_flag("--json", args->json, "Print one JSON object instead of a report");
  command->callback([args, &outcome] { outcome = RunVerify(*args); });
}

}  // namespace regionstore::regionctl
