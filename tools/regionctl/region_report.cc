#include "region_report.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "common.h"

namespace regionstore::regionctl {
namespace {

// "4096 (4.0 KiB)"
std::string BytesAndHuman(uint64_t bytes) {
  std::string text = std::to_string(bytes);
  text += " (";
  text += HumanBytes(bytes);
  text += ")";
  return text;
}

// A slot whose header checksum matched carries a non-zero generation; for the
// others the header fields mean nothing.
bool HeaderTrusted(const SlotReport& slot) { return slot.generation != 0; }

}  // namespace

Result<StoreRegions> ReadStoreRegions(const std::string& path, const VerifyOptions& options) {
  // One open: the table and the slots come from the same file.
  Result<VerifyReport> verified = VerifyRegions(path, options);
  if (!verified.ok()) return verified.status();
  StoreRegions regions;
  regions.regions.reserve(verified->regions.size());
  for (size_t index = 0; index < verified->regions.size(); ++index) {
    regions.regions.push_back({verified->info.regions[index], std::move(verified->regions[index])});
  }
  regions.info = std::move(verified->info);
  regions.damaged_journal_records = std::move(verified->damaged_journal_records);
  return regions;
}

void AppendCommitTimeJson(JsonObjectWriter& json, const RegionReport& report) {
  if (report.has_commit) {
    json.Number("commit_unix_ns", report.commit_unix_ns);
    json.String("commit_utc", Rfc3339Nanos(report.commit_unix_ns));
  } else {
    json.Null("commit_unix_ns");
    json.Null("commit_utc");
  }
}

void AppendRegionJson(std::string& out, const RegionView& region, size_t depth) {
  const RegionEntry& entry = region.entry;
  const RegionReport& report = region.report;
  JsonObjectWriter json(out, depth);
  json.String("name", entry.name);
  json.Number("capacity", entry.capacity);
  json.Number("slot_count", entry.slot_count);
  json.Number("slots_offset", entry.slots_offset);
  json.Number("slot_stride", entry.slot_stride);
  json.String("layout", SlotLayoutName(entry.layout));
  json.Number("slot_alignment", entry.slot_alignment);
  json.Number("generation", report.has_commit ? report.generation : 0);
  json.Number("length", report.has_commit ? report.length : 0);
  AppendCommitTimeJson(json, report);
  if (report.has_commit) {
    json.Number("active_slot", report.active_slot);
  } else {
    json.Null("active_slot");
  }
  json.Bool("payload_checked", report.payload_checked);
  json.Bool("journaled", report.journaled);
  json.Bool("damaged", report.damaged);
  // Unknown (null) when no payload was read: a torn commit looks valid
  // from its header.
  if (report.payload_checked) {
    json.Bool("torn", report.torn);
  } else {
    json.Null("torn");
  }
  if (report.torn) {
    json.Number("torn_generation", report.torn_generation);
    json.Number("torn_slot", report.torn_slot);
  } else {
    json.Null("torn_generation");
    json.Null("torn_slot");
  }
  const size_t slots_depth = json.Nested("slots");
  if (report.slots.empty()) {
    json.out() += "[]";
  } else {
    json.out() += '[';
    for (size_t index = 0; index < report.slots.size(); ++index) {
      const SlotReport& slot = report.slots[index];
      json.out() += index == 0 ? "\n" : ",\n";
      json.out().append(2 * (slots_depth + 1), ' ');
      JsonObjectWriter slot_json(json.out(), slots_depth + 1);
      slot_json.Number("index", slot.index);
      slot_json.String("state", SlotStateName(slot.state));
      if (HeaderTrusted(slot)) {
        slot_json.Number("generation", slot.generation);
        slot_json.Number("length", slot.length);
        slot_json.Number("commit_unix_ns", slot.commit_unix_ns);
        slot_json.String("commit_utc", Rfc3339Nanos(slot.commit_unix_ns));
      } else {
        slot_json.Null("generation");
        slot_json.Null("length");
        slot_json.Null("commit_unix_ns");
        slot_json.Null("commit_utc");
      }
      if (slot.reason.empty()) {
        slot_json.Null("reason");
      } else {
        slot_json.String("reason", slot.reason);
      }
      slot_json.Bool("payload_checked", slot.payload_checked);
      // Stores with a batch log: the batch the commit belongs to (null for
      // a single commit and for a withdrawn member), whether that batch did
      // not complete, and whether a writer's open withdrew the member.
      const bool withdrawn = HeaderTrusted(slot) && slot.batch_id == kWithdrawnBatch;
      if (HeaderTrusted(slot) && slot.batch_id != 0 && !withdrawn) {
        slot_json.Number("batch", slot.batch_id);
      } else {
        slot_json.Null("batch");
      }
      slot_json.Bool("batch_incomplete", slot.batch_incomplete);
      slot_json.Bool("batch_withdrawn", withdrawn);
      slot_json.End();
    }
    json.out() += '\n';
    json.out().append(2 * slots_depth, ' ');
    json.out() += ']';
  }
  json.End();
}

std::string CapacitySummary(const RegionEntry& entry) {
  std::string text = "capacity ";
  text += BytesAndHuman(entry.capacity);
  text += ", ";
  text += SlotsSummary(entry);
  return text;
}

std::string SlotsSummary(const RegionEntry& entry) {
  std::string text = std::to_string(entry.slot_count);
  text += ' ';
  text += SlotLayoutName(entry.layout);
  text += entry.slot_count == 1 ? " slot of " : " slots of ";
  text += HumanBytes(entry.slot_stride);
  return text;
}

std::string CommitSummary(const RegionReport& report) {
  if (report.damaged) {
    return "DAMAGED: its slots hold data but none is valid (every commit is lost)";
  }
  std::string text;
  if (report.torn) {
    text = "TORN: the newest commit (generation ";
    text += std::to_string(report.torn_generation);
    text += ", slot ";
    text += std::to_string(report.torn_slot);
    text += ") does not match its payload; ";
    if (!report.has_commit) return text + "no older commit is intact";
    text += "load returns ";
  } else if (!report.has_commit) {
    return "no commit yet";
  } else if (!report.payload_checked) {
    // Header-only reads: this header may sit over a torn payload.
    text = "newest header: ";
  }
  text += "generation ";
  text += std::to_string(report.generation);
  text += ", length ";
  text += BytesAndHuman(report.length);
  text += report.payload_checked ? ", active slot " : ", slot ";
  text += std::to_string(report.active_slot);
  text += ", committed ";
  text += UnixNanosWithUtc(report.commit_unix_ns);
  if (!report.payload_checked) text += " (payload not checked: run verify)";
  if (report.journaled) {
    text += " (in the batch journal: the next writer's open writes it into its slot)";
  }
  return text;
}

std::string TornVerdict(const RegionReport& report) {
  std::string text = "its newest commit (generation ";
  text += std::to_string(report.torn_generation);
  text += ", slot ";
  text += std::to_string(report.torn_slot);
  text +=
      ") has an intact header but its payload does not match: a power loss interrupted that "
      "commit, or it was damaged after it returned; ";
  if (report.has_commit) {
    text += "load returns the older generation ";
    text += std::to_string(report.generation);
    text += " (slot ";
    text += std::to_string(report.active_slot);
    text += ") instead";
  } else {
    text += "no older commit of the region is intact, so load fails (exit 6)";
  }
  return text;
}

std::string SlotSummary(const SlotReport& slot) {
  std::string text(SlotStateName(slot.state));
  switch (slot.state) {
    case SlotState::kEmpty:
      if (!slot.reason.empty()) text += ": " + slot.reason;
      break;
    case SlotState::kValid:
      if (!slot.payload_checked) text = "header valid (payload not checked: run verify)";
      text += ", generation ";
      text += std::to_string(slot.generation);
      text += ", length ";
      text += BytesAndHuman(slot.length);
      text += ", committed ";
      text += UnixNanosWithUtc(slot.commit_unix_ns);
      if (slot.batch_id != 0) text += ", batch " + std::to_string(slot.batch_id);
      break;
    case SlotState::kTorn:
    case SlotState::kIncomplete:
    case SlotState::kDamaged:
      text += ": ";
      text += slot.reason;
      if (HeaderTrusted(slot)) {
        text += " (header: generation ";
        text += std::to_string(slot.generation);
        text += ", length ";
        text += std::to_string(slot.length);
        if (slot.batch_id == kWithdrawnBatch) {
          text += ", withdrawn from its batch";
        } else if (slot.batch_id != 0) {
          text += ", batch " + std::to_string(slot.batch_id);
        }
        text += ")";
      }
      break;
  }
  return text;
}

StrayTempReport ReportStrayTemps(const std::string& path) {
  StrayTempReport report;
  Result<std::vector<StrayTemp>> found = FindStrayTemps(path);
  if (!found.ok()) {
    report.lines.push_back("could not look for stray temp files: " + found.status().ToString());
    report.json = nullptr;
    return report;
  }
  report.json = nlohmann::ordered_json::array();
  for (const StrayTemp& temp : *found) {
    report.lines.push_back(
        "stray temp file " + QuoteName(temp.path) +
        (temp.owner_gone ? ": the process that made it is gone; the next create of this path "
                           "removes it"
                         : ": named by regionstore 0.10 or older, which cannot tell whether its "
                           "process lives; remove it by hand when no create of this path runs"));
    report.json.push_back({{"path", temp.path}, {"owner_gone", temp.owner_gone}});
  }
  return report;
}

}  // namespace regionstore::regionctl
