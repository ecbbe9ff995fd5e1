// The C API (include/regionstore/c.h) over the C++ one: each call turns its
// arguments into the C++ types, calls Store, and turns the Status into an
// rs_code and the calling thread's last error message. Nothing thrown gets
// past a call: std::bad_alloc and anything else become RS_INTERNAL.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "regionstore/c.h"
#include "regionstore/regionstore.h"

static_assert(RS_VERSION_MAJOR == REGIONSTORE_VERSION_MAJOR &&
                  RS_VERSION_MINOR == REGIONSTORE_VERSION_MINOR &&
                  RS_VERSION_PATCH == REGIONSTORE_VERSION_PATCH,
              "c.h's version macros must follow version.h");
static_assert(static_cast<int>(regionstore::StatusCode::kStoreReplaced) == RS_STORE_REPLACED,
              "rs_code must follow StatusCode value for value");

struct rs_store {
  regionstore::Store store;
};

struct rs_pending {
  regionstore::PendingCommit commit;
};

namespace {

using regionstore::Durability;
using regionstore::Result;
using regionstore::Status;
using regionstore::StatusCode;

thread_local std::string last_error;

rs_code Fail(rs_code code, std::string message) {
  last_error = std::move(message);
  return code;
}

rs_code From(const Status& status) {
  if (status.ok()) return RS_OK;
  return Fail(static_cast<rs_code>(status.code()), status.ToString());
}

// Runs `body`, turning an escaping exception into RS_INTERNAL.
template <typename Body>
rs_code Guard(Body&& body) noexcept {
  try {
    last_error.clear();
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(RS_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return Fail(RS_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return Fail(RS_INTERNAL, "internal error");
  }
}

// The value a C caller passed for an enum, read from its bytes: a C program
// may pass any int, and in C++ loading an enum object that holds a value
// outside the enum's range is undefined (UBSan's -fsanitize=enum stops it).
template <typename Enum>
int64_t ValueOf(const Enum& value) {
  std::underlying_type_t<Enum> raw;
  static_assert(sizeof raw == sizeof value);
  std::memcpy(&raw, &value, sizeof raw);
  return static_cast<int64_t>(raw);
}

std::optional<Durability> DurabilityOf(const rs_durability& durability) {
  switch (ValueOf(durability)) {
    case RS_NONE:
      return Durability::kNone;
    case RS_ASYNC:
      return Durability::kAsync;
    case RS_SYNC:
      return Durability::kSync;
    case RS_PWRITE_FDATASYNC:
      return Durability::kPwriteFdatasync;
    default:
      return std::nullopt;
  }
}

rs_code BadDurability(const rs_durability& durability) {
  return Fail(RS_INVALID_ARGUMENT, "invalid argument: durability " +
                                       std::to_string(ValueOf(durability)) +
                                       " is none of RS_NONE, RS_ASYNC, RS_SYNC and "
                                       "RS_PWRITE_FDATASYNC");
}

rs_code Null(const char* what) {
  return Fail(RS_INVALID_ARGUMENT, std::string("invalid argument: ") + what + " is NULL");
}

void FillMeta(const regionstore::CheckpointMeta& from, rs_meta* to) {
  if (to == nullptr) return;
  to->generation = from.generation;
  to->length = from.length;
  to->commit_unix_ns = from.commit_unix_ns;
  to->skipped_torn_generation = from.skipped_torn_generation;
  to->skipped_incomplete_batch = from.skipped_incomplete_batch;
}

// Copies `bytes` into out[0, capacity), or says how much it needs.
rs_code CopyOut(const std::vector<std::byte>& bytes, void* out, size_t capacity) {
  if (bytes.size() > capacity) {
    return Fail(RS_BUFFER_TOO_SMALL, "buffer too small: the commit holds " +
                                         std::to_string(bytes.size()) + " bytes, the buffer " +
                                         std::to_string(capacity));
  }
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return RS_OK;
}

std::span<const std::byte> Bytes(const void* data, size_t length) {
  return {static_cast<const std::byte*>(data), length};
}

// `name` must be the store's own string (its table's), which outlives the
// call: info->name points at it.
rs_code FillInfo(const regionstore::Store& store, const std::string& name, rs_region_info* info) {
  auto report = store.Report(name);
  if (!report.ok()) return From(report.status());
  info->name = name.c_str();
  info->capacity = report->capacity;
  info->has_commit = report->has_commit ? 1 : 0;
  info->generation = report->generation;
  info->length = report->length;
  return RS_OK;
}

}  // namespace

extern "C" {

const char* rs_version(void) { return regionstore::VersionString(); }

const char* rs_last_error(void) { return last_error.c_str(); }

const char* rs_code_name(rs_code code) {
  const int64_t value = ValueOf(code);
  if (value == RS_BUFFER_TOO_SMALL) return "buffer too small";
  if (value == RS_INTERNAL) return "internal error";
  if (value < RS_OK || value > RS_STORE_REPLACED) return "unknown code";
  // StatusCodeName's views point at string literals: NUL-terminated.
  return regionstore::StatusCodeName(static_cast<StatusCode>(value)).data();
}

void rs_create_options_init(rs_create_options* options) {
  if (options == nullptr) return;
  *options = rs_create_options{};
  options->protocol = regionstore::CreateOptions{}.protocol;
}

rs_code rs_create(const char* path, uint64_t data_size, const rs_create_options* options) {
  return Guard([&] {
    if (path == nullptr) return Null("path");
    regionstore::CreateOptions create;
    if (options != nullptr) {
      create.protocol = options->protocol;
      create.batch_log = options->batch_log != 0;
      create.journal_size = options->journal_size;
      create.replace_existing = options->replace_existing != 0;
      if (options->checkpoint_count != 0 && options->checkpoints == nullptr) {
        return Null("checkpoints");
      }
      for (size_t i = 0; i < options->checkpoint_count; ++i) {
        const rs_checkpoint_spec& spec = options->checkpoints[i];
        if (spec.name == nullptr) return Null("a checkpoint's name");
        regionstore::SlotLayout layout = regionstore::SlotLayout::kAuto;
        switch (ValueOf(spec.layout)) {
          case RS_LAYOUT_AUTO:
            break;
          case RS_LAYOUT_COMPACT:
            layout = regionstore::SlotLayout::kCompact;
            break;
          case RS_LAYOUT_ALIGNED:
            layout = regionstore::SlotLayout::kAligned;
            break;
          default:
            return Fail(RS_INVALID_ARGUMENT,
                        "invalid argument: checkpoint '" + std::string(spec.name) +
                            "' has layout " + std::to_string(ValueOf(spec.layout)) +
                            ", none of RS_LAYOUT_AUTO, RS_LAYOUT_COMPACT and RS_LAYOUT_ALIGNED");
        }
        create.checkpoints.push_back({spec.name, spec.capacity, layout});
      }
    }
    return From(regionstore::Store::Create(path, data_size, create));
  });
}

void rs_open_options_init(rs_open_options* options) {
  if (options == nullptr) return;
  const regionstore::OpenOptions defaults;
  options->follow_symlinks = defaults.symlinks == regionstore::SymlinkPolicy::kFollow ? 1 : 0;
  options->allow_shared_extents = defaults.allow_shared_extents ? 1 : 0;
  options->wake_waiters = defaults.wake_waiters ? 1 : 0;
}

rs_code rs_open(const char* path, int writable, const rs_open_options* options, rs_store** out) {
  return Guard([&] {
    if (out == nullptr) return Null("out");
    *out = nullptr;
    if (path == nullptr) return Null("path");
    regionstore::OpenOptions open;
    if (options != nullptr) {
      open.symlinks = options->follow_symlinks != 0 ? regionstore::SymlinkPolicy::kFollow
                                                    : regionstore::SymlinkPolicy::kRefuse;
      open.allow_shared_extents = options->allow_shared_extents != 0;
      open.wake_waiters = options->wake_waiters != 0;
    }
    auto store = regionstore::Store::Open(
        path, writable != 0 ? regionstore::OpenMode::kReadWrite : regionstore::OpenMode::kReadOnly,
        open);
    if (!store.ok()) return From(store.status());
    *out = new rs_store{std::move(*store)};
    return RS_OK;
  });
}

void rs_close(rs_store* store) { delete store; }

uint64_t rs_data_size(const rs_store* store) {
  return store == nullptr ? 0 : store->store.data_size();
}

rs_code rs_write(rs_store* store, uint64_t offset, const void* data, size_t length,
                 rs_durability durability) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (data == nullptr && length != 0) return Null("data");
    const auto mode = DurabilityOf(durability);
    if (!mode) return BadDurability(durability);
    return From(store->store.Write(offset, Bytes(data, length), *mode));
  });
}

