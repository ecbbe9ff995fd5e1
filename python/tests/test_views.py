"""Views are memoryviews over the mapping: the rule for closing while they live."""

import gc

import numpy as np
import pytest

import regionstore


def test_close_refuses_while_a_view_is_alive_and_works_once_it_is_released(store_path):
    store = regionstore.open(store_path, "rw")
    store.write(0, b"hello", "none")
    view = store.view(0, 5)
    assert bytes(view) == b"hello"
    with pytest.raises(BufferError):
        store.close()
    assert not store.closed and store.exported_views == 1
    assert bytes(view) == b"hello"  # still mapped
    view.release()
    assert store.exported_views == 0
    store.close()
    assert store.closed
    store.close()  # twice: nothing
    with pytest.raises(ValueError):
        store.read(0, 1)


def test_the_context_manager_exit_refuses_too(store_path):
    with pytest.raises(BufferError):
        with regionstore.open(store_path, "rw") as store:
            view = store.mutable_view(0, 4)
    assert not store.closed
    view[:] = b"abcd"  # the mapping is still there
    del view
    store.close()


def test_a_view_outliving_its_store_object_keeps_the_mapping(store_path):
    store = regionstore.open(store_path, "rw")
    store.write(100, b"still here", "none")
    view = store.view(100, 10)
    array = np.frombuffer(store.view(100, 10), dtype=np.uint8)
    del store
    gc.collect()
    assert bytes(view) == b"still here"
    assert array.tobytes() == b"still here"
    del view, array
    gc.collect()
    # The last view is gone: the handle is closed, so a new writer may open.
    with regionstore.open(store_path, "rw") as again:
        assert again.read(100, 10) == b"still here"


def test_a_read_only_view_refuses_writes(store_path):
    with regionstore.open(store_path) as reader:
        view = reader.view(0, 8)
        with pytest.raises(TypeError):
            view[0] = 1
        view.release()
        with pytest.raises(regionstore.InvalidArgument):
            reader.mutable_view(0, 8)


def test_a_payload_view_keeps_its_pending_commit_until_released(store_path):
    with regionstore.open(store_path, "rw") as store:
        store.commit("a", b"one", "sync")
        pending = store.begin_commit("a", 16)
        payload = pending.payload
        del pending  # the view holds it: still pending, not aborted
        payload[:5] = b"EVIL!"
        assert store.load("a") == b"one"
        payload.release()  # now the commit is dropped (aborted)
        assert store.commit("a", b"three", "sync") == 2
        assert store.load("a") == b"three"


def test_leaving_a_with_block_by_an_exception_lets_it_through_despite_live_views(store_path):
    with pytest.raises(RuntimeError, match="the user's"):
        with regionstore.open(store_path, "rw") as store:
            view = store.view(0, 4)
            raise RuntimeError("the user's")
    assert not store.closed
    del view  # the last view: the store can close now
    store.close()
    with pytest.raises(RuntimeError, match="the user's"):
        with regionstore.open(store_path, "rw") as store:
            with store.begin_commit("a", 8) as pending:
                payload = pending.payload
                raise RuntimeError("the user's")
    del payload


def test_closing_from_another_thread_ends_a_wait_with_an_error_not_a_crash(store_path):
    import threading

    reader = regionstore.open(store_path)
    outcome = []

    def wait():
        try:
            reader.wait_newer("a", 0, timeout=30)
            outcome.append("returned")
        except ValueError as error:
            outcome.append(str(error))

    thread = threading.Thread(target=wait)
    thread.start()
    reader.close()
    thread.join(60)
    assert outcome == ["I/O operation on a closed store"]
    with pytest.raises(ValueError, match="closed"):
        reader.view(0, 1)
    with pytest.raises(ValueError, match="closed"):
        reader.path
