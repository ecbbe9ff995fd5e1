"""Shared fixtures. The suite tests the *installed* package: run it with the
interpreter of the virtual environment it was installed into, from outside
the source tree (scripts/test-python.sh), so a file the install forgot makes
it fail rather than be found in python/ of the repository."""

import os
import stat
from pathlib import Path

import pytest

import regionstore

SOURCE_PACKAGE = Path(__file__).resolve().parents[1] / "regionstore"


@pytest.fixture
def store_path(tmp_path):
    """A fresh store with three checkpoint regions: 'state' (1 MiB), 'a', 'b' (64 KiB)."""
    path = tmp_path / "store.rs"
    regionstore.create(path, 1 << 20, {"state": 1 << 20, "a": 64 << 10, "b": 64 << 10})
    return path


def flip_byte(path, pattern):
    """Flips the first byte of the one occurrence of `pattern` in the file."""
    data = Path(path).read_bytes()
    at = data.find(pattern)
    assert at >= 0 and data.find(pattern, at + 1) < 0, "pattern must occur exactly once"
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(bytes([data[at] ^ 0xFF]))


def is_root():
    return os.geteuid() == 0


def make_private(path):
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
