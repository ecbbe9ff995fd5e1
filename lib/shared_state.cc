// The two homes of a store's shared state (shared_state.h): the store's
// intent area (protocol 1) and the sidecar (protocol 2).
#include "shared_state.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>

#include "shared_copy.h"
#include "test_hooks.h"

namespace regionstore {
namespace {

using intent::Kind;

static_assert(sidecar::kAreaOffset + intent::kAreaSize == sidecar::kLegacySize);

// How often a waiter on a protocol 2 store looks again when it has no
// sidecar of the writer's it can write (so no writer wakes it).
constexpr std::chrono::milliseconds kPollWithoutSidecar{10};

// P as two 8-byte stores, value then checksum.
void StorePublicationWords(std::byte* word, const intent::PublicationBytes& bytes) {
  for (size_t i = 0; i < bytes.size(); i += 8) {
    uint64_t value;
    std::memcpy(&value, bytes.data() + i, 8);
    __atomic_store_n(reinterpret_cast<uint64_t*>(word + i), value, __ATOMIC_RELEASE);
  }
}

// ---- Protocol 1: everything in the store's intent area.

class IntentAreaState final : public SharedState {
 public:
  explicit IntentAreaState(const StoreFile& store) : SharedState(store) {}

  Status WriteEntry(uint32_t entry, const intent::EntryBytes& bytes) override {
    if (!area_) return Status::Ok();
    // By pwrite, not through the mapping: on Linux 6.x ext4 a store through
    // the mapping dirties its whole page-cache folio (2 MiB measured), and
    // the next fdatasync writes all of it back
    // (docs/history/BENCH-CHECKPOINTS-0.13.md).
    return store_.file->WriteAt(*area_ + uint64_t{entry} * intent::kEntrySize, bytes);
  }

  Status WritePublication(const intent::PublicationBytes& bytes, bool through_mapping) override {
    if (!area_) return Status::Ok();
    if (through_mapping) {
      StorePublicationWords(store_.mapping->data() + store_word_offset(), bytes);
      return Status::Ok();
    }
    return store_.file->WriteAt(store_word_offset(), bytes);
  }

  void Wake() override {
    if (area_) store_.mapping->WakeWord(store_word_offset());
  }

  Status AdoptOnOpen(std::vector<std::byte>& /*area*/, const intent::BootId& /*boot*/,
                     bool /*boot_known*/, bool& marks_lost) override {
    marks_lost = false;  // the marks are where the open read them
    return Status::Ok();
  }

  Status ClearMarks() override {
    if (!area_) return Status::Ok();
    static_assert(intent::kPublicationEntry + 2 == intent::kWatermarkEntries[0]);
    const std::vector<std::byte> zero_area(intent::kPublicationEntry * intent::kEntrySize);
    const std::vector<std::byte> zero_entry(intent::kEntrySize);
    Status s = store_.file->WriteAt(*area_, zero_area);
    if (s.ok()) {
      s = store_.file->WriteAt(*area_ + (intent::kPublicationEntry + 1) * intent::kEntrySize,
                               zero_entry);
    }
    return s;
  }

  class StoreWordWaiter final : public Waiter {
   public:
    StoreWordWaiter(Mapping& mapping, uint64_t offset)
        : mapping_(mapping),
          offset_(offset),
          word_(reinterpret_cast<const uint32_t*>(mapping.data() + offset)) {}
    uint32_t Read() const override { return __atomic_load_n(word_, __ATOMIC_ACQUIRE); }
    bool Recheck() override { return false; }
    Status Sleep(uint32_t seen, uint64_t until) override {
      return mapping_.WaitWord(offset_, seen, until);
    }

   private:
    Mapping& mapping_;
    uint64_t offset_;
    const uint32_t* word_;
  };

  std::unique_ptr<Waiter> StartWaiting() const override {
    return std::make_unique<StoreWordWaiter>(*store_.mapping, store_word_offset());
  }

