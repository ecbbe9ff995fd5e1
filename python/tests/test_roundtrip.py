"""Round trips through every call, in every durability mode."""

import numpy as np
import pytest

import regionstore
from regionstore import Durability

MODES = ["none", "async", "sync", "pwrite-fdatasync", Durability.NONE, Durability.ASYNC,
         Durability.SYNC, Durability.PWRITE_FDATASYNC, "pwrite_fdatasync"]


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_write_read_commit_load_in_every_mode(store_path, mode):
    payload = np.random.default_rng(7).integers(0, 256, 100_000, dtype=np.uint8)
    with regionstore.open(store_path, "rw") as store:
        store.write(4096, payload, mode)
        assert store.read(4096, payload.size) == payload.tobytes()
        out = bytearray(payload.size)
        store.read_into(4096, out)
        assert out == payload.tobytes()
        store.flush(0, 8192, mode)
        first = store.commit("state", payload, mode)
        second = store.commit("state", memoryview(payload.tobytes())[:5000], mode)
        assert (first, second) == (1, 2)
        assert store.load("state") == payload.tobytes()[:5000]
    with regionstore.open(store_path) as reader:  # another handle sees it
        data, meta = reader.load_with_meta("state")
        assert data == payload.tobytes()[:5000]
        assert (meta.generation, meta.length) == (2, 5000)
        assert meta.commit_unix_ns > 0 and meta.skipped_torn_generation == 0


def test_a_numpy_array_commits_and_loads_back_into_an_array(store_path):
    weights = np.linspace(0, 1, 1 << 15, dtype=np.float64)
    with regionstore.open(store_path, "rw") as store:
        store.commit("state", weights, "sync")
        back = np.empty_like(weights)
        meta = store.load_into("state", back)
        assert meta.length == weights.nbytes
        np.testing.assert_array_equal(back, weights)
        np.testing.assert_array_equal(np.frombuffer(store.load("state"), dtype=np.float64), weights)


def test_a_non_contiguous_array_is_refused_not_copied(store_path):
    strided = np.arange(1000, dtype=np.int64)[::2]
    with regionstore.open(store_path, "rw") as store:
        with pytest.raises((BufferError, ValueError)):
            store.commit("a", strided)
        with pytest.raises(regionstore.NotFound):
            store.load("a")  # nothing was committed


def test_a_batch_in_one_call_and_as_a_context_manager(store_path):
    with regionstore.open(store_path, "rw") as store:
        generations = store.commit_batch({"a": b"a1", "b": bytearray(b"b1")}, "sync")
        assert generations == {"a": 1, "b": 1}
        assert store.commit_batch([("a", b"a2"), ("state", b"s1")]) == {"a": 2, "state": 1}
        with store.batch("pwrite-fdatasync") as batch:
            batch["a"] = b"a3"
            batch.put("b", np.frombuffer(b"b2", dtype=np.uint8))
        assert batch.generations == {"a": 3, "b": 2}
        with pytest.raises(RuntimeError):
            with store.batch("sync") as batch:
                batch["a"] = b"never"
                raise RuntimeError("the block failed")
        assert store.load_set(["a", "b", "state"]) == {"a": b"a3", "b": b"b2", "state": b"s1"}
        got = store.load_set_with_meta(["a", "b"])
        assert (got["a"][0], got["a"][1].generation) == (b"a3", 3)
        assert (got["b"][0], got["b"][1].generation) == (b"b2", 2)


def test_a_streaming_commit_written_through_its_payload_view_is_what_load_returns(store_path):
    with regionstore.open(store_path, "rw") as store:
        pending = store.begin_commit("state", 4096)
        payload = pending.payload
        assert len(payload) == 4096 and not payload.readonly
        array = np.frombuffer(payload, dtype=np.uint32)
        array[:] = np.arange(1024, dtype=np.uint32)
        with pytest.raises(BufferError):
            pending.finish(4096, "sync")  # the view is still alive
        del array
        payload.release()
        assert pending.finish(4096, "sync") == 1
        assert np.array_equal(np.frombuffer(store.load("state"), dtype=np.uint32), np.arange(1024))
        with store.begin_commit("state", 100) as appended:
            appended.append(b"x" * 60)
            appended.append(b"y" * 40)
            assert appended.appended == 100
            assert appended.finish() == 2
        with store.begin_commit("state", 100) as dropped:
            dropped.append(b"z" * 10)
        assert not dropped.pending
        assert store.load("state") == b"x" * 60 + b"y" * 40


def test_writes_through_a_mutable_view_are_read_back_and_seen_by_a_reader(store_path):
    with regionstore.open(store_path, "rw") as store:
        view = store.mutable_view(8192, 16)
        view[:] = b"0123456789abcdef"
        store.flush(8192, 16, "sync")
        assert store.read(8192, 16) == b"0123456789abcdef"
        with regionstore.open(store_path) as reader:
            assert bytes(reader.view(8192, 16)) == b"0123456789abcdef"
            assert reader.view(8192, 16).readonly
        view.release()


def test_report_list_regions_and_stats(store_path):
    with regionstore.open(store_path, "rw") as store:
        assert store.regions == ["state", "a", "b"]
        assert store.protocol == 2 and store.writable and store.data_size == 1 << 20
        store.commit("a", b"abc", "sync")
        info = store.report("a")
        assert (info.name, info.capacity, info.has_commit, info.generation, info.length) == (
            "a", 64 << 10, True, 1, 3)
        assert [region.name for region in store.list()] == ["state", "a", "b"]
        assert not store.report("b").has_commit
        stats = store.stats()
        assert stats["by_mode"]["sync"]["commits"] == 1
        assert stats["by_mode"]["sync"]["bytes_committed"] == 3
        assert stats["poisoned"] is False
        assert "rw" in repr(store)
    assert "closed" in repr(store)


@pytest.mark.parametrize("protocol", [1, 2])
def test_create_options(tmp_path, protocol):
    path = tmp_path / "options.rs"
    regionstore.create(str(path), 65536, [("c", 100, "compact"), ("w", 100_000, "aligned")],
                       protocol=protocol, batch_log=(protocol == 1), replace=True)
    with regionstore.open(path, "rw") as store:
        assert store.protocol == protocol
        assert store.commit_batch({"c": b"1", "w": b"2"}, "sync") == {"c": 1, "w": 1}


def test_bad_checkpoint_and_batch_items_are_type_errors(tmp_path, store_path):
    with pytest.raises(TypeError, match="capacity of checkpoint 'a' must be an int, not str"):
        regionstore.create(tmp_path / "x.rs", 4096, {"a": "ten"})
    # A negative capacity is an integer out of range (test_errors.py).
    with pytest.raises(ValueError, match="capacity of checkpoint 'a' must be >= 0"):
        regionstore.create(tmp_path / "x.rs", 4096, {"a": -1})
    with pytest.raises(TypeError, match="checkpoint"):
        regionstore.create(tmp_path / "x.rs", 4096, {1: 10})
    with regionstore.open(store_path, "rw") as store:
        with pytest.raises(TypeError, match="batch member"):
            store.commit_batch({1: b"x"})
        with pytest.raises(TypeError, match="batch member"):
            store.commit_batch([("a",)])
        with store.batch() as empty:
            pass
        assert empty.generations == {}


def test_star_import_does_not_shadow_builtins():
    namespace = {}
    exec("from regionstore import *", namespace)
    assert "open" not in namespace and "IOError" not in namespace
    assert "create" in namespace and "InvalidArgument" in namespace
