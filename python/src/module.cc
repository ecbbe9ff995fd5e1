// regionstore._regionstore: the Python binding of the C++ API (pybind11).
// The package regionstore (python/regionstore/__init__.py) re-exports it with
// its exception classes and the batch context manager.
//
// Rules kept here:
//  - Payloads are taken through the buffer protocol (bytes, bytearray,
//    memoryview, NumPy arrays), contiguous, with no copy; a non-contiguous
//    buffer is refused (BufferError), never copied silently.
//  - Every call that does I/O or can wait runs with the GIL released, under
//    the handle's lock, shared: the C++ handle synchronises its own calls
//    (store.h's threading rules), so Python threads sharing one handle
//    commit at once and share barriers. The lock is exclusive only for
//    close().
//  - Views are memoryviews over the mapping itself. Each export keeps the
//    handle's state alive and is counted; close() refuses with BufferError
//    while any is exported, as Python's mmap does.
//  - A wait runs in slices of 200 ms and checks for signals between them,
//    so Ctrl-C interrupts it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "regionstore/regionstore.h"

namespace py = pybind11;
namespace rs = regionstore;

// An integer argument as Python passed it. pybind11's own integer casters
// refuse -1 and 2**64 as "incompatible function arguments" (a TypeError
// naming no argument); this one takes any object, and Unsigned() converts it
// with an error that names the argument: ValueError below 0, OverflowError
// above the C++ type, TypeError for what is not an integer.
struct IntArg {
  py::object value;
};

namespace pybind11::detail {
template <>
struct type_caster<IntArg> {
  PYBIND11_TYPE_CASTER(IntArg, const_name("int"));
  bool load(handle source, bool /*convert*/) {
    value.value = reinterpret_borrow<object>(source);
    return true;
  }
};
}  // namespace pybind11::detail

