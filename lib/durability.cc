#include "regionstore/durability.h"

namespace regionstore {

std::string_view DurabilityName(Durability durability) {
  switch (durability) {
    case Durability::kNone:
      return "none";
    case Durability::kAsync:
      return "async";
    case Durability::kSync:
      return "sync";
    case Durability::kPwriteFdatasync:
      return "pwrite-fdatasync";
  }
  return "unknown";
}

std::optional<Durability> ParseDurability(std::string_view name) {
  for (Durability durability :
       {Durability::kNone, Durability::kAsync, Durability::kSync, Durability::kPwriteFdatasync}) {
    if (name == DurabilityName(durability)) return durability;
  }
  return std::nullopt;
}

}  // namespace regionstore