  Result<bool> BeginSnapshot(Guard& guard, int& /*stale*/) const override {
    guard.word = store_.mapping->data() + store_word_offset();
    return true;
  }
  bool SnapshotHeld(const Guard& /*guard*/) const override { return true; }
};

// ---- Protocol 2: the boot-scoped entries, P and the wake word in the
// sidecar; the sidecar's identity and the batch watermarks in the store.

class SidecarState final : public SharedState {
 public:
  SidecarState(const StoreFile& store, std::shared_ptr<sidecar::Sidecar> writer_sidecar)
      : SharedState(store), sidecar_(std::move(writer_sidecar)) {}

  Status WriteEntry(uint32_t entry, const intent::EntryBytes& bytes) override {
    // A store into the sidecar's page cache, which is where the next open
    // in this boot reads it; no system call, nothing for a barrier of the
    // store to write.
    if (std::byte* at = Entry(entry)) {
      shared_copy::StoreSharedWords(at, bytes);
      return Status::Ok();
    }
    return store_.file->WriteAt(*area_ + uint64_t{entry} * intent::kEntrySize, bytes);
  }

  Status WritePublication(const intent::PublicationBytes& bytes,
                          bool /*through_mapping*/) override {
    // Always stored to: the sidecar is never synced.
    StorePublicationWords(Entry(intent::kPublicationEntry), bytes);
    return Status::Ok();
  }

  // A system call only if a reader set the waiter bit.
  void Wake() override { sidecar::Advance(*sidecar_); }

  Status AdoptOnOpen(std::vector<std::byte>& area, const intent::BootId& boot, bool boot_known,
                     bool& marks_lost) override;
  Status ClearMarks() override {
    ClearSidecarMarks();
    return Status::Ok();
  }
  bool MarksPerCommit() const override { return true; }
  std::unique_ptr<Waiter> StartWaiting() const override;
  Result<bool> BeginSnapshot(Guard& guard, int& stale) const override;
  void PublishDurable(uint32_t region, uint64_t generation) override {
    if (store_.writable && sidecar_) sidecar_->set_durable_point(region, generation);
  }
  Result<uint64_t> ReadDurable(uint32_t region) const override;
  bool SnapshotHeld(const Guard& guard) const override {
    if (guard.identity_before) {
      const Result<bool> alive = store_.file->HasWriter();
      return ReadIdentity() == *guard.identity_before && alive.ok() && !*alive;
    }
    // The sidecar whose P was compared was the writer's all along.
    return IsCurrent(*guard.keep);
  }

  // Readers: the sidecar for writing, opened on first use (a reader never
  // creates it) and opened again while the one held is not the store's;
  // nullptr while none can be opened.
  std::shared_ptr<sidecar::Sidecar> WaitSidecar() const;
  // Whether `side` is the sidecar the store's identity entry names (the one
  // its last writer opened: same id, same inode), read through the mapping.
  bool IsCurrent(const sidecar::Sidecar& side) const;

