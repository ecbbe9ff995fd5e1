"""Durability after the fact: sync(), start_sync(), sync_interval, durable_generation(),
wait_durable()."""

import time

import pytest

import regionstore


def fdatasyncs(store):
    return store.stats()["by_mode"]["pwrite-fdatasync"]["flushes"]


def test_commits_without_a_barrier_are_not_durable_until_sync_covers_them(store_path):
    with regionstore.open(store_path, "rw") as store:
        assert store.durable_generation("state") == 0
        assert store.commit("state", b"s" * 100_000, "none") == 1
        assert store.commit("state", b"t" * 50, "async") == 2
        assert store.commit_batch({"a": b"a1", "b": b"b1"}, "none") == {"a": 1, "b": 1}
        assert [store.durable_generation(name) for name in ("state", "a", "b")] == [0, 0, 0]

        before = fdatasyncs(store)
        report = store.sync()
        assert isinstance(report, regionstore.SyncReport)
        # Each region's newest commit, in name order; generation 1 of
        # 'state' was superseded.
        assert list(report.made_durable.items()) == [("a", 1), ("b", 1), ("state", 2)]
        assert isinstance(report.barrier_nanos, int)
        assert repr(report).startswith("SyncReport(made_durable={'a': 1, 'b': 1, 'state': 2}")
        assert fdatasyncs(store) == before + 1
        assert [store.durable_generation(name) for name in ("state", "a", "b")] == [2, 1, 1]

        # Nothing pending: the barrier still runs and covers no commit.
        assert store.sync().made_durable == {}
        assert fdatasyncs(store) == before + 2

        # A durable commit needs no sync.
        assert store.commit("a", b"a2", "pwrite-fdatasync") == 2
        assert store.durable_generation("a") == 2


def test_wait_durable_syncs_for_a_commit_without_a_barrier_and_refuses_one_never_made(store_path):
    with regionstore.open(store_path, "rw") as store:
        generation = store.commit("b", b"x" * 300, "none")
        before = fdatasyncs(store)
        assert store.wait_durable("b", generation) is None
        assert fdatasyncs(store) == before + 1
        assert store.durable_generation("b") == generation
        # Already durable, or older: no barrier.
        store.wait_durable("b", generation)
        store.wait_durable("b", 0)
        assert fdatasyncs(store) == before + 1

        with pytest.raises(regionstore.InvalidArgument, match="no commit of generation 2"):
            store.wait_durable("b", generation + 1)
        with pytest.raises(regionstore.NotFound):
            store.wait_durable("missing", 1)
        with pytest.raises(regionstore.NotFound):
            store.durable_generation("missing")


def test_a_writer_s_open_reports_what_the_last_writer_left_as_durable(store_path):
    with regionstore.open(store_path, "rw") as store:
        generation = store.commit("a", b"left in the page cache", "none")
        assert store.durable_generation("a") == 0
    with regionstore.open(store_path, "rw") as store:
        assert store.durable_generation("a") == generation
        assert store.sync().made_durable == {}


def test_a_reader_cannot_sync_and_reads_what_the_writer_published(store_path):
    with regionstore.open(store_path, "rw") as store:
        store.commit("a", b"a1", "none")
    with regionstore.open(store_path) as reader:
        with pytest.raises(regionstore.InvalidArgument, match="read-only"):
            reader.sync()
        # The writer closed without a barrier: nothing was published.
        assert reader.durable_generation("a") == 0
        with pytest.raises(regionstore.InvalidArgument):
            reader.wait_durable("a", 1)


def test_the_calls_raise_value_error_on_a_closed_store(store_path):
    store = regionstore.open(store_path, "rw")
    store.close()
    for call in (store.sync, lambda: store.durable_generation("a"),
                 lambda: store.wait_durable("a", 1)):
        with pytest.raises(ValueError, match="closed"):
            call()


def background_syncs(store):
    return store.stats()["background_syncs"]