rs_code rs_read(const rs_store* store, uint64_t offset, void* out, size_t length) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (out == nullptr && length != 0) return Null("out");
    return From(store->store.Read(offset, {static_cast<std::byte*>(out), length}));
  });
}

rs_code rs_flush(rs_store* store, uint64_t offset, uint64_t length, rs_durability durability) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    const auto mode = DurabilityOf(durability);
    if (!mode) return BadDurability(durability);
    return From(store->store.Flush(offset, length, *mode));
  });
}

rs_code rs_sync(rs_store* store, uint64_t* regions_made_durable) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    auto synced = store->store.Sync();
    if (!synced.ok()) return From(synced.status());
    if (regions_made_durable != nullptr) *regions_made_durable = synced->made_durable.size();
    return RS_OK;
  });
}

rs_code rs_durable_generation(rs_store* store, const char* name, uint64_t* generation) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (name == nullptr) return Null("name");
    if (generation == nullptr) return Null("generation");
    auto durable = store->store.DurableGeneration(name);
    if (!durable.ok()) return From(durable.status());
    *generation = *durable;
    return RS_OK;
  });
}

rs_code rs_wait_durable(rs_store* store, const char* name, uint64_t generation) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (name == nullptr) return Null("name");
    return From(store->store.WaitDurable(name, generation));
  });
}

