// The last table of regionstore_commit_bench: the figures protocol 2 is
// meant to move (docs/history/BENCH-CHECKPOINTS-0.13.md, "Protocol 2 targets"), from the
// sections that ran (1: commits against the raw syscalls, 6: batches, 8:
// waking): the default store ("ours", protocol 2) beside protocol 1 and
// beside the target. Nothing is measured here: every figure is one the section printed,
// from the same run.
#include <cmath>
#include <cstdio>
#include <string>

#include "commit_bench.h"

namespace regionstore::bench {
namespace {

constexpr uint64_t kSizes4K = 4 * kKiB;

// The row of section 1 for `mode` and `size`, or null.
const nlohmann::json* RatioRow(const nlohmann::json& doc, const char* mode, uint64_t size) {
  if (!doc.contains("commits") || !doc["commits"].is_array()) return nullptr;
  for (const nlohmann::json& row : doc["commits"]) {
    if (row["mode"] == mode && row["size"] == size) return &row;
  }
  return nullptr;
}

// The shape of section 6 with `regions` members, or null.
const nlohmann::json* BatchShape(const nlohmann::json& doc, uint64_t regions) {
  if (!doc.contains("batches") || !doc["batches"].is_array()) return nullptr;
  for (const nlohmann::json& shape : doc["batches"]) {
    if (shape["regions"] == regions) return &shape;
  }
  return nullptr;
}

double Number(const nlohmann::json& value) { return value.is_number() ? value.get<double>() : NAN; }

// The median of a RatioJson object (null when the ratio had no rounds).
double MedianOf(const nlohmann::json& ratio) {
  return ratio.is_object() && ratio.contains("median") ? Number(ratio["median"]) : NAN;
}

// The device write requests per batch of the arm `key` of `shape`.
double ArmRequests(const nlohmann::json& shape, const std::string& key) {
  for (const nlohmann::json& arm : shape["arms"]) {
    if (arm["arm"] == key) return Number(arm["device_write_requests"]);
  }
  return NAN;
}

std::string Ratio(double value) { return std::isnan(value) ? "-" : Fixed(value, 2) + "x"; }

// `ours` is the default store's figure, `p1` protocol 1's.
void Row(const std::string& what, const std::string& p1, const std::string& ours,
         const std::string& target, bool met) {
  std::printf("| %s | %s | %s | %s | %s |\n", what.c_str(), ours.c_str(), p1.c_str(),
              target.c_str(), met ? "yes" : "**no**");
}

}  // namespace

void PrintProtocolSummary(const nlohmann::json& doc) {
  // Sections that did not run are null in the document.
  const auto ran = [&doc](const char* key) { return doc.contains(key) && !doc[key].is_null(); };
  if (!ran("commits") && !ran("batches") && !ran("wait")) return;
  std::printf(
      "## 9. The default store (protocol 2) beside protocol 1 and protocol 2's targets\n\n");
  std::printf(
      "From the sections above, same run. Ratios are medians of per-round ratios (commit / "
      "raw syscalls of its mode; for batches the floor / ours, higher is better). \"met\" "
      "is for the default store.\n\n");
  std::printf(
      "| figure | ours (default, protocol 2) | protocol 1 | target | met |\n"
      "| --- | --- | --- | --- | --- |\n");
  if (const nlohmann::json* row = RatioRow(doc, "kNone", kSizes4K)) {
    const double p1 = Number((*row)["commit_protocol1_ns"]) / 1e3;
    const double p2 = Number((*row)["commit_ns"]) / 1e3;
    Row("kNone commit, 4 KiB", Fixed(p1, 2) + " µs", Fixed(p2, 2) + " µs", "≈ 0.3 µs", p2 <= 0.35);
  }
  for (const uint64_t size : {64 * kKiB, kMiB}) {
    if (const nlohmann::json* row = RatioRow(doc, "kNone", size)) {
      const double p1 = MedianOf((*row)["protocol1_over_raw"]);
      const double p2 = MedianOf((*row)["commit_over_raw"]);
      Row("kNone commit / memcpy, " + SizeName(size), Ratio(p1), Ratio(p2), "≤ 1.30x", p2 <= 1.3);
    }
  }
  for (const char* mode : {"kSync", "kPwriteFdatasync"}) {
    for (const uint64_t size : {kSizes4K, kMiB}) {
      const nlohmann::json* row = RatioRow(doc, mode, size);
      if (row == nullptr) continue;
      const double p1 = MedianOf((*row)["protocol1_over_raw"]);
      const double p2 = MedianOf((*row)["commit_over_raw"]);
      Row(std::string(mode) + " commit / raw, " + SizeName(size), Ratio(p1), Ratio(p2), "≤ 1.05x",
          p2 <= 1.05);
      const double r1 = Number((*row)["protocol1_device_requests"]);
      const double r2 = Number((*row)["commit_device_requests"]);
      if (size == kSizes4K) {
        Row(std::string(mode) + " commit, 4 KiB: device write requests / KiB",
            Fixed(r1, 1) + " / " + Fixed(Number((*row)["protocol1_device_kib"]), 0),
            Fixed(r2, 1) + " / " + Fixed(Number((*row)["commit_device_kib"]), 0),
            "≤ 2 requests (flush included)", r2 <= 2.05);
      }
    }
  }
  for (const uint64_t regions : {uint64_t{16}, uint64_t{4}}) {
    const nlohmann::json* shape = BatchShape(doc, regions);
    if (shape == nullptr) continue;
    const std::string name =
        std::to_string(regions) + " x " + SizeName((*shape)["size"].get<uint64_t>());
    const double p1 = MedianOf((*shape)["floor_over_protocol1"]);
    const double p2 = MedianOf((*shape)["floor_over_ours"]);
    Row("durable batch " + name + ": floor / ours", Ratio(p1), Ratio(p2), "≥ 0.85x", p2 >= 0.85);
    const double q1 = ArmRequests(*shape, (*shape)["protocol1"]);
    const double q2 = ArmRequests(*shape, (*shape)["ours"]);
    Row("durable batch " + name + ": device write requests", Fixed(q1, 1), Fixed(q2, 1), "≤ 3",
        q2 <= 3);
  }
  if (ran("wait")) {
    const nlohmann::json& cost = doc["wait"]["wake_cost"];
    const double p1 = Number(cost["protocol1_ns"]) / 1e3, p2 = Number(cost["ours_ns"]) / 1e3;
    Row("kNone commit with nobody waiting, 4 KiB", Fixed(p1, 2) + " µs", Fixed(p2, 2) + " µs",
        "no system call (≈ 0.3 µs)", p2 <= 0.35);
    double w1 = NAN, w2 = NAN;
    for (const nlohmann::json& reader : doc["wait"]["readers"]) {
      if (reader["reader"] == "WaitForNewer, protocol 1 (futex)") {
        w1 = Number(reader["p99_ns"]) / 1e3;
      }
      if (reader["reader"] == "WaitForNewer") w2 = Number(reader["p99_ns"]) / 1e3;
    }
    Row("wake latency in another process, p99", Fixed(w1, 0) + " µs", Fixed(w2, 0) + " µs",
        "< 1,000 µs (a goal)", w2 < 1000);
  }
  std::printf("\n");
}

}  // namespace regionstore::bench