 private:
  // Where intent entry `entry` lives in the sidecar: nullptr for the
  // entries that stay in the store file (the sidecar's identity, the batch
  // watermarks) and for read-only handles.
  std::byte* Entry(uint32_t entry) const {
    if (!store_.writable || !sidecar_ || entry == intent::kSidecarEntry ||
        entry == intent::kWatermarkEntries[0] || entry == intent::kWatermarkEntries[1]) {
      return nullptr;
    }
    return sidecar_->area() + uint64_t{entry} * intent::kEntrySize;
  }
  void ClearSidecarMarks() {
    static constexpr intent::EntryBytes kFree{};
    for (uint32_t e = 0; e < intent::kEntryCount; ++e) {
      if (std::byte* at = Entry(e); at != nullptr && e != intent::kPublicationEntry) {
        shared_copy::StoreSharedWords(at, kFree);
      }
    }
  }
  intent::EntryBytes ReadIdentity() const {
    return shared_copy::LoadSharedWords<intent::kEntrySize>(
        store_.mapping->data() + *area_ + uint64_t{intent::kSidecarEntry} * intent::kEntrySize);
  }
  // Opens `slot`'s sidecar anew (never creating it) unless it holds the
  // store's or the path still names the file it holds; the replaced one is
  // released (unmapped once no running call holds it). Every open judges
  // the file by the trust rule (sidecar::TrustProblem) against the store's
  // owner and mode as fstat gives them now. Under mutex_.
  Status Refresh(std::shared_ptr<sidecar::Sidecar>& slot, OpenMode mode) const;
  // LoadSet: the sidecar for writing as WaitSidecar opens it, or else for
  // reading (opened again in the same way); the error of the read-only
  // open if neither can be.
  Result<std::shared_ptr<const sidecar::Sidecar>> ReadSidecar() const;

