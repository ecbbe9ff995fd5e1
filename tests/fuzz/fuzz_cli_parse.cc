#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common.h"
#include "fuzz_targets.h"
#include "regionstore/checkpoint.h"
#include "regionstore/durability.h"

namespace regionstore::fuzz {
namespace {

[[noreturn]] void Broken(const char* what, std::string_view text) {
  std::fprintf(stderr, "fuzz cli parse: %s (input %zu bytes)\n", what, text.size());
  std::abort();
}

void CheckSize(std::string_view text) {
  Result<uint64_t> size = regionctl::ParseSize(text);
  if (!size.ok()) {
    if (size.status().code() != StatusCode::kInvalidArgument) Broken("ParseSize: wrong code", text);
    if (size.status().message().empty()) Broken("ParseSize: error without a message", text);
    return;
  }
  // The plain byte count of what was accepted parses back to the same value.
  Result<uint64_t> again = regionctl::ParseSize(std::to_string(*size));
  if (!again.ok() || *again != *size) Broken("ParseSize: a byte count does not round-trip", text);
  if (text.empty() || text[0] < '0' || text[0] > '9') {
    Broken("ParseSize: accepted a non-number", text);
  }
}

void CheckCheckpoint(std::string_view text) {
  Result<CheckpointSpec> spec = regionctl::ParseCheckpointSpec("s.rgn", std::string(text));
  if (!spec.ok()) {
    if (spec.status().code() != StatusCode::kInvalidArgument) {
      Broken("checkpoint: wrong code", text);
    }
    return;
  }
  if (!ValidateRegionName(spec->name).ok()) Broken("checkpoint: accepted a bad name", text);
  if (spec->capacity == 0) Broken("checkpoint: accepted capacity 0", text);
  const std::string_view rest = text.substr(spec->name.size());
  if (text.substr(0, spec->name.size()) != spec->name || rest.empty() || rest[0] != ':') {
    Broken("checkpoint: the name is not the text before the capacity", text);
  }
  // After the name: ":CAPACITY", or ":CAPACITY:LAYOUT" when the last field
  // is a layout word; without one the layout is the default (kAuto here).
  std::string_view size_text = rest.substr(1);
  SlotLayout layout = SlotLayout::kAuto;
  if (const size_t colon = size_text.rfind(':'); colon != std::string_view::npos) {
    if (auto named = regionctl::ParseSlotLayout(size_text.substr(colon + 1))) {
      layout = *named;
      size_text = size_text.substr(0, colon);
    }
  }
  if (spec->layout != layout) Broken("checkpoint: layout differs", text);
  Result<uint64_t> capacity = regionctl::ParseSize(size_text);
  if (!capacity.ok() || *capacity != spec->capacity) Broken("checkpoint: capacity differs", text);
}

void CheckQuote(std::string_view text) {
  const std::string quoted = regionctl::QuoteName(text);
  if (quoted.size() < 2 || quoted.front() != '\'' || quoted.back() != '\'') {
    Broken("QuoteName: not between quotes", text);
  }
  // Nothing a terminal would act on survives: no C0 control, no DEL.
  for (char c : quoted) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) Broken("QuoteName: a control byte got through", text);
  }
  // Nor a C1 control (U+0080..U+009F, UTF-8 C2 80..C2 9F) or a bidi override.
  for (size_t i = 0; i + 1 < quoted.size(); ++i) {
    const auto lead = static_cast<unsigned char>(quoted[i]);
    const auto next = static_cast<unsigned char>(quoted[i + 1]);
    if (lead == 0xc2 && next >= 0x80 && next <= 0x9f) {
      Broken("QuoteName: a C1 control got through", text);
    }
  }
  // Nor a bidirectional formatting character: U+202A..U+202E (E2 80 AA..AE)
  // and U+2066..U+2069 (E2 81 A6..A9).
  for (size_t i = 0; i + 2 < quoted.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(quoted[i]);
    const auto b1 = static_cast<unsigned char>(quoted[i + 1]);
    const auto b2 = static_cast<unsigned char>(quoted[i + 2]);
    if (b0 == 0xe2 &&
        ((b1 == 0x80 && b2 >= 0xaa && b2 <= 0xae) || (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9))) {
      Broken("QuoteName: a bidi formatting character got through", text);
    }
  }
}

void CheckDurability(std::string_view text) {
  const std::optional<Durability> durability = ParseDurability(text);
  if (durability && ParseDurability(DurabilityName(*durability)) != durability) {
    Broken("ParseDurability: the name of what it accepted does not parse back", text);
  }
}

}  // namespace

int CliParse(std::span<const uint8_t> input) {
  if (input.empty()) return 0;
  const std::string_view text(reinterpret_cast<const char*>(input.data()) + 1, input.size() - 1);
  switch (input[0] % 5) {
    case 0:
      CheckSize(text);
      break;
    case 1:
      CheckCheckpoint(text);
      break;
    case 2:
      CheckQuote(text);
      break;
    case 3:
      CheckDurability(text);
      break;
    default: {
      uint64_t bytes = 0;
      for (size_t i = 0; i < text.size() && i < 8; ++i) {
        bytes |= uint64_t{static_cast<unsigned char>(text[i])} << (8 * i);
      }
      if (regionctl::HumanBytes(bytes).empty()) Broken("HumanBytes: empty", text);
      break;
    }
  }
  return 0;
}

}  // namespace regionstore::fuzz