namespace {

// The class of regionstore._errors that maps `code`.
const char* ErrorClass(rs::StatusCode code) {
  switch (code) {
    case rs::StatusCode::kOk:
      break;
    case rs::StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case rs::StatusCode::kNotFound:
      return "NotFound";
    case rs::StatusCode::kPermissionDenied:
      return "PermissionDenied";
    case rs::StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case rs::StatusCode::kCorruption:
      return "Corruption";
    case rs::StatusCode::kUnsupportedVersion:
      return "UnsupportedVersion";
    case rs::StatusCode::kNoSpace:
      return "NoSpace";
    case rs::StatusCode::kIOError:
      return "IOError";
    case rs::StatusCode::kBusy:
      return "Busy";
    case rs::StatusCode::kPoisoned:
      return "Poisoned";
    case rs::StatusCode::kTornCommit:
      return "TornCommit";
    case rs::StatusCode::kSharedExtents:
      return "SharedExtents";
    case rs::StatusCode::kTimedOut:
      return "TimedOut";
    case rs::StatusCode::kStoreReplaced:
      return "StoreReplaced";
  }
  return "Error";
}

// Raises regionstore.<class_name>(message). Needs the GIL.
[[noreturn]] void RaiseClass(const char* class_name, const std::string& message) {
  py::object error_class = py::module_::import("regionstore._errors").attr(class_name);
  PyErr_SetObject(error_class.ptr(), py::str(message).ptr());
  throw py::error_already_set();
}

[[noreturn]] void Raise(const rs::Status& status) {
  RaiseClass(ErrorClass(status.code()), status.ToString());
}

void Check(const rs::Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T Take(rs::Result<T>&& result) {
  if (!result.ok()) Raise(result.status());
  return std::move(*result);
}

// A contiguous buffer of a Python object, held for the life of this object
// (the exporter cannot resize or free it meanwhile).
class Buffer {
 public:
  Buffer(py::handle object, bool writable) {
    const int flags = PyBUF_ANY_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) throw py::error_already_set();
    held_ = true;
  }
  Buffer(Buffer&& other) noexcept : view_(other.view_), held_(std::exchange(other.held_, false)) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer& operator=(Buffer&&) = delete;
  ~Buffer() {
    if (held_) PyBuffer_Release(&view_);
  }
  std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(view_.buf), static_cast<size_t>(view_.len)};
  }
  std::span<std::byte> writable_bytes() {
    return {static_cast<std::byte*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

rs::Durability ParseMode(const py::object& mode) {
  if (py::isinstance<py::str>(mode)) {
    std::string name = mode.cast<std::string>();
    std::replace(name.begin(), name.end(), '_', '-');
    const std::optional<rs::Durability> durability = rs::ParseDurability(name);
    if (!durability) {
      RaiseClass("InvalidArgument", "invalid argument: durability '" + mode.cast<std::string>() +
                                        "' is none of 'none', 'async', 'sync' and "
                                        "'pwrite-fdatasync'");
    }
    return *durability;
  }
  try {
    return mode.cast<rs::Durability>();
  } catch (const py::cast_error&) {
    throw py::type_error(
        "durability must be a str ('none', 'async', 'sync', "
        "'pwrite-fdatasync') or a regionstore.Durability");
  }
}

py::bytes BytesOf(const std::vector<std::byte>& bytes) {
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

[[noreturn]] void RaiseOverflow(const std::string& name, const std::string& text, uint64_t max) {
  PyErr_SetString(PyExc_OverflowError,
                  (name + " must be at most " + std::to_string(max) + ", not " + text).c_str());
  throw py::error_already_set();
}

// `argument` as an integer in [0, max]: InvalidArgument (a ValueError) below
// 0, OverflowError above `max`, TypeError if it is not an integer (anything
// with __index__ is one: a NumPy integer too). `name` names the argument.
uint64_t Unsigned(const IntArg& argument, const std::string& name,
                  uint64_t max = std::numeric_limits<uint64_t>::max()) {
  PyObject* index = PyNumber_Index(argument.value.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw py::type_error(name + " must be an int, not " +
                         std::string(Py_TYPE(argument.value.ptr())->tp_name));
  }
  const py::int_ number = py::reinterpret_steal<py::int_>(index);
  const std::string text = py::repr(number).cast<std::string>();
  if (number < py::int_(0)) {
    RaiseClass("InvalidArgument", "invalid argument: " + name + " must be >= 0, not " + text);
  }
  const unsigned long long value = PyLong_AsUnsignedLongLong(number.ptr());
  if (value == static_cast<unsigned long long>(-1) && PyErr_Occurred() != nullptr) {
    PyErr_Clear();
    RaiseOverflow(name, text, max);
  }
  if (value > max) RaiseOverflow(name, text, max);
  return value;
}

std::optional<uint64_t> Unsigned(const std::optional<IntArg>& argument, const std::string& name) {
  if (!argument) return std::nullopt;
  return Unsigned(*argument, name);
}

[[noreturn]] void RaiseClosed() { throw py::value_error("I/O operation on a closed store"); }

// The state of one open handle, shared by the Python Store object, every
// view exported from it and every pending commit begun on it.
//
// `store` is read and reset only under `mutex`; `views` only with the GIL
// held; `closing` is set with the GIL held and read anywhere. close() checks
// `views` and sets `closing` in one step under the GIL, then resets `store`
// under the exclusive lock: a view made meanwhile (its pointer taken under
// the lock, its export counted under the GIL afterwards) sees `closing` when
// it gets the GIL back and is refused, so no view can outlive the mapping.
//
// Once `closing` is set no call takes the lock again to run: glibc's
// shared_mutex lets a shared lock in while an exclusive one waits, so two
// threads whose wait slices overlap would keep close() out for as long as
// they wait. A call checks `closing` before it locks and again once it holds
// the lock (it may have checked just before close() began), and raises
// ValueError; close() then waits only for the calls already running.
struct Handle {
  std::optional<rs::Store> store;
  std::shared_mutex mutex;
  int64_t views = 0;
  std::atomic<bool> closing{false};
};

// Runs body(store) with the GIL released and the handle locked (Lock: a
// std::shared_lock, which keeps close() out, or a std::unique_lock), and
// returns what it returns. ValueError if the store is closed or closing.
// The body must not touch Python.
template <typename Lock, typename Body>
auto Locked(Handle& handle, Body&& body) {
  using Value = decltype(body(std::declval<rs::Store&>()));
  if (handle.closing.load()) RaiseClosed();
  std::optional<Value> value;
  {
    py::gil_scoped_release nogil;
    Lock lock(handle.mutex);
    if (handle.store && !handle.closing.load()) value.emplace(body(*handle.store));
  }
  if (!value) RaiseClosed();
  return std::move(*value);
}

template <typename Body>
auto Reading(Handle& handle, Body&& body) {
  return Locked<std::shared_lock<std::shared_mutex>>(handle, std::forward<Body>(body));
}

// A call that changes the handle: the C++ handle serialises what must be
// serialised, so a shared lock is enough here too.
template <typename Body>
auto Changing(Handle& handle, Body&& body) {
  return Locked<std::shared_lock<std::shared_mutex>>(handle, std::forward<Body>(body));
}

// The exporter behind a memoryview from Store.view/mutable_view or
// PendingCommit.payload: holds the handle (so the mapping stays while the
// memoryview lives, and close() refuses) and, for a payload, the Python
// PendingCommit object, so the commit can be neither finished, aborted nor
// dropped while stores through the view are possible.
class ViewExport {
 public:
  ViewExport(std::shared_ptr<Handle> handle, std::byte* data, size_t length, bool readonly,
             py::object owner, std::function<void()> on_release)
      : handle_(std::move(handle)),
        owner_(std::move(owner)),
        on_release_(std::move(on_release)),
        data_(data),
        length_(length),
        readonly_(readonly) {
    ++handle_->views;
  }
  ViewExport(const ViewExport&) = delete;
  ViewExport& operator=(const ViewExport&) = delete;
  ~ViewExport() {
    --handle_->views;
    if (on_release_) on_release_();  // owner_ is still alive here
  }

  py::buffer_info Info() const {
    return py::buffer_info(data_, 1, py::format_descriptor<uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(length_)}, {1}, readonly_);
  }

 private:
  std::shared_ptr<Handle> handle_;
  py::object owner_;
  std::function<void()> on_release_;
  std::byte* data_;
  size_t length_;
  bool readonly_;
};

// A memoryview over [data, data + length) of the handle's mapping, unless
// close() began while the pointer was being taken.
py::memoryview Export(const std::shared_ptr<Handle>& handle, std::byte* data, size_t length,
                      bool readonly, py::object owner = py::none(),
                      std::function<void()> on_release = {}) {
  if (handle->closing) RaiseClosed();
  auto exporter = py::cast(std::make_unique<ViewExport>(handle, data, length, readonly,
                                                        std::move(owner), std::move(on_release)));
  return py::memoryview(exporter);
}

// A commit filled in place (Store.begin_commit). Holds the handle, so the
// Store it borrows outlives it; closing the store first makes every call
// fail with InvalidArgument (store.h's rule). Every call on the commit runs
// under the handle's shared lock, which keeps close() out: the C++ handle
// serialises the writer's state (an exclusive lock here would wait behind
// every committing thread, which glibc's shared_mutex keeps letting in).
class PendingObject {
 public:
  PendingObject(std::shared_ptr<Handle> handle, rs::PendingCommit commit)
      : handle_(std::move(handle)), commit_(std::move(commit)) {}
  PendingObject(const PendingObject&) = delete;
  PendingObject& operator=(const PendingObject&) = delete;
  ~PendingObject() {
    // Aborts if still pending; no payload view can exist (each holds this
    // object).
    py::gil_scoped_release nogil;
    std::shared_lock lock(handle_->mutex);
    commit_.Abort();
  }

  // `self` is this object as Python holds it: the view keeps it alive.
  py::memoryview Payload(py::object self) {
    std::span<std::byte> payload;
    bool pending = false;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(handle_->mutex);
      pending = commit_.pending();
      if (pending) payload = commit_.payload();
    }
    if (!pending || ending_) {
      RaiseClass("InvalidArgument", "invalid argument: the commit is no longer pending");
    }
    py::memoryview view =
        Export(handle_, payload.data(), payload.size(), false, self, [this] { --views_; });
    ++views_;
    return view;
  }

  void Append(const py::buffer& data) {
    Buffer buffer(data, false);
    rs::Status status;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(handle_->mutex);
      status = commit_.Append(buffer.bytes());
    }
    Check(status);
  }

  uint64_t appended() {
    py::gil_scoped_release nogil;
    std::shared_lock lock(handle_->mutex);
    return commit_.appended();
  }
  bool pending() {
    py::gil_scoped_release nogil;
    std::shared_lock lock(handle_->mutex);
    return commit_.pending();
  }
  int64_t payload_views() const { return views_; }

  uint64_t Finish(const std::optional<IntArg>& length_arg, const py::object& mode) {
    const std::optional<uint64_t> length = Unsigned(length_arg, "length");
    const rs::Durability durability = ParseMode(mode);
    RefuseWhileViewed("finish");
    std::optional<rs::Result<uint64_t>> finished;
    ending_ = true;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(handle_->mutex);
      finished.emplace(length ? commit_.Finish(*length, durability) : commit_.Finish(durability));
    }
    ending_ = false;
    return Take(std::move(*finished));
  }

  void Abort() {
    RefuseWhileViewed("abort");
    ending_ = true;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(handle_->mutex);
      commit_.Abort();
    }
    ending_ = false;
  }

 private:
  void RefuseWhileViewed(const char* what) const {
    if (views_ != 0) {
      throw py::buffer_error(std::string("cannot ") + what +
                             " a commit while its payload view is exported: release it first "
                             "(a store through it afterwards would change a slot that is no "
                             "longer this commit's)");
    }
  }

  std::shared_ptr<Handle> handle_;  // declared first: destroyed after commit_
  rs::PendingCommit commit_;
  int64_t views_ = 0;    // payload views alive; guarded by the GIL
  bool ending_ = false;  // finish() or abort() running; guarded by the GIL
};