  // A writer opens the sidecar at Open and fails without it; a read-only
  // handle opens it at its first wait, under `mutex_`, and tries again at
  // each recheck while it has none it can write. Shared: a read-only handle
  // replaces a sidecar that stopped being the store's (removed and made
  // anew) under the mutex, and the calls still using the old one keep it
  // mapped until they return, so a handle maps at most these two at rest.
  mutable std::shared_ptr<sidecar::Sidecar> sidecar_;
  // A read-only handle that could open the sidecar only for reading
  // (LoadSet needs no more).
  mutable std::shared_ptr<sidecar::Sidecar> read_only_;
  mutable std::mutex mutex_;
};

Status SidecarState::AdoptOnOpen(std::vector<std::byte>& area, const intent::BootId& boot,
                                 bool boot_known, bool& marks_lost) {
  const std::span<std::byte> entry_bytes = std::span(area).subspan(
      uint64_t{intent::kSidecarEntry} * intent::kEntrySize, intent::kEntrySize);
  const std::optional<intent::Entry> recorded = intent::DecodeEntry(entry_bytes);
  const bool recorded_here =
      recorded && recorded->kind == Kind::kSidecar && boot_known && recorded->boot_id == boot;
  const uint64_t id = sidecar_->id();
  // Whether the store names this very file (its id and its inode: a copy of
  // an old sidecar has the id but not the inode).
  const bool named = recorded && recorded->kind == Kind::kSidecar && id != 0 &&
                     recorded->generation == id && recorded->slot == sidecar_->inode_tag;
  // This boot's writer named another sidecar: the file was removed (or
  // replaced) since, and with it the marks of a barrier that may have
  // failed. Nothing tells which regions they named.
  marks_lost =
      recorded_here && !named && !internal::Mutated(internal::Mutation::kIgnoreLostSidecar);
  // The durable points of the writer before, which may not describe this
  // store any more (a store file restored or copied over it since): this
  // writer publishes its own as it learns them. Readers that trust the
  // sidecar meanwhile (the identity below names it, or named it already)
  // find 0, which promises nothing.
  sidecar_->clear_durable_points();
  // The boot-scoped entries as the sidecar holds them (P included: it is
  // the word readers of this sidecar compare), except marks that are not
  // this store's.
  for (uint32_t e = 0; e < intent::kEntryCount; ++e) {
    const std::byte* at = Entry(e);
    if (at == nullptr) continue;
    const std::span<std::byte> into =
        std::span(area).subspan(uint64_t{e} * intent::kEntrySize, intent::kEntrySize);
    if (marks_lost && e != intent::kPublicationEntry) {
      std::fill(into.begin(), into.end(), std::byte{0});
      continue;
    }
    const intent::EntryBytes bytes = shared_copy::LoadSharedWords<intent::kEntrySize>(at);
    std::copy(bytes.begin(), bytes.end(), into.begin());
  }
  if (marks_lost) {
    // Whatever marks this sidecar holds are not the store's: clear them, and
    // leave the one that says every region must be recovered, so that an
    // open that dies before that recovery's fdatasync returned (after the
    // identity below names this sidecar) leaves the next open the same work.
    ClearSidecarMarks();
    shared_copy::StoreSharedWords(Entry(intent::kFileBarrierEntry),
                                  intent::EncodeEntry({Kind::kFileBarrier, 0, 0, 0, boot}));
  }
  // A sidecar the store names keeps its id (across a reboot too: its marks
  // are another boot's then, and ignored), so that readers holding it never
  // see it change.
  uint64_t next_id = id;
  if (!named) {
    std::array<std::byte, 8> random{};
    if (Status s = store_.io->FillRandom(random); !s.ok()) {
      return s.WithOperation("open: random", *store_.path);
    }
    std::memcpy(&next_id, random.data(), sizeof next_id);
    if (next_id == 0) next_id = 1;
    sidecar_->set_id(next_id);
  }
  // In every case a new open count: written before anything a reader sees
  // changes, so that a reader that holds a replaced sidecar, or none, can
  // tell that a writer opened since it looked (Store::LoadSet).
  const uint32_t opens = recorded && recorded->kind == Kind::kSidecar ? recorded->region + 1 : 1;
  const intent::EntryBytes identity =
      intent::EncodeEntry({Kind::kSidecar, opens, sidecar_->inode_tag, next_id, boot});
  if (Status s = store_.file->WriteAt(*area_ + uint64_t{intent::kSidecarEntry} * intent::kEntrySize,
                                      identity);
      !s.ok()) {
    return s.WithOperation("open: pwrite (the sidecar's identity)", *store_.path);
  }
  std::copy(identity.begin(), identity.end(), entry_bytes.begin());
  return Status::Ok();
}

bool SidecarState::IsCurrent(const sidecar::Sidecar& side) const {
  if (!area_) return false;
  const std::optional<intent::Entry> entry = intent::DecodeEntry(ReadIdentity());
  // No writer has opened the store yet: any sidecar is as good as fresh.
  if (!entry || entry->kind != Kind::kSidecar) return side.id() == 0;
  return entry->generation == side.id() && entry->slot == side.inode_tag;
}

Status SidecarState::Refresh(std::shared_ptr<sidecar::Sidecar>& slot, OpenMode mode) const {
  if (slot && IsCurrent(*slot)) return Status::Ok();
  if (slot) {
    // The writer uses another file than the one at the path (a store
    // reached by another name, or a sidecar restored under it): opening the
    // path again would give the same file, once per poll.
    const Result<FileStat> named = store_.io->StatPath(sidecar::PathFor(*store_.path));
    if (named.ok() && named->device == slot->device && named->inode == slot->inode) {
      return Status::Ok();
    }
  }
  const Result<FileStat> stat = store_.file->Stat();
  if (!stat.ok()) return stat.status();
  auto opened = sidecar::Open(*store_.io, *store_.path, *stat, mode, /*create=*/false);
  if (!opened.ok()) return opened.status();
  slot = std::make_shared<sidecar::Sidecar>(std::move(*opened));
  return Status::Ok();
}

std::shared_ptr<sidecar::Sidecar> SidecarState::WaitSidecar() const {
  std::lock_guard lock(mutex_);
  // A writer's is the store's: its open named it.
  if (!store_.writable) static_cast<void>(Refresh(sidecar_, OpenMode::kReadWrite));
  return sidecar_;
}

Result<std::shared_ptr<const sidecar::Sidecar>> SidecarState::ReadSidecar() const {
  if (std::shared_ptr<sidecar::Sidecar> writable_one = WaitSidecar();
      writable_one != nullptr && IsCurrent(*writable_one)) {
    return std::shared_ptr<const sidecar::Sidecar>(std::move(writable_one));
  }
  std::lock_guard lock(mutex_);
  if (Status s = Refresh(read_only_, OpenMode::kReadOnly); !s.ok()) {
    if (sidecar_) return std::shared_ptr<const sidecar::Sidecar>(sidecar_);
    return s;
  }
  return std::shared_ptr<const sidecar::Sidecar>(read_only_);
}

// The sidecar's wake word, with the waiter bit set by compare-and-swap from
// the value read before sleeping: a commit in between moved the word, the
// swap fails and the waiter looks again. A handle that cannot open the
// sidecar for writing, or holds one the store's identity entry does not
// name, cannot be woken: it polls (kPollWithoutSidecar) and opens the
// sidecar again after each sleep.
class SidecarWaiter final : public SharedState::Waiter {
 public:
  SidecarWaiter(const SidecarState& state, Io& io, Mapping& mapping, uint64_t store_word)
      : state_(state),
        io_(io),
        mapping_(mapping),
        store_word_(store_word),
        registry_(state.WaitSidecar()) {}

