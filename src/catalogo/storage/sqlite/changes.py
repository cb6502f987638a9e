"""Whether anything was committed to the SQLite file since a moment, known without asking SQLite.

Every commit of every connection, this process's or another's, rewrites the WAL index's header
at the start of the `-shm` file, which every connection maps into memory, and moves its change
counter (https://www.sqlite.org/walformat.html, "The WAL-Index Header"): while the header's bytes
are the same, nothing has been committed. `PRAGMA data_version` tells the same, but asking it
is a statement, and every statement lets go of the GIL while SQLite runs it: served, where
Granian's thread is waiting for the GIL with the next request, each costs the worker two thread
switches. One more statement a request (the credentials' check, as it was) cost a served JSON
product 12% of its answers; reading these bytes costs a slice of memory (bench/results/history.md).

SQLite writes the header's two copies one after the other; a read that finds them different
caught a commit in the middle, and counts as "changed".

The `-shm` file is opened and mapped once per process, and neither the descriptor nor the
mapping (which holds a duplicate of it) is closed while the file is in use: POSIX locks belong
to the process, and closing *any* descriptor of a file releases all the process's locks on it,
SQLite's included (its shared lock on the `-shm` file, which keeps other connections from
truncating it under this mapping, and its readers' marks). They are closed only once the file
has been replaced (SQLite deletes the `-shm` file when the last connection closes): no
connection can be using that one. The mapping is read only while this process's reader
connection is open, whose shared lock keeps the file whole.
"""

import contextlib
import mmap
import os
import threading

_HEADER = 48  # bytes; the header's second copy follows the first
# By path of a `-shm` file: the inode it was when opened, the descriptor and the mapping.
_OPENED: dict[str, tuple[int, int, mmap.mmap]] = {}
_OPENING = threading.Lock()


class Changes:
    """The moment's mark: equal marks, nothing committed between them. None when unknown (the
    two copies differ, or the file cannot be mapped): then nothing may be taken as unchanged."""

    def __init__(self, path: str) -> None:
        """Once a connection in WAL mode has read `path`, so that its `-shm` file is in use,
        and only while that connection stays open."""
        self._map: mmap.mmap | None = None
        with contextlib.suppress(OSError, ValueError):
            self._map = _mapped(path + "-shm")

    def mark(self) -> bytes | None:
        found = self._map
        if found is None:
            return None
        first = found[:_HEADER]
        return first if first == found[_HEADER : 2 * _HEADER] else None

    def close(self) -> None:
        """Before the connection that keeps the `-shm` file whole is closed: from then on the
        mapping is not read (it stays mapped: see above)."""
        self._map = None


def _mapped(shm: str) -> mmap.mmap:
    """This process's one mapping of the `-shm` file now at `shm`."""
    with _OPENING:
        found = os.stat(shm)
        if found.st_size < 2 * _HEADER:  # not a WAL index yet: not opened, never to be closed
            raise ValueError(f"{shm} is not a WAL index yet")
        inode = found.st_ino
        known = _OPENED.get(shm)
        if known is not None and known[0] == inode:
            return known[2]
        for path, (opened, fd, mapped) in list(_OPENED.items()):  # replaced since: free to go
            with contextlib.suppress(OSError):
                if os.stat(path).st_ino == opened:
                    continue
            mapped.close()
            os.close(fd)
            del _OPENED[path]
        fd = os.open(shm, os.O_RDONLY)
        mapped = mmap.mmap(fd, 2 * _HEADER, access=mmap.ACCESS_READ)
        _OPENED[shm] = (os.fstat(fd).st_ino, fd, mapped)
        return mapped