class StoreObject {
 public:
  explicit StoreObject(rs::Store store) : handle_(std::make_shared<Handle>()) {
    handle_->store.emplace(std::move(store));
  }

  void Close() {
    if (handle_->closing) return;
    if (handle_->views != 0) {
      throw py::buffer_error("cannot close a store while " + std::to_string(handle_->views) +
                             " view(s) of its mapping are exported: release them first");
    }
    handle_->closing = true;
    py::gil_scoped_release nogil;
    std::unique_lock lock(handle_->mutex);
    handle_->store.reset();
  }
  bool closed() const { return handle_->closing; }
  int64_t exported_views() const { return handle_->views; }

  std::string path() {
    return Reading(*handle_, [](rs::Store& store) { return store.path(); });
  }
  bool writable() {
    return Reading(*handle_, [](rs::Store& store) { return store.writable(); });
  }
  uint64_t data_size() {
    return Reading(*handle_, [](rs::Store& store) { return store.data_size(); });
  }
  uint32_t protocol() {
    return Reading(*handle_, [](rs::Store& store) { return store.info().protocol(); });
  }
  std::vector<std::string> regions() {
    return Reading(*handle_, [](rs::Store& store) {
      std::vector<std::string> names;
      for (const auto& region : store.info().regions) names.push_back(region.name);
      return names;
    });
  }

  void Write(const IntArg& offset_arg, const py::buffer& data, const py::object& mode) {
    const uint64_t offset = Unsigned(offset_arg, "offset");
    const rs::Durability durability = ParseMode(mode);
    Buffer buffer(data, false);
    Check(Changing(*handle_, [&](rs::Store& store) {
      return store.Write(offset, buffer.bytes(), durability);
    }));
  }

  py::bytes Read(const IntArg& offset_arg, const IntArg& length_arg) {
    const uint64_t offset = Unsigned(offset_arg, "offset");
    const uint64_t length = Unsigned(length_arg, "length");
    const uint64_t size = data_size();
    if (length > size) {
      RaiseClass("InvalidArgument", "invalid argument: read of " + std::to_string(length) +
                                        " bytes from a data area of " + std::to_string(size));
    }
    std::vector<std::byte> bytes(length);
    Check(Reading(*handle_, [&](rs::Store& store) { return store.Read(offset, bytes); }));
    return BytesOf(bytes);
  }

  void ReadInto(const IntArg& offset_arg, const py::buffer& out) {
    const uint64_t offset = Unsigned(offset_arg, "offset");
    Buffer buffer(out, true);
    Check(Reading(*handle_,
                  [&](rs::Store& store) { return store.Read(offset, buffer.writable_bytes()); }));
  }

  // The rest of the data area from `offset` when `length` is None.
  uint64_t SpanOf(uint64_t offset, std::optional<uint64_t> length) {
    if (length) return *length;
    const uint64_t size = data_size();
    return offset <= size ? size - offset : 0;
  }

  void Flush(const IntArg& offset_arg, const std::optional<IntArg>& length_arg,
             const py::object& mode) {
    const uint64_t offset = Unsigned(offset_arg, "offset");
    const std::optional<uint64_t> length = Unsigned(length_arg, "length");
    const rs::Durability durability = ParseMode(mode);
    const uint64_t span = SpanOf(offset, length);
    Check(Changing(*handle_,
                   [&](rs::Store& store) { return store.Flush(offset, span, durability); }));
  }

  py::memoryview View(const IntArg& offset_arg, const std::optional<IntArg>& length_arg,
                      bool writable) {
    const uint64_t offset = Unsigned(offset_arg, "offset");
    const std::optional<uint64_t> length = Unsigned(length_arg, "length");
    const uint64_t span = SpanOf(offset, length);
    std::byte* data = nullptr;
    if (writable) {
      // MutableView follows Write's threading rules.
      data = Take(Changing(*handle_, [&](rs::Store& store) {
               return store.MutableView(offset, span);
             })).data();
    } else {
      data = const_cast<std::byte*>(Take(Reading(*handle_, [&](rs::Store& store) {
                                      return store.View(offset, span);
                                    })).data());
    }
    return Export(handle_, data, span, !writable);
  }

  uint64_t Commit(std::string_view name, const py::buffer& data, const py::object& mode) {
    const rs::Durability durability = ParseMode(mode);
    Buffer buffer(data, false);
    return Take(Changing(*handle_, [&](rs::Store& store) {
      return store.Commit(name, buffer.bytes(), durability);
    }));
  }

  std::unique_ptr<PendingObject> BeginCommit(std::string_view name, const IntArg& max_length_arg) {
    const uint64_t max_length = Unsigned(max_length_arg, "max_length");
    rs::PendingCommit pending = Take(
        Changing(*handle_, [&](rs::Store& store) { return store.BeginCommit(name, max_length); }));
    return std::make_unique<PendingObject>(handle_, std::move(pending));
  }

