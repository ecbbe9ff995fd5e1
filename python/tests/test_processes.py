"""Other processes and other threads: consistent sets beside a batch loop, a
waiter woken by a commit, threads that run while one waits or commits, and
threads that commit through one handle at once."""

import multiprocessing
import os
import signal
import sys
import threading
import time

import regionstore
import workers

SPAWN = multiprocessing.get_context("spawn")


def test_a_reader_in_another_process_never_sees_a_mixed_set(store_path):
    rounds = 400
    sizes = {"state": 200_000, "a": 60_000, "b": 3_000}
    done, results = SPAWN.Event(), SPAWN.Queue()
    reader = SPAWN.Process(target=workers.set_reader,
                           args=(str(store_path), list(sizes), done, results))
    writer = SPAWN.Process(target=workers.batch_writer, args=(str(store_path), rounds, sizes, done))
    reader.start()
    writer.start()
    writer.join(300)
    distinct, newest, mixed = results.get(timeout=300)
    reader.join(60)
    assert (writer.exitcode, reader.exitcode) == (0, 0)
    assert mixed == []
    assert newest == rounds  # its last look came after the last batch
    assert distinct >= 1


def test_a_waiter_in_another_process_is_woken_by_a_commit(store_path):
    ready, results = SPAWN.Event(), SPAWN.Queue()
    with regionstore.open(store_path, "rw") as store:
        store.commit("a", b"first", "sync")
        child = SPAWN.Process(target=workers.waiter,
                              args=(str(store_path), "a", 1, ready, results))
        child.start()
        assert ready.wait(60)
        store.commit("a", b"second", "none")
        assert results.get(timeout=60) == (b"second", 2)
    child.join(60)
    assert child.exitcode == 0


def test_another_thread_runs_while_one_thread_waits(store_path):
    # The waiter has no timeout: only a commit from this thread ends its
    # wait, and this thread can make it only if the waiter let go of the GIL.
    with regionstore.open(store_path, "rw") as writer, regionstore.open(store_path) as reader:
        got = []
        thread = threading.Thread(target=lambda: got.append(reader.wait_newer("a", 0)))
        thread.start()
        writer.commit("a", b"from the other thread", "sync")
        thread.join(60)
        assert not thread.is_alive()
        assert got[0][0] == b"from the other thread"


def test_another_thread_runs_while_one_thread_makes_durable_commits(store_path):
    # With a switch interval of 100 s the interpreter never takes the GIL
    # from a thread: the counting thread runs only when the committing one
    # releases it, which it must do inside each durable commit.
    counted = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counted[0] += 1
            time.sleep(0)

    old = sys.getswitchinterval()
    with regionstore.open(store_path, "rw") as store:
        counter = threading.Thread(target=count)
        sys.setswitchinterval(100)
        try:
            counter.start()
            before = counted[0]
            for i in range(50):
                store.commit("a", i.to_bytes(8, "little") * 512, "pwrite-fdatasync")
            during = counted[0] - before
        finally:
            stop.set()
            sys.setswitchinterval(old)
            counter.join(60)
    assert during > 0


def test_ctrl_c_interrupts_a_wait(store_path):
    ready, results = SPAWN.Event(), SPAWN.Queue()
    child = SPAWN.Process(target=workers.interrupted_waiter, args=(str(store_path), ready, results))
    child.start()
    assert ready.wait(60)
    os.kill(child.pid, signal.SIGINT)
    assert results.get(timeout=60) == "KeyboardInterrupt"
    child.join(60)
    assert child.exitcode == 0


def test_threads_commit_durably_through_one_handle_without_a_lock_of_their_own(tmp_path):
    threads, rounds = 8, 20
    path = tmp_path / "many.rs"
    regionstore.create(path, 0, {f"t{t}": 4096 for t in range(threads)})

    def payload(t, i):
        return bytes([t]) * 8 + i.to_bytes(8, "little") * 511

    errors = []
    with regionstore.open(path, "rw") as store:
        def commit(t):
            try:
                for i in range(1, rounds + 1):
                    generation = store.commit(f"t{t}", payload(t, i), "pwrite-fdatasync")
                    assert generation == i
            except Exception as error:  # reported below, with the thread
                errors.append((t, error))

        workers_ = [threading.Thread(target=commit, args=(t,)) for t in range(threads)]
        for w in workers_:
            w.start()
        for w in workers_:
            w.join(300)
        assert errors == []
        stats = store.stats()
        assert stats["by_mode"]["pwrite-fdatasync"]["commits"] == threads * rounds
        # Barriers shared or not, never more than one per commit.
        assert stats["by_mode"]["pwrite-fdatasync"]["flushes"] <= threads * rounds
        assert not stats["poisoned"]
        for t in range(threads):
            data, meta = store.load_with_meta(f"t{t}")
            assert (bytes(data), meta.generation) == (payload(t, rounds), rounds)
