// How inspect and verify show checkpoint regions: one JSON shape and one set
// of human-readable summaries, so the two commands never disagree.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_REGION_REPORT_H_
#define REGIONSTORE_TOOLS_REGIONCTL_REGION_REPORT_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/checkpoint.h"
#include "regionstore/status.h"
#include "regionstore/store_info.h"
#include "regionstore/temp_files.h"

namespace regionstore::regionctl {

// One region's entry of the table and what VerifyRegions found in its slots.
struct RegionView {
  RegionEntry entry;
  RegionReport report;
};

// Reads the region table and the slots with pread, from one open of the
// store (VerifyRegions with `options`: inspect reads headers only, verify
// payloads and the data area too) and pairs them up. Errors: those of
// VerifyRegions (kCorruption for a damaged superblock or table). A damaged
// region is not an error: RegionReport::damaged says so.
struct StoreRegions {
  StoreInfo info;
  std::vector<RegionView> regions;
  std::vector<DamagedJournalRecord> damaged_journal_records;  // VerifyReport's
};
Result<StoreRegions> ReadStoreRegions(const std::string& path, const VerifyOptions& options);

// {"name", "capacity", "slot_count", "slots_offset", "slot_stride",
//  "layout" ("compact" or "aligned"), "slot_alignment", "generation",
//  "length", "commit_unix_ns", "active_slot",
//  "payload_checked", "damaged", "torn", "torn_generation", "torn_slot",
//  "slots": [{"index", "state", "generation", "length", "commit_unix_ns",
//             "reason", "payload_checked"}]}
// With no commit, generation and length are 0, commit_unix_ns and
// active_slot null. With payload_checked false (headers only) they describe
// the newest header that checks out, and torn is null (unknown); otherwise
// torn is a bool, and torn_generation and torn_slot are null unless it is
// true. A slot's generation, length and commit_unix_ns are null when its
// header could not be trusted; reason is null unless it is invalid.
// Appended to `out` at `depth` levels of PrintJsonDocument's layout
// (JsonObjectWriter), without building a tree.
void AppendRegionJson(std::string& out, const RegionView& region, size_t depth);

// "commit_unix_ns" and "commit_utc" (RFC 3339) of the region's newest
// commit, or null for both without one: how inspect, stat and verify give a
// region's commit time in JSON.
void AppendCommitTimeJson(JsonObjectWriter& json, const RegionReport& report);

// "capacity 65536 (64.0 KiB), 3 aligned slots of 128.0 KiB"
std::string CapacitySummary(const RegionEntry& entry);
// "3 compact slots of 8.0 KiB", "3 aligned slots of 128.0 KiB": the slot
// count, the layout (SlotLayoutName) and the stride, the same words in
// create, inspect, stat and verify.
std::string SlotsSummary(const RegionEntry& entry);
// "generation 7, length 4096 (4.0 KiB), active slot 1, committed <time>",
// "no commit yet", "DAMAGED: ..." when slots hold data but none is valid,
// "TORN: the newest commit (generation 8, slot 2) does not match its
// payload; load returns generation 7, ..." (or "no older commit is
// intact"), and after a header-only read "newest header: generation 7, ...,
// slot 1, committed <time> (payload not checked: run verify)".
std::string CommitSummary(const RegionReport& report);
// For a torn region (report.torn): "its newest commit (generation 8, slot
// 2) has an intact header but its payload does not match: ...; load returns
// the older generation 7 (slot 1) instead" or "...; no older commit of the
// region is intact, so load fails (exit 6)".
std::string TornVerdict(const RegionReport& report);
// "valid, generation 7, length 4096 (4.0 KiB), committed <time>",
// "incomplete: payload checksum mismatch (generation 8, length 10 B)", "empty".
std::string SlotSummary(const SlotReport& slot);

// The temps that a killed create left beside the store at `path`
// (regionstore::FindStrayTemps), for stat and verify: one line each, in
// plain words, or one line saying why the directory could not be listed.
// Empty when there are none.
struct StrayTempReport {
  std::vector<std::string> lines;
  nlohmann::ordered_json json;  // [{"path", "owner_gone"}, ...], null if not listed
};
StrayTempReport ReportStrayTemps(const std::string& path);

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_REGION_REPORT_H_