  py::tuple LoadWithMeta(std::string_view name) {
    std::vector<std::byte> bytes;
    const rs::CheckpointMeta meta =
        Take(Reading(*handle_, [&](rs::Store& store) { return store.Load(name, bytes); }));
    return py::make_tuple(BytesOf(bytes), meta);
  }

  py::bytes Load(std::string_view name) { return LoadWithMeta(name)[0]; }

  rs::CheckpointMeta LoadInto(std::string_view name, const py::buffer& out) {
    Buffer buffer(out, true);
    std::vector<std::byte> bytes;
    const rs::CheckpointMeta meta =
        Take(Reading(*handle_, [&](rs::Store& store) { return store.Load(name, bytes); }));
    const std::span<std::byte> target = buffer.writable_bytes();
    if (bytes.size() > target.size()) {
      RaiseClass("BufferTooSmall", "buffer too small: '" + std::string(name) + "' holds " +
                                       std::to_string(bytes.size()) + " bytes, the buffer " +
                                       std::to_string(target.size()));
    }
    if (!bytes.empty()) std::memcpy(target.data(), bytes.data(), bytes.size());
    return meta;
  }

  rs::RegionReport Report(std::string_view name) {
    return Take(Reading(*handle_, [&](rs::Store& store) { return store.Report(name); }));
  }

  std::vector<rs::RegionReport> List() {
    return Reading(*handle_, [](rs::Store& store) { return store.List(); });
  }

  // members: a mapping of name to buffer, or an iterable of (name, buffer).
  py::dict CommitBatch(const py::object& members, const py::object& mode) {
    const rs::Durability durability = ParseMode(mode);
    py::object items = py::isinstance<py::dict>(members)
                           ? py::reinterpret_borrow<py::dict>(members).attr("items")()
                           : members;
    std::vector<std::string> names;
    std::vector<Buffer> buffers;
    for (py::handle item : py::iter(items)) {
      py::tuple pair;
      try {
        pair = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
        if (pair.size() != 2) throw py::cast_error();
        names.push_back(pair[0].cast<std::string>());
      } catch (const py::cast_error&) {
        throw py::type_error("a batch member is a (str name, buffer) pair");
      }
      buffers.emplace_back(pair[1], false);
    }
    std::vector<std::span<const std::byte>> pieces;
    for (const Buffer& buffer : buffers) pieces.push_back(buffer.bytes());
    std::vector<rs::BatchMember> batch;
    for (size_t i = 0; i < names.size(); ++i) {
      batch.push_back({names[i], rs::PayloadPieces(&pieces[i], 1)});
    }
    const std::vector<uint64_t> generations = Take(
        Changing(*handle_, [&](rs::Store& store) { return store.CommitBatch(batch, durability); }));
    py::dict result;
    for (size_t i = 0; i < names.size(); ++i) result[py::str(names[i])] = generations[i];
    return result;
  }

  py::dict LoadSet(const std::vector<std::string>& names, bool with_meta) {
    std::vector<std::string_view> views(names.begin(), names.end());
    std::vector<std::vector<std::byte>> copies;
    const std::vector<rs::CheckpointMeta> metas =
        Take(Reading(*handle_, [&](rs::Store& store) { return store.LoadSet(views, copies); }));
    py::dict result;
    for (size_t i = 0; i < names.size(); ++i) {
      if (with_meta) {
        result[py::str(names[i])] = py::make_tuple(BytesOf(copies[i]), metas[i]);
      } else {
        result[py::str(names[i])] = BytesOf(copies[i]);
      }
    }
    return result;
  }

  py::tuple WaitNewer(std::string_view name, const IntArg& generation_arg,
                      std::optional<double> timeout) {
    const uint64_t generation = Unsigned(generation_arg, "generation");
    using Clock = std::chrono::steady_clock;
    if (timeout && !(*timeout >= 0)) {
      RaiseClass("InvalidArgument", "invalid argument: timeout must be >= 0 seconds or None");
    }
    const auto limit = timeout ? std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(std::min(*timeout, 1e9)))
                               : Clock::duration::max();
    const Clock::time_point start = Clock::now();
    // Slices of 200 ms, each rechecking the path (and polling for a writer
    // that does not wake) after 100 ms: the library's own recheck (1 s)
    // would never come within a slice. The store is looked up again for
    // each slice, under the lock, so a close() between slices is seen.
    constexpr auto kSlice = std::chrono::milliseconds(200);
    rs::WaitOptions options;
    options.recheck = std::chrono::milliseconds(100);
    for (;;) {
      const Clock::duration waited = Clock::now() - start;
      const Clock::duration left = waited >= limit ? Clock::duration::zero() : limit - waited;
      const auto slice = std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::min<Clock::duration>(left, kSlice));
      std::vector<std::byte> bytes;
      rs::Result<rs::CheckpointMeta> newer = Reading(*handle_, [&](rs::Store& store) {
        return store.WaitForNewer(name, generation, slice, bytes, options);
      });
      if (newer.ok()) return py::make_tuple(BytesOf(bytes), *newer);
      if (newer.status().code() != rs::StatusCode::kTimedOut || left <= kSlice) {
        Raise(newer.status());
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
  }

  rs::SyncReport Sync() {
    return Take(Changing(*handle_, [](rs::Store& store) { return store.Sync(); }));
  }

  void StartSync() {
    Check(Changing(*handle_, [](rs::Store& store) { return store.StartSync(); }));
  }

  // Changing: the first call for a region reads its headers into the handle.
  uint64_t DurableGeneration(std::string_view name) {
    return Take(
        Changing(*handle_, [&](rs::Store& store) { return store.DurableGeneration(name); }));
  }

  void WaitDurable(std::string_view name, const IntArg& generation_arg) {
    const uint64_t generation = Unsigned(generation_arg, "generation");
    Check(
        Changing(*handle_, [&](rs::Store& store) { return store.WaitDurable(name, generation); }));
  }

