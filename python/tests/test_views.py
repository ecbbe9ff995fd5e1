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
