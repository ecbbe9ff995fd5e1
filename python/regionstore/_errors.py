"""The exceptions regionstore raises: one class per status code of the library.

Every class derives from regionstore.Error, and where a built-in exception
says the same thing, from it too (InvalidArgument is a ValueError, NotFound a
LookupError, TimedOut a TimeoutError, ...), so ordinary ``except`` clauses
work. The message is the library's own.
"""


class Error(Exception):
    """Base class of every error regionstore raises. ``code`` names the status."""

    code = "error"


class InvalidArgument(Error, ValueError):
    """A bad offset, length, size, name or mode; nothing was changed."""

    code = "invalid argument"


class NotFound(Error, LookupError):
    """No such file, no such region, or a region without a commit yet."""

    code = "not found"


class PermissionDenied(Error, PermissionError):
    """The OS refused (EACCES, EPERM, EROFS)."""

    code = "permission denied"


class AlreadyExists(Error, FileExistsError):
    """create() without replace=True over an existing path."""

    code = "already exists"


class Corruption(Error):
    """Not a store, or its metadata or data is damaged."""

    code = "corruption"


class UnsupportedVersion(Error):
    """A store written by a newer, incompatible format."""

    code = "unsupported version"


class NoSpace(Error, OSError):
    """The filesystem is full (ENOSPC) or the quota reached (EDQUOT)."""

    code = "no space"


class IOError(Error, OSError):  # noqa: A001 - the library's name for the status
    """Any other OS error."""

    code = "I/O error"


class Busy(Error):
    """Another writer holds the store, or a consistent load kept racing the writer."""

    code = "busy"


class Poisoned(Error):
    """An earlier flush failed on this handle: close it and open the store again."""

    code = "poisoned"


class TornCommit(Error):
    """A region's newest commit is torn and no older one is intact."""

    code = "torn commit"


class SharedExtents(Error):
    """A writer's open found blocks shared with another file (an XFS reflink copy)."""

    code = "shared extents"


class TimedOut(Error, TimeoutError):
    """wait_newer's timeout passed without a newer commit."""

    code = "timed out"


class StoreReplaced(Error):
    """The store's path no longer names the file this handle opened."""

    code = "store replaced"


class BufferTooSmall(Error, ValueError):
    """load_into's buffer cannot hold the commit; nothing was written."""

    code = "buffer too small"


__all__ = [
    "Error", "InvalidArgument", "NotFound", "PermissionDenied", "AlreadyExists",
    "Corruption", "UnsupportedVersion", "NoSpace", "IOError", "Busy", "Poisoned",
    "TornCommit", "SharedExtents", "TimedOut", "StoreReplaced", "BufferTooSmall",
]