  // For bench/python_bench.py: `count` commits of `data` made from C++ in
  // one call, each timed alone; the same work as commit() without Python.
  std::vector<int64_t> TimeCommits(std::string_view name, const py::buffer& data,
                                   const py::object& mode, const IntArg& count_arg) {
    const int count = static_cast<int>(
        Unsigned(count_arg, "count", static_cast<uint64_t>(std::numeric_limits<int>::max())));
    using Clock = std::chrono::steady_clock;
    const rs::Durability durability = ParseMode(mode);
    Buffer buffer(data, false);
    std::vector<int64_t> nanos;
    nanos.reserve(static_cast<size_t>(std::max(count, 0)));
    Check(Changing(*handle_, [&](rs::Store& store) {
      for (int i = 0; i < count; ++i) {
        const Clock::time_point start = Clock::now();
        auto committed = store.Commit(name, buffer.bytes(), durability);
        nanos.push_back((Clock::now() - start).count());
        if (!committed.ok()) return committed.status();
      }
      return rs::Status();
    }));
    return nanos;
  }

  py::dict Stats() {
    const rs::StoreStats stats = Reading(*handle_, [](rs::Store& store) { return store.Stats(); });
    py::dict by_mode;
    for (rs::Durability mode : {rs::Durability::kNone, rs::Durability::kAsync,
                                rs::Durability::kSync, rs::Durability::kPwriteFdatasync}) {
      const rs::ModeStats m = stats.of(mode);
      py::dict entry;
      entry["writes"] = m.writes;
      entry["bytes_written"] = m.bytes_written;
      entry["flushes"] = m.flushes;
      entry["flush_nanos"] = m.flush_nanos;
      entry["commits"] = m.commits;
      entry["bytes_committed"] = m.bytes_committed;
      entry["batches"] = m.batches;
      by_mode[py::str(std::string(rs::DurabilityName(mode)))] = entry;
    }
    py::dict result;
    result["by_mode"] = by_mode;
    result["failed_flushes"] = stats.failed_flushes;
    result["failed_writes"] = stats.failed_writes;
    result["batch_log_barriers"] = stats.batch_log_barriers;
    result["journal_checkpoints"] = stats.journal_checkpoints;
    result["background_syncs"] = stats.background_syncs;
    result["waits_for_background_sync"] = stats.waits_for_background_sync;
    result["waits_for_group_commit"] = stats.waits_for_group_commit;
    result["poisoned"] = stats.poisoned;
    return result;
  }

 private:
  std::shared_ptr<Handle> handle_;
};

void Create(const std::filesystem::path& path, const IntArg& size_arg,
            const py::object& checkpoints, const IntArg& protocol, bool batch_log,
            const IntArg& journal_size, bool replace, const IntArg& slots_arg) {
  const uint64_t size = Unsigned(size_arg, "size");
  const auto slots =
      static_cast<uint32_t>(Unsigned(slots_arg, "slots", std::numeric_limits<uint32_t>::max()));
  rs::CreateOptions options;
  options.protocol =
      static_cast<uint32_t>(Unsigned(protocol, "protocol", std::numeric_limits<uint32_t>::max()));
  options.batch_log = batch_log;
  options.journal_size = Unsigned(journal_size, "journal_size");
  options.replace_existing = replace;
  if (!checkpoints.is_none()) {
    py::object items = py::isinstance<py::dict>(checkpoints)
                           ? py::reinterpret_borrow<py::dict>(checkpoints).attr("items")()
                           : py::reinterpret_borrow<py::object>(checkpoints);
    for (py::handle item : py::iter(items)) {
      py::tuple entry;
      rs::CheckpointSpec spec;
      std::string layout = "auto";
      py::object capacity;
      try {
        entry = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
        if (entry.size() != 2 && entry.size() != 3) throw py::cast_error();
        spec.name = entry[0].cast<std::string>();
        capacity = entry[1];
        if (entry.size() == 3) layout = entry[2].cast<std::string>();
      } catch (const py::cast_error&) {
        throw py::type_error(
            "a checkpoint is (str name, int capacity >= 0) or (name, capacity, "
            "'auto'|'compact'|'aligned')");
      }
      spec.capacity = Unsigned(IntArg{capacity}, "the capacity of checkpoint '" + spec.name + "'");
      if (layout == "compact") {
        spec.layout = rs::SlotLayout::kCompact;
      } else if (layout == "aligned") {
        spec.layout = rs::SlotLayout::kAligned;
      } else if (layout != "auto") {
        RaiseClass("InvalidArgument", "invalid argument: checkpoint '" + spec.name +
                                          "' has layout '" + layout +
                                          "', none of 'auto', 'compact' and 'aligned'");
      }
      spec.slots = slots;
      options.checkpoints.push_back(std::move(spec));
    }
  }
  const std::string file = path.string();
  rs::Status status;
  {
    py::gil_scoped_release nogil;
    status = rs::Store::Create(file, size, options);
  }
  Check(status);
}

std::unique_ptr<StoreObject> Open(const std::filesystem::path& path, std::string_view mode,
                                  bool follow_symlinks, bool wake_waiters,
                                  bool allow_shared_extents, double sync_interval) {
  rs::OpenMode open_mode = rs::OpenMode::kReadOnly;
  if (mode == "rw") {
    open_mode = rs::OpenMode::kReadWrite;
  } else if (mode != "r") {
    RaiseClass("InvalidArgument",
               "invalid argument: mode '" + std::string(mode) + "' is neither 'r' nor 'rw'");
  }
  rs::OpenOptions options;
  options.symlinks = follow_symlinks ? rs::SymlinkPolicy::kFollow : rs::SymlinkPolicy::kRefuse;
  options.wake_waiters = wake_waiters;
  options.allow_shared_extents = allow_shared_extents;
  if (!(sync_interval >= 0)) {
    RaiseClass("InvalidArgument", "invalid argument: sync_interval must be >= 0 seconds");
  }
  // Whole milliseconds, rounded up so a positive interval never turns the
  // flusher off; capped as wait_newer's timeout is.
  options.sync_interval = std::chrono::milliseconds(
      static_cast<int64_t>(std::ceil(std::min(sync_interval, 1e9) * 1000.0)));
  const std::string file = path.string();
  std::optional<rs::Result<rs::Store>> opened;
  {
    py::gil_scoped_release nogil;
    opened.emplace(rs::Store::Open(file, open_mode, options));
  }
  return std::make_unique<StoreObject>(Take(std::move(*opened)));
}