rs_code rs_start_sync(rs_store* store) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    return From(store->store.StartSync());
  });
}

rs_code rs_view(const rs_store* store, uint64_t offset, uint64_t length, const void** out) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (out == nullptr) return Null("out");
    auto view = store->store.View(offset, length);
    if (!view.ok()) return From(view.status());
    *out = view->data();
    return RS_OK;
  });
}

rs_code rs_mutable_view(rs_store* store, uint64_t offset, uint64_t length, void** out) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (out == nullptr) return Null("out");
    auto view = store->store.MutableView(offset, length);
    if (!view.ok()) return From(view.status());
    *out = view->data();
    return RS_OK;
  });
}

rs_code rs_commit(rs_store* store, const char* name, const void* data, size_t length,
                  rs_durability durability, uint64_t* generation) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (name == nullptr) return Null("name");
    if (data == nullptr && length != 0) return Null("data");
    const auto mode = DurabilityOf(durability);
    if (!mode) return BadDurability(durability);
    auto committed = store->store.Commit(name, Bytes(data, length), *mode);
    if (!committed.ok()) return From(committed.status());
    if (generation != nullptr) *generation = *committed;
    return RS_OK;
  });
}

rs_code rs_load(const rs_store* store, const char* name, void* out, size_t capacity,
                rs_meta* meta) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (name == nullptr) return Null("name");
    if (out == nullptr && capacity != 0) return Null("out");
    std::vector<std::byte> bytes;
    auto loaded = store->store.Load(name, bytes);
    if (!loaded.ok()) return From(loaded.status());
    FillMeta(*loaded, meta);
    return CopyOut(bytes, out, capacity);
  });
}

rs_code rs_commit_batch(rs_store* store, const rs_batch_member* members, size_t count,
                        rs_durability durability, uint64_t* generations) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (members == nullptr && count != 0) return Null("members");
    const auto mode = DurabilityOf(durability);
    if (!mode) return BadDurability(durability);
    if (count > regionstore::kMaxBatchMembers) {
      return Fail(RS_INVALID_ARGUMENT, "invalid argument: a batch of " + std::to_string(count) +
                                           " members; at most " +
                                           std::to_string(regionstore::kMaxBatchMembers));
    }
    std::vector<std::span<const std::byte>> pieces(count);
    std::vector<regionstore::BatchMember> batch(count);
    for (size_t i = 0; i < count; ++i) {
      if (members[i].name == nullptr) return Null("a member's name");
      if (members[i].data == nullptr && members[i].length != 0) return Null("a member's data");
      pieces[i] = Bytes(members[i].data, members[i].length);
      batch[i] = {members[i].name, regionstore::PayloadPieces(&pieces[i], 1)};
    }
    auto committed = store->store.CommitBatch(batch, *mode);
    if (!committed.ok()) return From(committed.status());
    if (generations != nullptr) std::copy(committed->begin(), committed->end(), generations);
    return RS_OK;
  });
}

rs_code rs_load_set(const rs_store* store, const char* const* names, size_t count,
                    void* const* outs, const size_t* capacities, rs_meta* metas) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (count != 0 && (names == nullptr || outs == nullptr || capacities == nullptr)) {
      return Null("names, outs or capacities");
    }
    std::vector<std::string_view> views;
    for (size_t i = 0; i < count; ++i) {
      if (names[i] == nullptr) return Null("a name");
      if (outs[i] == nullptr && capacities[i] != 0) return Null("an out buffer");
      views.emplace_back(names[i]);
    }
    std::vector<std::vector<std::byte>> copies;
    auto loaded = store->store.LoadSet(views, copies);
    if (!loaded.ok()) return From(loaded.status());
    // Every copy must fit before any is handed out: the set is one.
    for (size_t i = 0; i < count; ++i) {
      if (metas != nullptr) FillMeta((*loaded)[i], &metas[i]);
    }
    for (size_t i = 0; i < count; ++i) {
      if (copies[i].size() > capacities[i]) {
        return Fail(RS_BUFFER_TOO_SMALL, "buffer too small: '" + std::string(names[i]) +
                                             "' holds " + std::to_string(copies[i].size()) +
                                             " bytes, its buffer " + std::to_string(capacities[i]));
      }
    }
    for (size_t i = 0; i < count; ++i) {
      if (!copies[i].empty()) std::memcpy(outs[i], copies[i].data(), copies[i].size());
    }
    return RS_OK;
  });
}

