"""A commit whose bytearray another thread rewrites while the commit runs (legal
Python: the call releases the GIL while it reads the buffer). The commit holds
some mix of old and new bytes; what must hold is that the generation it
returns is the one the next load returns (never an older one, never
TornCommit), and that nothing is left damaged or torn. The C++ suite races
every commit path (tests/test_racing_source.cc); this is the same through the
bindings, in every mode, for single commits and batches."""

import threading

import pytest

import regionstore

MODES = ["none", "async", "sync", "pwrite-fdatasync"]
ROUNDS = 1000


class Mutator:
    """Rewrites bytes of `buffer` all over it until stopped."""

    def __init__(self, buffer):
        self.buffer = buffer
        self.stop = threading.Event()
        self.writes = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        size = len(self.buffer)
        at = 0
        while not self.stop.is_set():
            self.buffer[at] ^= 0xFF
            at = (at + 4093) % size
            self.writes += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def missed(store, name, generation):
    """None when load returns `generation` with nothing skipped; else what it did."""
    try:
        _, meta = store.load_with_meta(name)
    except regionstore.TornCommit as error:
        return f"{name}: generation {generation} returned, load raised {error}"
    if meta.generation != generation or meta.skipped_torn_generation != 0:
        return (f"{name}: generation {generation} returned, load gave {meta.generation} "
                f"(skipped torn {meta.skipped_torn_generation})")
    return None


def check_nothing_torn(path, names):
    with regionstore.open(path) as reader:
        for name in names:
            report = reader.report(name)
            assert report.has_commit and not report.torn and not report.damaged, name


@pytest.mark.parametrize("mode", MODES)
def test_a_commit_racing_a_thread_that_rewrites_its_bytearray_loads_as_returned(store_path, mode):
    buffer = bytearray(1 << 20)
    misses = []
    with regionstore.open(store_path, "rw") as store, Mutator(buffer) as mutator:
        for _ in range(ROUNDS):
            generation = store.commit("state", buffer, mode)
            miss = missed(store, "state", generation)
            if miss:
                misses.append(miss)
    assert mutator.writes > 0
    assert misses == [], f"{len(misses)} of {ROUNDS} rounds missed; first: {misses[:3]}"
    check_nothing_torn(store_path, ["state"])


@pytest.mark.parametrize("mode", MODES)
def test_a_batch_racing_a_thread_that_rewrites_its_bytearrays_loads_as_returned(store_path, mode):
    buffer = bytearray(128 << 10)
    view = memoryview(buffer)
    misses = []
    with regionstore.open(store_path, "rw") as store, Mutator(buffer) as mutator:
        for _ in range(ROUNDS):
            generations = store.commit_batch({"a": view[: 64 << 10], "b": view[64 << 10:]}, mode)
            round_misses = [missed(store, name, generations[name]) for name in ("a", "b")]
            round_misses = [miss for miss in round_misses if miss]
            if round_misses:
                misses.append(round_misses)
    view.release()
    assert mutator.writes > 0
    assert misses == [], f"{len(misses)} of {ROUNDS} rounds missed; first: {misses[:3]}"
    check_nothing_torn(store_path, ["a", "b"])
