"""Every error class, each raised by the situation it names where Python can
make that situation, and the status-to-class mapping for every code."""

import multiprocessing
import os

import pytest

import regionstore
from conftest import flip_byte, is_root, make_private
import workers

# Status codes (regionstore/status.h) and the class each becomes.
CLASSES = {
    1: (regionstore.InvalidArgument, ValueError),
    2: (regionstore.NotFound, LookupError),
    3: (regionstore.PermissionDenied, PermissionError),
    4: (regionstore.AlreadyExists, FileExistsError),
    5: (regionstore.Corruption, regionstore.Error),
    6: (regionstore.UnsupportedVersion, regionstore.Error),
    7: (regionstore.NoSpace, OSError),
    8: (regionstore.IOError, OSError),
    9: (regionstore.Busy, regionstore.Error),
    10: (regionstore.Poisoned, regionstore.Error),
    11: (regionstore.TornCommit, regionstore.Error),
    12: (regionstore.SharedExtents, regionstore.Error),
    13: (regionstore.TimedOut, TimeoutError),
    14: (regionstore.StoreReplaced, regionstore.Error),
}


@pytest.mark.parametrize("code", sorted(CLASSES))
def test_every_status_code_maps_to_its_class_with_the_library_message(code):
    cls, builtin = CLASSES[code]
    with pytest.raises(cls) as raised:
        regionstore._regionstore._raise_status(code, "the message")
    assert isinstance(raised.value, builtin) and isinstance(raised.value, regionstore.Error)
    assert "the message" in str(raised.value)
    assert type(raised.value).code == str(raised.value).split(":")[0]


def test_invalid_arguments(store_path):
    with regionstore.open(store_path, "rw") as store:
        with pytest.raises(regionstore.InvalidArgument, match="exceeds the capacity"):
            store.commit("a", b"x" * ((64 << 10) + 1))
        with pytest.raises(regionstore.InvalidArgument):
            store.write(store.data_size - 2, b"abc")
        with pytest.raises(regionstore.InvalidArgument, match="durability 'fast'"):
            store.commit("a", b"x", "fast")
        with pytest.raises(TypeError):
            store.commit("a", b"x", 3.5)
        with pytest.raises(TypeError):
            store.commit("a", "a str is not a buffer")
        with pytest.raises(regionstore.InvalidArgument, match="timeout"):
            store.wait_newer("a", 0, -1)
    with pytest.raises(regionstore.InvalidArgument, match="mode 'w'"):
        regionstore.open(store_path, "w")
    with pytest.raises(regionstore.InvalidArgument, match="layout 'diagonal'"):
        regionstore.create(store_path, 4096, [("x", 10, "diagonal")], replace=True)


def test_not_found(store_path, tmp_path):
    with pytest.raises(regionstore.NotFound):
        regionstore.open(tmp_path / "missing.rs")
    with regionstore.open(store_path, "rw") as store:
        with pytest.raises(regionstore.NotFound, match="'nope'"):
            store.commit("nope", b"x")
        with pytest.raises(regionstore.NotFound):
            store.load("a")  # no commit yet
        with pytest.raises(regionstore.NotFound):
            store.report("nope")


def test_already_exists_and_corruption(store_path, tmp_path):
    with pytest.raises(regionstore.AlreadyExists):
        regionstore.create(store_path, 4096)
    junk = tmp_path / "junk.rs"
    junk.write_bytes(b"\0" * 65536)
    with pytest.raises(regionstore.Corruption):
        regionstore.open(junk)


def test_a_file_too_large_for_the_filesystem_is_an_os_error(tmp_path):
    # 1 PiB: past ext4's largest file (EFBIG: IOError); elsewhere the
    # allocation fails for want of space (NoSpace). Nothing is left behind.
    with pytest.raises((regionstore.IOError, regionstore.NoSpace)) as raised:
        regionstore.create(tmp_path / "huge.rs", 1 << 50)
    assert isinstance(raised.value, OSError)
    assert list(tmp_path.iterdir()) == []


def test_busy(store_path):
    with regionstore.open(store_path, "rw"):
        with pytest.raises(regionstore.Busy):
            regionstore.open(store_path, "rw")


def test_permission_denied(store_path):
    make_private(store_path)
    if is_root():
        context = multiprocessing.get_context("spawn")
        results = context.Queue()
        child = context.Process(target=workers.open_as_nobody, args=(str(store_path), results))
        child.start()
        name, is_permission_error = results.get(timeout=60)
        child.join(60)
    else:
        os.chmod(store_path, 0)
        with pytest.raises(regionstore.Error) as raised:
            regionstore.open(store_path, "rw")
        name, is_permission_error = type(raised.value).__name__, isinstance(raised.value,
                                                                         PermissionError)
    assert (name, is_permission_error) == ("PermissionDenied", True)


