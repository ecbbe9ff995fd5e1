"""Functions the multiprocessing tests run in child processes (spawned, so
each child imports the installed regionstore afresh)."""

import os
import signal

import regionstore


def batch_writer(path, rounds, sizes, done):
    """Commits `rounds` batches; batch k gives every region k as its first 8
    bytes (little-endian), padded to that region's size for the round."""
    with regionstore.open(path, "rw") as store:
        for k in range(1, rounds + 1):
            members = {}
            for name, size in sizes.items():
                length = 8 + (k * 977) % size
                members[name] = k.to_bytes(8, "little") + bytes([k % 251]) * (length - 8)
            store.commit_batch(members, "none" if k % 4 else "pwrite-fdatasync")
    done.set()


def set_reader(path, names, done, results):
    """Loads the set until the writer is done (and once more after); reports
    the rounds it saw and every mixed set it found."""
    seen, mixed = set(), []
    with regionstore.open(path, "r") as store:
        finished = False
        while not finished:
            finished = done.is_set()
            try:
                got = store.load_set(names)
            except regionstore.NotFound:
                continue  # before the first batch
            except regionstore.Busy:
                continue  # the writer kept moving: the library says so, never mixes
            rounds = {int.from_bytes(data[:8], "little") for data in got.values()}
            if len(rounds) != 1:
                mixed.append(sorted(rounds))
                continue
            k = rounds.pop()
            for data in got.values():
                if any(byte != k % 251 for byte in data[8:]):
                    mixed.append(("payload", k))
            seen.add(k)
    results.put((len(seen), max(seen) if seen else 0, mixed[:10]))


def waiter(path, name, generation, ready, results):
    """Waits for a commit of `name` newer than `generation`; reports it."""
    with regionstore.open(path, "r") as store:
        ready.set()
        try:
            data, meta = store.wait_newer(name, generation, timeout=60)
            results.put((data, meta.generation))
        except regionstore.Error as error:
            results.put((type(error).__name__, str(error)))


def open_as_nobody(path, results):
    """Drops to uid/gid 65534, then opens the store: PermissionDenied expected."""
    os.setgid(65534)
    os.setuid(65534)
    try:
        regionstore.open(path, "rw")
        results.put(("opened", ""))
    except regionstore.Error as error:
        results.put((type(error).__name__, isinstance(error, PermissionError)))


def interrupted_waiter(path, ready, results):
    """Waits without a timeout for a commit that never comes; reports how
    the wait ended (the parent sends SIGINT)."""
    # Python raises KeyboardInterrupt only if SIGINT was at its default when
    # it started; a shell starts background jobs with SIGINT ignored, and the
    # test suite may run under one.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with regionstore.open(path, "r") as store:
        try:
            ready.set()
            store.wait_newer("a", 0)
            results.put("returned")
        except KeyboardInterrupt:
            results.put("KeyboardInterrupt")
        except regionstore.Error as error:
            results.put(type(error).__name__)