def test_start_sync_covers_a_commit_that_returned_and_wait_durable_completes_it(store_path):
    with regionstore.open(store_path, "rw") as store:
        generation = store.commit("a", b"a" * 3000, "none")
        assert store.durable_generation("a") == 0
        before = fdatasyncs(store)
        assert store.stats()["background_syncs"] == 0
        assert store.stats()["waits_for_background_sync"] == 0
        assert store.start_sync() is None
        assert background_syncs(store) == 1
        store.wait_durable("a", generation)
        assert store.durable_generation("a") == generation
        # The background barrier was the only one: wait_durable ran none.
        assert fdatasyncs(store) == before + 1
        # Two in a row: the second completes the first; sync() finds nothing pending.
        store.start_sync()
        store.start_sync()
        assert background_syncs(store) == 3
        assert store.sync().made_durable == {}


def test_a_reader_cannot_start_a_sync(store_path):
    with regionstore.open(store_path) as reader:
        with pytest.raises(regionstore.InvalidArgument, match="read-only"):
            reader.start_sync()
    store = regionstore.open(store_path, "rw")
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.start_sync()


@pytest.mark.parametrize("interval, started", [(0.001, 1), (3600, 0), (0, 0)])
def test_sync_interval_starts_a_background_barrier_after_a_commit_once_it_passed(
        store_path, interval, started):
    with regionstore.open(store_path, "rw", sync_interval=interval) as store:
        # Not synchronisation: only lets the monotonic clock pass the
        # interval, so the commit below starts a barrier (or, for the long
        # interval and 0, does not).
        time.sleep(interval + 0.005 if interval < 3600 else 0.005)
        generation = store.commit("a", b"x" * 100, "none")
        assert background_syncs(store) == started
        store.wait_durable("a", generation)
        assert store.durable_generation("a") == generation


@pytest.mark.parametrize("interval", [-1, -0.5, float("nan")])
def test_a_negative_sync_interval_is_refused(store_path, interval):
    with pytest.raises(regionstore.InvalidArgument, match="sync_interval must be >= 0"):
        regionstore.open(store_path, "rw", sync_interval=interval)


def test_create_gives_every_region_the_slots_asked_for(tmp_path):
    sizes = {}
    for slots in (0, 3, 4, 64):
        path = tmp_path / f"s{slots}.rs"
        # 300,000 bytes: 64 KiB-aligned slots of 64 KiB + 320 KiB each,
        # whatever the page size.
        regionstore.create(path, 0, {"a": 300_000, "b": 100}, protocol=1, slots=slots)
        sizes[slots] = path.stat().st_size
        with regionstore.open(path, "rw") as store:
            for step in range(slots + 2):
                store.commit("a", bytes([step]) * 1000, "none")
            store.sync()
            assert store.load("a") == bytes([slots + 1]) * 1000
    assert sizes[0] == sizes[3]
    # One more slot of "a" is 384 KiB more file; 61 more, 61 times that
    # (and "b"'s 61 more slots, on 4 KiB pages 61 x 8 KiB, rounded up to
    # the 64 KiB the file ends on).
    assert sizes[4] - sizes[3] >= 393_216
    assert sizes[4] - sizes[3] <= 393_216 + 65_536
    assert sizes[64] - sizes[3] >= 61 * 393_216
    for slots in (1, 2, 65):
        with pytest.raises(regionstore.InvalidArgument, match=f"{slots} slots; between 3 and 64"):
            regionstore.create(tmp_path / "bad.rs", 0, {"a": 100}, slots=slots)
        assert not (tmp_path / "bad.rs").exists()


def test_a_reader_sees_what_the_writer_made_durable_and_no_more(store_path):
    with regionstore.open(store_path, "rw") as writer, regionstore.open(store_path) as reader:
        generation = writer.commit("state", b"x" * 100, "none")
        assert reader.durable_generation("state") == 0
        writer.sync()
        assert reader.durable_generation("state") == generation
        later = writer.commit("state", b"y" * 100, "none")
        assert reader.durable_generation("state") == generation
        writer.start_sync()
        writer.wait_durable("state", later)
        assert reader.durable_generation("state") == later
