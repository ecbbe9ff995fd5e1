// Region names: the rule of CheckpointSpec::name, checked when a store is
// created (LayoutRegions), when its region table is read (DecodeRegionTable)
// and for callers (ValidateRegionName).
#include <string>
#include <string_view>

#include "format.h"
#include "regionstore/checkpoint.h"

namespace regionstore {
namespace {

// Length of the UTF-8 sequence starting at `text[i]`, or 0 if it is not a
// well-formed one (overlong forms, surrogates and values past U+10FFFF are
// refused, as RFC 3629 says).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

namespace format {

Status CheckRegionName(std::string_view name, const char* operation) {
  const auto bad = [&](const std::string& why) {
    return Status::Error(StatusCode::kInvalidArgument, operation, "", why);
  };
  if (name.empty()) return bad("a region name may not be empty");
  if (name.size() > format::kMaxRegionNameLength) {
    return bad("region name is " + std::to_string(name.size()) + " bytes; at most " +
               std::to_string(format::kMaxRegionNameLength) + " are allowed");
  }
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      return bad("region name has a control character (byte " + std::to_string(c) + ") at offset " +
                 std::to_string(i));
    }
    const size_t length = Utf8SequenceLength(name, i);
    if (length == 0) return bad("region name is not valid UTF-8 at offset " + std::to_string(i));
    // C1 controls, U+0080..U+009F, encode as 0xc2 0x80..0x9f.
    if (length == 2 && c == 0xc2 && static_cast<unsigned char>(name[i + 1]) <= 0x9f) {
      return bad("region name has a control character at offset " + std::to_string(i));
    }
    i += length;
  }
  return Status::Ok();
}

}  // namespace format

Status ValidateRegionName(std::string_view name) {
  return format::CheckRegionName(name, "region name");
}

}  // namespace regionstore