std::string MetaRepr(const rs::CheckpointMeta& meta) {
  std::string text = "Meta(generation=" + std::to_string(meta.generation) +
                     ", length=" + std::to_string(meta.length) +
                     ", commit_unix_ns=" + std::to_string(meta.commit_unix_ns);
  if (meta.skipped_torn_generation != 0) {
    text += ", skipped_torn_generation=" + std::to_string(meta.skipped_torn_generation);
  }
  if (meta.skipped_incomplete_batch != 0) {
    text += ", skipped_incomplete_batch=" + std::to_string(meta.skipped_incomplete_batch);
  }
  return text + ")";
}

py::dict MadeDurable(const rs::SyncReport& report) {
  py::dict made_durable;
  for (const rs::SyncedCommit& commit : report.made_durable) {
    made_durable[py::str(commit.region)] = commit.generation;
  }
  return made_durable;
}

std::string SyncReportRepr(const rs::SyncReport& report) {
  std::string text = "SyncReport(made_durable={";
  for (size_t i = 0; i < report.made_durable.size(); ++i) {
    if (i != 0) text += ", ";
    text += "'" + report.made_durable[i].region +
            "': " + std::to_string(report.made_durable[i].generation);
  }
  return text + "}, barrier_nanos=" + std::to_string(report.barrier_nanos) + ")";
}

std::string RegionRepr(const rs::RegionReport& report) {
  return "RegionInfo(name='" + report.name + "', capacity=" + std::to_string(report.capacity) +
         ", has_commit=" + (report.has_commit ? "True" : "False") +
         ", generation=" + std::to_string(report.generation) +
         ", length=" + std::to_string(report.length) + ")";
}

}  // namespace