def test_torn_commit(store_path):
    with regionstore.open(store_path, "rw") as store:
        store.commit("b", b"the only commit of b, unique bytes 7f3a", "sync")
    flip_byte(store_path, b"unique bytes 7f3a")
    with regionstore.open(store_path) as reader:
        with pytest.raises(regionstore.TornCommit):
            reader.load("b")
        assert reader.report("b").torn


def test_timed_out_and_buffer_too_small(store_path):
    with regionstore.open(store_path, "rw") as store:
        store.commit("a", b"12345")
        with pytest.raises(regionstore.TimedOut, match="generation 1"):
            store.wait_newer("a", 1, timeout=0.05)
        small = bytearray(4)
        with pytest.raises(regionstore.BufferTooSmall, match="holds 5 bytes"):
            store.load_into("a", small)
        assert small == bytearray(4)  # nothing written
        with pytest.raises(BufferError):
            store.load_into("a", b"12345")  # bytes are read-only


def test_store_replaced(store_path, tmp_path):
    other = tmp_path / "other.rs"
    regionstore.create(other, 4096, {"a": 10})
    with regionstore.open(store_path) as reader:
        os.replace(other, store_path)
        with pytest.raises(regionstore.StoreReplaced):
            reader.wait_newer("a", 0, timeout=30)


# Every integer argument of the API, with a call that passes `value` as it.
# A negative value is InvalidArgument (a ValueError), one above the C++ type
# OverflowError, and both messages name the argument.
INTEGER_ARGUMENTS = [
    ("offset", lambda s, v: s.read(v, 10)),
    ("length", lambda s, v: s.read(0, v)),
    ("offset", lambda s, v: s.read_into(v, bytearray(4))),
    ("offset", lambda s, v: s.write(v, b"x")),
    ("offset", lambda s, v: s.flush(v, 1)),
    ("length", lambda s, v: s.flush(0, v)),
    ("offset", lambda s, v: s.view(v, 1)),
    ("length", lambda s, v: s.view(0, v)),
    ("offset", lambda s, v: s.mutable_view(v, 1)),
    ("length", lambda s, v: s.mutable_view(0, v)),
    ("max_length", lambda s, v: s.begin_commit("a", v)),
    ("generation", lambda s, v: s.wait_newer("a", v, timeout=0)),
    ("generation", lambda s, v: s.wait_durable("a", v)),
    ("count", lambda s, v: s._time_commits("a", b"x", "none", v)),
    ("length", lambda s, v: s.begin_commit("a", 8).finish(v)),
    ("size", lambda s, v: regionstore.create(s.path + ".new", v)),
    ("protocol", lambda s, v: regionstore.create(s.path + ".new", 4096, protocol=v)),
    ("journal_size", lambda s, v: regionstore.create(s.path + ".new", 4096, journal_size=v)),
    ("capacity of checkpoint 'x'", lambda s, v: regionstore.create(s.path + ".new", 4096, {"x": v})),
]
LIMITS = {"protocol": 2**32, "count": 2**31}


@pytest.mark.parametrize("name,call", INTEGER_ARGUMENTS,
                         ids=[f"{i}-{name}" for i, (name, _) in enumerate(INTEGER_ARGUMENTS)])
def test_a_negative_or_too_large_integer_argument_is_refused_naming_it(store_path, name, call):
    with regionstore.open(store_path, "rw") as store:
        with pytest.raises(ValueError, match=f"{name} must be >= 0, not -1") as raised:
            call(store, -1)
        assert isinstance(raised.value, regionstore.InvalidArgument)
        too_large = LIMITS.get(name, 2**64)
        with pytest.raises(OverflowError, match=f"{name} must be at most {too_large - 1}, "
                                                f"not {too_large}"):
            call(store, too_large)
        with pytest.raises(TypeError, match=f"{name} must be an int, not float"):
            call(store, 1.5)


def test_the_issue_s_four_calls_raise_value_and_overflow_errors(store_path):
    with regionstore.open(store_path, "rw") as store:
        with pytest.raises(ValueError, match="offset must be >= 0"):
            store.read(-1, 10)
        with pytest.raises(ValueError, match="length must be >= 0"):
            store.view(0, -1)
        with pytest.raises(ValueError, match="max_length must be >= 0"):
            store.begin_commit("a", -5)
        with pytest.raises(OverflowError, match="max_length must be at most"):
            store.begin_commit("a", 2**64)
        # Integers that are not int (NumPy's, anything with __index__) still work.
        import numpy
        assert store.read(numpy.int64(0), numpy.uint8(3)) == b"\0\0\0"
