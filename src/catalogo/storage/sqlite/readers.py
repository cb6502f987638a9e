"""SQLite's readers: the event loop's own connection, for reads that cost the same at any size of
the catalog, and a few threads with a connection each, for those whose cost grows with it.

A read by id takes microseconds, less than a hop to a thread and back, so it stays on the loop
(the edit page is the hot path). A search, a price range or an exact count may read the whole
catalog: on the loop, five of them held every other request of the worker, `/healthz`
included, for five seconds at 200,000 products. On a reader thread they hold only that thread:
SQLite lets go of the GIL while it steps a statement. On Linux the reader threads also run at
a lower priority (nice NICENESS) than the loop's, so that the cores they keep busy are the
loop's the moment it has a request to answer.

Every statement of every reader stops once it has run for CATALOGO_QUERY_TIMEOUT_MS (SQLite's
progress handler, asked every PROGRESS_STEPS virtual machine steps, about a millisecond):
`QueryTimeout`, never a worker spent. A read that waited as long for a free reader thread is not
begun: the others keep them busy, and its client is told to come back (503, Retry-After),
rather than wait behind them past any balancer's patience.

Each reader keeps its own counts (paging.Counts): `PRAGMA data_version` is comparable only on
the connection that read it.
"""

import asyncio
import math
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from catalogo.domain.errors import QueryTimeout, StorageUnavailable
from catalogo.storage import paging
from catalogo.storage.sqlite.writer import connect, unavailable

T = TypeVar("T")
PROGRESS_STEPS = 20_000
THREADS = 2  # per worker: reads beyond these wait their turn, the loop never does
# A reader thread's own page cache (SQLite's default: 2,000 KiB). Its reads walk far more of the
# file than any cache holds, and the kernel's keeps the file anyway: at 1,000,000 products,
# searches at random took each thread's cache to its full size, 7 MB of a worker's memory in
# all, and answered as many a second with 256 KiB (bench/results/history.md).
THREAD_CACHE_KIB = 256
NICENESS = 10


class Reader:
    """One read connection whose every statement has the time budget."""

    def __init__(
        self,
        path: str,
        lock_timeout_ms: int,
        query_timeout_ms: int,
        cache_kib: int | None = None,
    ) -> None:
        """`cache_kib`: its page cache, if not SQLite's default."""
        self.connection = connect(path, lock_timeout_ms, check_same_thread=False)
        if cache_kib is not None:
            self.connection.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
        self.counts = paging.Counts()
        self._budget_s = query_timeout_ms / 1000
        self._deadline = math.inf
        self.connection.set_progress_handler(self._past_deadline, PROGRESS_STEPS)

    def _past_deadline(self) -> bool:
        return time.monotonic() > self._deadline

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        self._deadline = time.monotonic() + self._budget_s
        try:
            return self.connection.execute(sql, params).fetchall()
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode == sqlite3.SQLITE_INTERRUPT:
                raise QueryTimeout(round(self._budget_s * 1000)) from error
            raise unavailable(error) from error
        except sqlite3.DatabaseError as error:  # locked, unreadable or damaged: not a bug of ours
            raise unavailable(error) from error

    def snapshot(self, read: Callable[["Reader"], T]) -> T:
        """`read`'s statements all see one moment of the file."""
        self.read("BEGIN")
        try:
            return read(self)
        finally:
            if self.connection.in_transaction:
                self.read("COMMIT")


class Readers:
    """The reader threads of one worker, each opening its connection on its first read."""

    def __init__(self, path: str, lock_timeout_ms: int, query_timeout_ms: int) -> None:
        self._open: Callable[[], Reader] = lambda: Reader(
            path, lock_timeout_ms, query_timeout_ms, THREAD_CACHE_KIB
        )
        self._patience_s = query_timeout_ms / 1000
        self._running = 0  # reads handed to the threads and not yet done (the loop counts)
        self._own = threading.local()
        self._opened: list[Reader] = []
        self._threads = ThreadPoolExecutor(
            THREADS, thread_name_prefix="sqlite-reader", initializer=_yield_to_the_loop
        )

    def own(self) -> tuple[Reader, ThreadPoolExecutor]:
        """A reader of its own and its one thread, for a read that lasts (an export): at the
        threads' niceness, its statements never run on two threads at once."""
        thread = ThreadPoolExecutor(1, "sqlite-export", initializer=_yield_to_the_loop)
        return thread.submit(self._open).result(), thread

    async def run(self, read: Callable[[Reader], T]) -> T:
        """`read` on a reader thread. Only a read that found every thread busy may be turned
        away for its wait: a lone one waits no more than a thread's start, however long the
        scheduler of a loaded machine makes that."""
        queued = time.monotonic() if self._running >= THREADS else None
        self._running += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._threads, self._in_thread, read, queued
            )
        finally:
            self._running -= 1

    def _in_thread(self, read: Callable[[Reader], T], queued: float | None) -> T:
        if queued is not None and time.monotonic() - queued > self._patience_s:
            raise StorageUnavailable(
                f"every SQLite reader thread was busy for over {self._patience_s:g} s"
            )
        reader: Reader | None = getattr(self._own, "reader", None)
        if reader is None:
            reader = self._own.reader = self._open()
            self._opened.append(reader)
        return reader.snapshot(read)

    def close(self) -> None:
        """Waits for the reads under way (each within its budget), then closes."""
        self._threads.shutdown(wait=True)
        for reader in self._opened:
            reader.connection.close()


def _yield_to_the_loop() -> None:
    """NICENESS below the process's own priority. On Linux a thread has a priority of its own;
    elsewhere the call would name a process."""
    if sys.platform == "linux":
        thread = threading.get_native_id()
        niceness = min(19, os.getpriority(os.PRIO_PROCESS, thread) + NICENESS)
        os.setpriority(os.PRIO_PROCESS, thread, niceness)