  uint32_t Read() const override {
    const auto* word = registry_ != nullptr
                           ? registry_->wake_word()
                           : reinterpret_cast<const uint32_t*>(mapping_.data() + store_word_);
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
  }

  bool Recheck() override {
    if (registry_ != nullptr) return false;
    registry_ = state_.WaitSidecar();
    // Its word was not the one read before.
    return registry_ != nullptr;
  }

  Status Sleep(uint32_t seen, uint64_t until) override {
    // A sidecar the store's identity entry does not name (removed and made
    // anew, or one beside another path to the store) is no writer's: its
    // word may never move. Poll until it is the store's again.
    if (registry_ != nullptr && state_.IsCurrent(*registry_)) {
      const std::optional<uint32_t> value = sidecar::Register(*registry_, seen);
      if (!value) return Status::Error(StatusCode::kBusy, "wait", "", "the word moved");
      return registry_->mapping->WaitWord(sidecar::kWakeOffset, *value, until);
    }
    // Nobody wakes a waiter that could not register: poll, sleeping on the
    // store's own word, which no protocol 2 writer moves, and look for the
    // writer's sidecar again after each sleep.
    const uint64_t poll = SaturatingAdd(io_.MonotonicNanos(), kPollWithoutSidecar);
    const uint32_t still = __atomic_load_n(
        reinterpret_cast<const uint32_t*>(mapping_.data() + store_word_), __ATOMIC_ACQUIRE);
    Status waited = mapping_.WaitWord(store_word_, still, std::min(until, poll));
    registry_ = state_.WaitSidecar();
    return waited;
  }

