"""regionstore: an mmap-backed persistent region store, from Python.

A store is one fixed-size file, mapped MAP_SHARED for the life of a handle:
a data area written in place with an explicit durability, and checkpoint
regions whose commits are all-or-nothing across crashes. One writer per
store; any number of readers, in any process, which can wait for the next
commit.

    import numpy as np
    import regionstore

    regionstore.create("state.rs", 1 << 20, {"weights": 8 << 20}, replace=True)
    with regionstore.open("state.rs", "rw") as store:
        generation = store.commit("weights", np.zeros(1 << 20), "sync")
        weights = np.frombuffer(store.load("weights"))

Durability (a str or regionstore.Durability), and what a crash can lose of a
call that returned:
  'none'              kill -9: nothing; power loss: the call's bytes
  'async'             as 'none' (msync(MS_ASYNC) starts no I/O on Linux)
  'sync'              nothing, if the device honours cache flushes
  'pwrite-fdatasync'  nothing, if the device honours cache flushes
Commits are all-or-nothing in every mode; write() and stores through a
mutable view are not.

A loop may commit with 'none' at every step and make its commits durable
when it chooses: store.sync() (one fdatasync; returns a SyncReport),
store.durable_generation(name), store.wait_durable(name, generation).
store.start_sync() runs that fdatasync on a library thread instead, and
regionstore.open(path, 'rw', sync_interval=seconds) starts one after a
commit once that long has passed since the last.

Errors are regionstore.Error subclasses (see regionstore._errors).
"""

from ._errors import (  # noqa: F401  (re-exported)
    AlreadyExists, Busy, BufferTooSmall, Corruption, Error, InvalidArgument, IOError,
    NoSpace, NotFound, PermissionDenied, Poisoned, SharedExtents, StoreReplaced,
    TimedOut, TornCommit, UnsupportedVersion,
)
from ._regionstore import (  # noqa: F401  (re-exported)
    Durability, Meta, PendingCommit, RegionInfo, Store, SyncReport, create, open, version,
)

__version__ = version()


class Batch:
    """A batch commit being collected: ``with store.batch('sync') as batch:``.

    ``batch[name] = data`` (or ``batch.put(name, data)``) adds a member; the
    buffer is held, not copied, until the batch commits. Leaving the block
    normally commits every member as one (``generations`` then maps each name
    to its generation); leaving it by an exception commits nothing.
    """

    def __init__(self, store, durability="none"):
        self._store = store
        self._durability = durability
        self._members = {}
        self.generations = None

    def put(self, name, data):
        """Adds (or replaces) region ``name``'s payload in this batch."""
        self._members[name] = memoryview(data)

    __setitem__ = put

    def commit(self):
        """Commits the members now, as one; returns a dict of name to generation.

        A batch without members commits nothing and returns an empty dict.
        """
        if not self._members:
            self.generations = {}
            return self.generations
        try:
            self.generations = self._store.commit_batch(self._members, self._durability)
        finally:
            self._release()
        return self.generations

    def abort(self):
        """Drops the members; nothing is committed."""
        self._release()

    def _release(self):
        for view in self._members.values():
            view.release()
        self._members = {}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.abort()
        return False


def _batch(self, durability="none"):
    """A Batch that commits its members as one when its ``with`` block ends."""
    return Batch(self, durability)


Store.batch = _batch

from ._errors import __all__ as _error_names  # noqa: E402

# Not in __all__: open and IOError, which `from regionstore import *` would
# let shadow the built-in open() and IOError (OSError). Use regionstore.open
# and regionstore.IOError.
__all__ = ["Batch", "Durability", "Meta", "PendingCommit", "RegionInfo", "Store", "SyncReport",
           "create", "version", "__version__",
           *[name for name in _error_names if name != "IOError"]]