rs_code rs_wait_newer(const rs_store* store, const char* name, uint64_t generation,
                      int64_t timeout_ms, void* out, size_t capacity, rs_meta* meta) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (name == nullptr) return Null("name");
    if (out == nullptr && capacity != 0) return Null("out");
    // Past about 292 years in nanoseconds, no limit (and no overflow).
    constexpr int64_t kMaxMillis = std::chrono::nanoseconds::max().count() / 1'000'000;
    const std::chrono::nanoseconds timeout =
        timeout_ms < 0 || timeout_ms > kMaxMillis
            ? std::chrono::nanoseconds::max()
            : std::chrono::nanoseconds(std::chrono::milliseconds(timeout_ms));
    std::vector<std::byte> bytes;
    auto newer = store->store.WaitForNewer(name, generation, timeout, bytes);
    if (!newer.ok()) return From(newer.status());
    FillMeta(*newer, meta);
    return CopyOut(bytes, out, capacity);
  });
}

rs_code rs_begin_commit(rs_store* store, const char* name, uint64_t max_length, rs_pending** out) {
  return Guard([&] {
    if (out == nullptr) return Null("out");
    *out = nullptr;
    if (store == nullptr) return Null("store");
    if (name == nullptr) return Null("name");
    auto pending = store->store.BeginCommit(name, max_length);
    if (!pending.ok()) return From(pending.status());
    *out = new rs_pending{std::move(*pending)};
    return RS_OK;
  });
}

rs_code rs_pending_append(rs_pending* pending, const void* data, size_t length) {
  return Guard([&] {
    if (pending == nullptr) return Null("pending");
    if (data == nullptr && length != 0) return Null("data");
    return From(pending->commit.Append(Bytes(data, length)));
  });
}

rs_code rs_pending_payload(rs_pending* pending, void** data, size_t* length) {
  return Guard([&] {
    if (pending == nullptr) return Null("pending");
    if (data == nullptr || length == nullptr) return Null("data or length");
    const std::span<std::byte> payload = pending->commit.payload();
    *data = payload.data();
    *length = payload.size();
    return RS_OK;
  });
}

rs_code rs_pending_finish(rs_pending* pending, uint64_t length, rs_durability durability,
                          uint64_t* generation) {
  return Guard([&] {
    if (pending == nullptr) return Null("pending");
    std::unique_ptr<rs_pending> owned(pending);
    const auto mode = DurabilityOf(durability);
    if (!mode) return BadDurability(durability);
    auto finished = owned->commit.Finish(length, *mode);
    if (!finished.ok()) return From(finished.status());
    if (generation != nullptr) *generation = *finished;
    return RS_OK;
  });
}

void rs_pending_abort(rs_pending* pending) { delete pending; }

size_t rs_region_count(const rs_store* store) {
  return store == nullptr ? 0 : store->store.info().regions.size();
}

rs_code rs_region(const rs_store* store, size_t index, rs_region_info* info) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (info == nullptr) return Null("info");
    const auto& regions = store->store.info().regions;
    if (index >= regions.size()) {
      return Fail(RS_INVALID_ARGUMENT, "invalid argument: region " + std::to_string(index) +
                                           " of " + std::to_string(regions.size()));
    }
    return FillInfo(store->store, regions[index].name, info);
  });
}

rs_code rs_report(const rs_store* store, const char* name, rs_region_info* info) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (name == nullptr) return Null("name");
    if (info == nullptr) return Null("info");
    for (const auto& region : store->store.info().regions) {
      if (region.name == name) return FillInfo(store->store, region.name, info);
    }
    return Fail(RS_NOT_FOUND, "not found: the store has no region '" + std::string(name) + "'");
  });
}

rs_code rs_stats_get(const rs_store* store, rs_stats* stats) {
  return Guard([&] {
    if (store == nullptr) return Null("store");
    if (stats == nullptr) return Null("stats");
    const regionstore::StoreStats from = store->store.Stats();
    for (size_t i = 0; i < from.by_mode.size(); ++i) {
      const regionstore::ModeStats& mode = from.by_mode[i];
      stats->by_mode[i] = {mode.writes,  mode.bytes_written,   mode.flushes, mode.flush_nanos,
                           mode.commits, mode.bytes_committed, mode.batches};
    }
    stats->failed_flushes = from.failed_flushes;
    stats->failed_writes = from.failed_writes;
    stats->batch_log_barriers = from.batch_log_barriers;
    stats->journal_checkpoints = from.journal_checkpoints;
    stats->poisoned = from.poisoned ? 1 : 0;
    return RS_OK;
  });
}

}  // extern "C"