 private:
  const SidecarState& state_;
  Io& io_;
  Mapping& mapping_;
  uint64_t store_word_;
  std::shared_ptr<sidecar::Sidecar> registry_;
};

std::unique_ptr<SharedState::Waiter> SidecarState::StartWaiting() const {
  return std::make_unique<SidecarWaiter>(*this, *store_.io, *store_.mapping, store_word_offset());
}

Result<bool> SidecarState::BeginSnapshot(Guard& guard, int& stale) const {
  // Only the sidecar the store's identity entry names (the one its writer
  // uses) says anything. Without such a sidecar (none this handle can
  // open, or one removed and made anew, or reached by another path) a
  // snapshot is still exact while no writer holds the store: every
  // writer's open rewrites the identity entry before it changes anything
  // visible, so the same entry and no writer on both sides of the snapshot
  // mean nothing changed.
  guard.word = nullptr;
  guard.identity_before.reset();
  Status no_sidecar;
  if (guard.keep == nullptr || !IsCurrent(*guard.keep)) {
    auto opened = ReadSidecar();
    guard.keep = opened.ok() ? *opened : nullptr;
    no_sidecar = opened.ok() ? Status::Ok() : opened.status();
  }
  if (guard.keep != nullptr && IsCurrent(*guard.keep)) {
    guard.word = guard.keep->area() + uint64_t{intent::kPublicationEntry} * intent::kEntrySize;
    return true;
  }
  // P of the store, which no protocol 2 writer moves.
  guard.word = store_.mapping->data() + store_word_offset();
  guard.identity_before = ReadIdentity();
  const Result<bool> alive = store_.file->HasWriter();
  if (guard.keep != nullptr && alive.ok() && *alive) {
    // A writer is opening (it names its sidecar a moment after it gives it
    // its id), or it uses another sidecar than this handle can reach.
    ++stale;
    return false;
  }
  if (!alive.ok() || *alive) {
    const std::string why = guard.keep != nullptr ? std::string("it is not the one the writer uses")
                                                  : no_sidecar.ToString();
    return Status::Error(
        StatusCode::kBusy, "load set", *store_.path,
        "a writer " + std::string(alive.ok() ? "holds" : "may hold") +
            " this protocol 2 store, and this handle cannot read its publication word in the "
            "sidecar '" +
            sidecar::PathFor(*store_.path) + "' (" + why +
            "); Load each region alone, or give this process read access to the sidecar");
  }
  return true;
}

Result<uint64_t> SidecarState::ReadDurable(uint32_t region) const {
  if (region >= sidecar::kDurableRegions) {
    return Status::Error(StatusCode::kInvalidArgument, "durable generation", *store_.path,
                         "the sidecar keeps durable points for the first " +
                             std::to_string(sidecar::kDurableRegions) +
                             " regions; this is region " + std::to_string(region) +
                             " of the table (ask the writer's handle)");
  }
  auto side = ReadSidecar();
  if (!side.ok()) {
    // No writer has made one yet: nothing is known durable.
    if (side.status().code() == StatusCode::kNotFound) return uint64_t{0};
    return Status::Error(StatusCode::kBusy, "durable generation", *store_.path,
                         "this handle cannot read the writer's sidecar '" +
                             sidecar::PathFor(*store_.path) + "' (" + side.status().ToString() +
                             "), where the writer publishes what is durable");
  }
  // One the store does not name is no writer's (removed and made anew, or
  // reached by another path): it says nothing.
  if (!IsCurrent(**side)) return uint64_t{0};
  return (*side)->durable_point(region);
}

}  // namespace

Result<uint64_t> SharedState::ReadDurable(uint32_t /*region*/) const {
  return Status::Error(StatusCode::kInvalidArgument, "durable generation", *store_.path,
                       "a protocol 1 store keeps no durable point for readers; ask the writer's "
                       "handle, or copy the store to protocol 2 (regionctl copy --protocol 2)");
}

SharedState::SharedState(const StoreFile& store)
    : store_(store), area_(intent::AreaOffset(*store.info)) {}

Result<std::unique_ptr<SharedState>> SharedState::Open(const StoreFile& store) {
  if (store.info->protocol() != 2) return std::unique_ptr<SharedState>(new IntentAreaState(store));
  if (!store.writable) return std::unique_ptr<SharedState>(new SidecarState(store, nullptr));
  const Result<FileStat> stat = store.file->Stat();
  if (!stat.ok()) return stat.status().WithOperation("open: fstat", *store.path);
  auto opened = sidecar::Open(*store.io, *store.path, *stat, OpenMode::kReadWrite, /*create=*/true);
  if (!opened.ok()) {
    const Status& failed = opened.status();
    return Status::Error(failed.code(), "open: sidecar", failed.path(),
                         failed.message() + (failed.message().empty() ? "" : "; ") +
                             "the writer of a protocol 2 store needs its sidecar PATH.shm, "
                             "where readers that wait register",
                         failed.sys_errno());
  }
  return std::unique_ptr<SharedState>(
      new SidecarState(store, std::make_shared<sidecar::Sidecar>(std::move(*opened))));
}

}  // namespace regionstore
