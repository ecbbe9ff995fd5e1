"""close() from one thread while other threads run calls on the same handle:
it returns within CLOSE_BOUND, and every running call ends with ValueError
within the same bound. Each case is tried TRIES times: the hang this guards
against (waiters' overlapping shared-lock slices keeping close() out) showed
in 4 tries of 5."""

import threading
import time

import pytest

import regionstore

# docs/PYTHON.md: a wait holds the handle's lock for slices of 0.2 s, so
# close() waits at most for the end of the running slices.
CLOSE_BOUND = 0.5
TRIES = 20


class Caller(threading.Thread):
    """Runs `call` in a loop (once per iteration) until it raises; keeps what
    it raised and when. `started` is set once the loop is about to make its
    first call (or, with `after_first`, once the first call returned)."""

    def __init__(self, call, after_first=False):
        super().__init__(daemon=True)
        self.call = call
        self.after_first = after_first
        self.started = threading.Event()
        self.error = None
        self.ended = None

    def run(self):
        try:
            if not self.after_first:
                self.started.set()
            while True:
                self.call()
                self.started.set()
        except BaseException as error:  # noqa: BLE001: the test inspects it
            self.ended = time.monotonic()
            self.error = error
            self.started.set()


def close_beside(store, callers):
    """Starts the callers, waits until each is in its loop, closes the store
    and returns (seconds close() took, the moment it began)."""
    for caller in callers:
        caller.start()
    for caller in callers:
        assert caller.started.wait(60), "a caller never started"
    begun = time.monotonic()
    store.close()
    took = time.monotonic() - begun
    for caller in callers:
        caller.join(60)
        assert not caller.is_alive(), "a call was still running 60 s after close()"
    return took, begun


def check_ended_by_close(took, begun, callers):
    assert took <= CLOSE_BOUND, f"close() took {took:.3f} s"
    for caller in callers:
        assert isinstance(caller.error, ValueError), repr(caller.error)
        assert "closed" in str(caller.error), str(caller.error)
        late = caller.ended - begun
        assert late <= CLOSE_BOUND, f"a call ended {late:.3f} s after close() began"


@pytest.mark.parametrize("waiters", [1, 2, 8])
def test_close_ends_every_waiting_thread_and_returns_within_the_bound(store_path, waiters):
    for _ in range(TRIES):
        store = regionstore.open(store_path)
        callers = [Caller(lambda: store.wait_newer("a", 0, timeout=30)) for _ in range(waiters)]
        took, begun = close_beside(store, callers)
        check_ended_by_close(took, begun, callers)
        assert store.closed


def test_close_ends_a_commit_loop_and_a_load_set_loop_within_the_bound(store_path):
    with regionstore.open(store_path, "rw") as store:
        store.commit_batch({"a": b"a0", "b": b"b0"}, "none")
    payload = bytes(range(256)) * 256  # 64 KiB: region a's capacity
    for _ in range(TRIES):
        store = regionstore.open(store_path, "rw")
        callers = [Caller(lambda: store.commit("a", payload, "sync"), after_first=True),
                   Caller(lambda: store.load_set(["a", "b"]), after_first=True)]
        took, begun = close_beside(store, callers)
        check_ended_by_close(took, begun, callers)
    with regionstore.open(store_path) as store:
        assert store.load("a") == payload