PYBIND11_MODULE(_regionstore, m) {
  m.doc() =
      "The compiled part of regionstore; import regionstore instead, which re-exports it with\n"
      "the exception classes and Store.batch().";

  py::enum_<rs::Durability>(m, "Durability",
                            "How far a write or commit has reached when the call returns.\n\n"
                            "NONE: kill -9 loses nothing, power loss may lose it.\n"
                            "ASYNC: as NONE plus msync(MS_ASYNC), which starts no I/O on Linux.\n"
                            "SYNC, PWRITE_FDATASYNC: nothing is lost, kill -9 or power loss, if\n"
                            "the device honours cache flushes.\n"
                            "Wherever a durability is taken, its name as a str works too:\n"
                            "'none', 'async', 'sync', 'pwrite-fdatasync'.")
      .value("NONE", rs::Durability::kNone)
      .value("ASYNC", rs::Durability::kAsync)
      .value("SYNC", rs::Durability::kSync)
      .value("PWRITE_FDATASYNC", rs::Durability::kPwriteFdatasync);

  py::class_<rs::CheckpointMeta>(m, "Meta",
                                 "What a load returned: the commit's generation, "
                                 "length and time, and what it skipped.")
      .def_readonly("generation", &rs::CheckpointMeta::generation,
                    "The commit's generation: 1 for a region's first commit, +1 for each next.")
      .def_readonly("length", &rs::CheckpointMeta::length, "The payload's length in bytes.")
      .def_readonly("commit_unix_ns", &rs::CheckpointMeta::commit_unix_ns,
                    "When the commit was made (the writer's clock), in ns since the epoch.")
      .def_readonly("skipped_torn_generation", &rs::CheckpointMeta::skipped_torn_generation,
                    "Non-zero: a newer commit of this generation is torn (a power loss "
                    "interrupted it, or it was damaged), so the older one was returned.")
      .def_readonly("skipped_incomplete_batch", &rs::CheckpointMeta::skipped_incomplete_batch,
                    "Non-zero: a newer commit belongs to this batch, which has not completed.")
      .def("__repr__", &MetaRepr);

  py::class_<rs::RegionReport>(m, "RegionInfo",
                               "One checkpoint region: its capacity and its "
                               "newest valid commit, if any.")
      .def_readonly("name", &rs::RegionReport::name, "The region's name.")
      .def_readonly("capacity", &rs::RegionReport::capacity,
                    "The largest payload a commit may hold, in bytes.")
      .def_readonly("has_commit", &rs::RegionReport::has_commit,
                    "True if the region holds a valid commit (what load returns).")
      .def_readonly("generation", &rs::RegionReport::generation,
                    "The newest valid commit's generation; 0 without one.")
      .def_readonly("length", &rs::RegionReport::length,
                    "The newest valid commit's length in bytes.")
      .def_readonly("commit_unix_ns", &rs::RegionReport::commit_unix_ns,
                    "When the newest valid commit was made, in ns since the epoch.")
      .def_readonly("torn", &rs::RegionReport::torn,
                    "The newest header checks out but its payload does not: a power loss "
                    "interrupted that commit, or it was damaged.")
      .def_readonly("damaged", &rs::RegionReport::damaged,
                    "No header of the region checks out, and a slot holds data: every commit "
                    "was lost.")
      .def("__repr__", &RegionRepr);

  py::class_<rs::SyncReport>(m, "SyncReport",
                             "What Store.sync() did: the commits its one fdatasync made durable.")
      .def_property_readonly(
          "made_durable", &MadeDurable,
          "A dict of region name to generation, in name order: each region's newest commit "
          "made\nwithout a barrier of its own ('none', 'async', or such a batch) that had "
          "returned when the\nfdatasync began and was not durable yet. Empty when nothing was "
          "pending.")
      .def_readonly("barrier_nanos", &rs::SyncReport::barrier_nanos,
                    "Time spent in the fdatasync, in ns.")
      .def("__repr__", &SyncReportRepr);

  py::class_<ViewExport>(m, "_ViewExport", py::buffer_protocol(),
                         "The exporter behind a view's memoryview: keeps the store's mapping "
                         "alive while the memoryview lives.")
      .def_buffer([](ViewExport& view) { return view.Info(); });

  py::class_<PendingObject>(m, "PendingCommit",
                            "A commit filled in place (Store.begin_commit): write the payload "
                            "through `payload`\n(a writable memoryview of the target slot: no "
                            "copy) or append(), then finish().\nAs a context manager it aborts "
                            "on leaving unless finished.")
      .def_property_readonly(
          "payload", [](py::object self) { return self.cast<PendingObject&>().Payload(self); },
          "A writable memoryview of the slot's payload area, max_length bytes. "
          "Release it\nbefore finish() or abort() (BufferError otherwise).")
      .def("append", &PendingObject::Append, py::arg("data"),
           "Writes a buffer after what was appended so far (pwrite); InvalidArgument past "
           "max_length.")
      .def_property_readonly("appended", &PendingObject::appended,
                             "Bytes written by append() so far.")
      .def_property_readonly("payload_views", &PendingObject::payload_views,
                             "How many payload memoryviews are alive.")
      .def_property_readonly("pending", &PendingObject::pending, "True until finish() or abort().")
      .def("finish", &PendingObject::Finish, py::arg("length") = py::none(),
           py::arg("durability") = "none",
           "Commits the payload area's first `length` bytes (default: what append() wrote) as "
           "commit()\nwould, and returns the generation.")
      .def("abort", &PendingObject::Abort, "Drops the commit: the region stays as it was.")
      .def("__enter__", [](py::object self) { return self; })
      .def(
          "__exit__",
          [](PendingObject& self, py::handle type, py::handle, py::handle) {
            // Leaving by an exception while the payload is viewed: let that
            // exception through, not a BufferError; the commit is aborted
            // when the view and this object are gone.
            if (!type.is_none() && self.payload_views() != 0) return false;
            if (self.pending()) self.Abort();
            return false;
          },
          "Aborts the commit unless it was finished (BufferError if its payload is still "
          "viewed,\nunless the block is left by an exception, which then goes through).");

  py::class_<StoreObject>(
      m, "Store",
      "An open store: one file mapped MAP_SHARED for the life of the handle.\n\n"
      "Get one from regionstore.open(path, 'r' or 'rw'); use it as a context "
      "manager,\nwhich closes it. A store opened 'rw' is the store's one "
      "writer; 'r' handles\nare readers, in this process or others. The calls "
      "that do I/O or wait release\nthe GIL; Python threads may share a handle.")
      .def("close", &StoreObject::Close,
           "Closes the handle: unmaps the file and releases the writer's lock. Raises "
           "BufferError,\nand stays open, while a view's memoryview is alive. Closing twice does "
           "nothing.")
      .def_property_readonly("closed", &StoreObject::closed, "True once close() succeeded.")
      .def_property_readonly(
          "exported_views", &StoreObject::exported_views,
          "How many views' memoryviews are alive (close() refuses while any is).")
      .def("__enter__", [](py::object self) { return self; })
      .def(
          "__exit__",
          [](StoreObject& self, py::handle type, py::handle, py::handle) {
            // Leaving by an exception while views live: let that exception
            // through; the handle closes when the last view and the Store
            // object are gone.
            if (!type.is_none() && self.exported_views() != 0) return false;
            self.Close();
            return false;
          },
          "Closes the store (BufferError if a view is still alive, unless the block is left "
          "by an\nexception, which then goes through and the store closes with its last view).")
      .def_property_readonly("path", &StoreObject::path, "The path the store was opened at.")
      .def_property_readonly("writable", &StoreObject::writable,
                             "True for the writer ('rw'), False for a reader.")
      .def_property_readonly("data_size", &StoreObject::data_size,
                             "The size of the data area in bytes (write, read, view).")
      .def_property_readonly("protocol", &StoreObject::protocol,
                             "The commit protocol of the store's format: 1 or 2.")
      .def_property_readonly("regions", &StoreObject::regions,
                             "The names of the checkpoint regions, in the store's order.")
      .def("write", &StoreObject::Write, py::arg("offset"), py::arg("data"),
           py::arg("durability") = "none",
           "Copies a buffer into the data area at `offset` with a durability. Not atomic: a "
           "crash\nduring it can leave some pages old and some new (use commit for "
           "all-or-nothing).")
      .def("read", &StoreObject::Read, py::arg("offset"), py::arg("length"),
           "Returns `length` bytes of the data area from `offset`, as bytes.")
      .def("read_into", &StoreObject::ReadInto, py::arg("offset"), py::arg("buffer"),
           "Fills a writable buffer with the data area's bytes from `offset`.")
      .def("flush", &StoreObject::Flush, py::arg("offset") = 0, py::arg("length") = py::none(),
           py::arg("durability") = "sync",
           "Makes the data area's range durable as `durability` says (default: the rest of the "
           "data\narea, 'sync'): for stores through a mutable view.")
      .def(
          "view",
          [](StoreObject& self, const IntArg& offset, const std::optional<IntArg>& length) {
            return self.View(offset, length, false);
          },
          py::arg("offset") = 0, py::arg("length") = py::none(),
          "A read-only memoryview of the data area over the mapping itself: no copy. It sees "
          "later\nwrites. The store cannot be closed while it is alive (BufferError).")
      .def(
          "mutable_view",
          [](StoreObject& self, const IntArg& offset, const std::optional<IntArg>& length) {
            return self.View(offset, length, true);
          },
          py::arg("offset") = 0, py::arg("length") = py::none(),
          "A writable memoryview of the data area over the mapping (writer only). Stores "
          "through it\nare durability 'none' until flush(); they are not atomic.")
      .def("commit", &StoreObject::Commit, py::arg("name"), py::arg("data"),
           py::arg("durability") = "none",
           "Commits a buffer (bytes, bytearray, memoryview, a contiguous NumPy array) as region "
           "`name`'s\nnext payload, without copying it first, and returns its generation. "
           "All-or-nothing in every\nmode: after a crash a load returns this payload whole or "
           "the previous one whole.")
      .def("begin_commit", &StoreObject::BeginCommit, py::arg("name"), py::arg("max_length"),
           "Starts a commit of region `name` filled in place: returns a PendingCommit whose "
           "payload\nis a writable memoryview of the target slot (up to max_length bytes). "
           "Writer only.")
      .def("load", &StoreObject::Load, py::arg("name"),
           "Returns region `name`'s newest valid commit as bytes (NotFound if it has none).")
      .def("load_with_meta", &StoreObject::LoadWithMeta, py::arg("name"),
           "As load, returning (bytes, Meta).")
      .def("load_into", &StoreObject::LoadInto, py::arg("name"), py::arg("buffer"),
           "Copies region `name`'s newest valid commit into a writable buffer and returns its "
           "Meta\n(meta.length bytes were written). BufferTooSmall if it does not fit; nothing "
           "is written then.")
      .def("report", &StoreObject::Report, py::arg("name"),
           "A RegionInfo of region `name` (NotFound for an unknown name).")
      .def("list", &StoreObject::List, "A RegionInfo of every region, in the store's order.")
      .def("commit_batch", &StoreObject::CommitBatch, py::arg("members"),
           py::arg("durability") = "none",
           "Commits several regions as one: a dict of name to buffer, or an iterable of (name, "
           "buffer)\npairs. After a crash every member is new or every member is old. Returns "
           "a dict of\nname to generation.")
      .def(
          "load_set",
          [](StoreObject& self, const std::vector<std::string>& names) {
            return self.LoadSet(names, false);
          },
          py::arg("names"),
          "Loads several regions as one consistent set (every region as of one point of the "
          "commit\nhistory: never half of a batch) and returns a dict of name to bytes.")
      .def(
          "load_set_with_meta",
          [](StoreObject& self, const std::vector<std::string>& names) {
            return self.LoadSet(names, true);
          },
          py::arg("names"), "As load_set, with a (bytes, Meta) pair per name.")
      .def("wait_newer", &StoreObject::WaitNewer, py::arg("name"), py::arg("generation"),
           py::arg("timeout") = py::none(),
           "Waits for a commit of region `name` newer than `generation` and returns (bytes, "
           "Meta).\n`timeout` in seconds (None: no limit); TimedOut when it passes. The GIL is "
           "released while\nit waits, and Ctrl-C (KeyboardInterrupt) interrupts it within 0.2 s. "
           "Wait on a reader\nhandle ('r'): a commit through the same handle waits for the "
           "current 0.2 s slice.")
      .def("sync", &StoreObject::Sync,
           "Makes every commit and batch that returned before it, and every raw write, durable "
           "with\none fdatasync of the file, and returns a SyncReport of the commits it made "
           "durable. Commit\nwith 'none' at every step and sync() when you choose. Writer only "
           "(InvalidArgument on a\nreader). IOError if the fdatasync fails: the handle is then "
           "poisoned (Poisoned from then on).")
      .def("start_sync", &StoreObject::StartSync,
           "Starts sync()'s fdatasync on a library thread and returns at once; it covers what "
           "sync()\nwould. The handle completes it at its next call that finds it done, or that "
           "must wait\nfor it (another sync or start_sync, a commit whose region has no free "
           "slot, wait_durable,\nclose). durable_generation counts what it covers once it is "
           "completed. A failed\nbackground fdatasync raises IOError from the call that "
           "completes it and poisons the handle.\nWriter only (InvalidArgument on a reader).")
      .def("durable_generation", &StoreObject::DurableGeneration, py::arg("name"),
           "The generation of region `name`'s newest commit known durable through this handle "
           "(made\nin a durable mode, covered by sync(), or found when the handle opened); 0 if "
           "none. On a\nreader of a protocol 2 store, in any process: what the writer published, "
           "never ahead of\nwhat a power cut keeps (0: nothing known yet).")
      .def("wait_durable", &StoreObject::WaitDurable, py::arg("name"), py::arg("generation"),
           "Returns once commit `generation` of region `name` (or a newer one) is durable: at "
           "once if\nit is, else after running sync(). InvalidArgument for a generation never "
           "committed\n(or on a reader), NotFound for an unknown region.")
      .def("_time_commits", &StoreObject::TimeCommits, py::arg("name"), py::arg("data"),
           py::arg("durability"), py::arg("count"),
           "For benchmarks: makes `count` commits from C++ in one call and returns each one's "
           "time in ns.")
      .def("stats", &StoreObject::Stats,
           "The handle's counters since it was opened: per durability mode (writes, bytes, "
           "flushes,\ncommits, batches) and failures. Nothing of it is in the file.")
      .def("__repr__", [](StoreObject& self) {
        if (self.closed()) return std::string("<regionstore.Store closed>");
        return "<regionstore.Store '" + self.path() + "' " + (self.writable() ? "rw" : "r") + ">";
      });

  m.def("create", &Create, py::arg("path"), py::arg("size"), py::arg("checkpoints") = py::none(),
        py::kw_only(), py::arg("protocol") = rs::CreateOptions{}.protocol,
        py::arg("batch_log") = false, py::arg("journal_size") = 0, py::arg("replace") = false,
        py::arg("slots") = 0,
        "Creates a store of `size` data bytes at `path`. `checkpoints`: a dict of region name "
        "to\ncapacity, or an iterable of (name, capacity) or (name, capacity, layout) with layout "
        "one of\n'auto', 'compact', 'aligned'. protocol 2 (default) or 1; batch_log reserves "
        "protocol 1's batch\nlog; journal_size sizes protocol 2's batch journal (0: 4 MiB). "
        "slots: slots of every region,\n3 to 64 (0: 3); a fourth lets a second commit to a "
        "region go on while\nstart_sync()'s fdatasync runs. AlreadyExists unless replace=True.");
  m.def("open", &Open, py::arg("path"), py::arg("mode") = "r", py::kw_only(),
        py::arg("follow_symlinks") = false, py::arg("wake_waiters") = true,
        py::arg("allow_shared_extents") = false, py::arg("sync_interval") = 0.0,
        "Opens the store at `path`: mode 'r' (a reader) or 'rw' (the store's one writer: Busy "
        "if\nanother holds it). Returns a Store; use it as a context manager. sync_interval "
        "(seconds,\n0: off), writer only: a commit or batch that returns starts a background "
        "barrier\n(start_sync) when none is in flight, a commit is not durable yet, and this "
        "long has\npassed since the last whole-file barrier began.");
  m.def(
      "_raise_status",
      [](int code, const std::string& message) {
        if (code <= 0 || code > static_cast<int>(rs::StatusCode::kStoreReplaced)) {
          throw py::value_error("not a failing status code: " + std::to_string(code));
        }
        Raise(rs::Status::Error(static_cast<rs::StatusCode>(code), "test", "", message));
      },
      py::arg("code"), py::arg("message"),
      "For tests: raises the exception a failure with this status code becomes.");
  m.def("version", &rs::VersionString, "The library's version, as 'MAJOR.MINOR.PATCH'.");
}
