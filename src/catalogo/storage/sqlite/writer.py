"""SQLite's one writer: a thread with its own connection, so the event loop never blocks on a
lock, and one writer per process is what SQLite allows anyway.

`synchronous=FULL` makes each acknowledged write survive a power cut, not only a crash, at the
price of a disk flush per commit; the writer pays it once for every write that queued while
the previous commit was flushing (group commit), and it gathers them (GATHER_S): the event
loop hands its writes over once per turn, and a batch that would hold one write waits a moment
for more while writes come together. One failing write does not undo the others:
one that changed nothing before it failed is only answered with its error, and one that did
undoes the transaction, which runs again without it: each write is all or nothing. No write has
a savepoint of its own: in FTS5 each savepoint writes the search index's pending rows out, a
segment per write, which cost 28 µs a create (bench/results/history.md). `busy_timeout` lets
several processes on one file take turns instead of failing. WAL, set by `connect`, is what
lets reads run beside the writer.
"""

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from catalogo.domain.errors import StorageUnavailable

T = TypeVar("T")
MAX_BATCH = 256
# WAL pages a commit may leave before it copies them into the file (SQLite's default: 1,000).
# A page written again before then is copied once: at 10,000 (about 40 MB of WAL) an update at
# random among 10,000 products cost the worker 172 µs of CPU under load instead of 190, a
# create 138 instead of 145 (bench/results/history.md).
CHECKPOINT_PAGES = 10_000
# But reads find a page in a long WAL dearer than in the file: after 10,000 updates the edit
# page answered 15-28% fewer requests until the WAL was copied. So once the writer has had
# nothing to do for this long, it does what waits for a quiet moment (`when_idle`) and copies
# what it wrote into the file (a passive checkpoint, which waits for no one), and reads skip
# the WAL again.
IDLE_S = 1.0
# Writes come in one at a time as the event loop reads their requests, and the writer wakes at
# the first: a commit of one update writes 11 pages, while in a commit of 8 each writes about 6
# and in one of 64 about 3.4 (the event's page, the search queue's, the order's last page are
# shared). So the loop hands over a turn's writes at once, and once writes have come together
# (the last batch held more than one), a batch that would start with one waits this long for
# others first, as PostgreSQL's commit_delay does; once writes come one at a time, none waits.
# With 64 clients, 1 ms against none: create +6%, update +2%, JSON create +6%
# (bench/results/history.md).
GATHER_S = 0.001


# None is bound as NULL either way. With an adapter of its own, sqlite3 finds it in its table;
# without one, it asks its protocol type for `__adapt__`, a lookup that fails by formatting an
# AttributeError, for every None it binds: a few for each event (bench/results/history.md).
sqlite3.register_adapter(type(None), lambda value: value)


def connect(path: str, lock_timeout_ms: int, check_same_thread: bool = True) -> sqlite3.Connection:
    """WAL is what lets reads run beside the writer; it is set here, where it is relied on."""
    connection = sqlite3.connect(
        path, isolation_level=None, cached_statements=64, check_same_thread=check_same_thread
    )
    connection.execute(f"PRAGMA busy_timeout={int(lock_timeout_ms)}")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
    return connection


def unavailable(error: Exception) -> StorageUnavailable:
    """The log says which of SQLite's errors it was (SQLITE_BUSY, SQLITE_FULL, ...): its
    message alone often does not ("vtable constructor failed")."""
    name = getattr(error, "sqlite_errorname", None)
    return StorageUnavailable(f"{error} ({name})" if name else str(error))


Job = tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]


class Writer(threading.Thread):
    """Owns the write connection; commits each batch of queued writes with one flush."""

    def __init__(
        self,
        path: str,
        lock_timeout_ms: int,
        committed: Callable[[int], None],
        before_commit: Callable[[sqlite3.Connection], None] = lambda connection: None,
        when_idle: Callable[[sqlite3.Connection], None] = lambda connection: None,
    ) -> None:
        """`before_commit` runs in every transaction, last; `when_idle` in a transaction of its
        own once the writer has had nothing to do for IDLE_S, and before it stops (both: the
        search index's queue, storage/sqlite/busca.py)."""
        super().__init__(name="sqlite-writer", daemon=True)
        self._before_commit = before_commit
        self._when_idle = when_idle
        self._path = path
        self._lock_timeout_ms = lock_timeout_ms
        self._committed = committed
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._idle_s: float | None = None  # how long to wait for a write before a checkpoint
        self._last_batch = 0
        self._turn: dict[asyncio.AbstractEventLoop, list[Job]] = {}  # not yet handed over
        self._handing = threading.Lock()  # a hand-over against the writer's end
        self._ended = False

    def submit(self, work: Callable[[sqlite3.Connection], T]) -> "asyncio.Future[T]":
        if not self.is_alive():
            raise StorageUnavailable("the SQLite writer thread has stopped")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        jobs = self._turn.setdefault(loop, [])
        if not jobs:
            loop.call_soon(self._hand_over, loop)  # after what this turn of the loop has ready
        jobs.append((work, future))
        return future

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        jobs = self._turn.pop(loop, [])
        with self._handing:
            if not self._ended:
                for job in jobs:  # all queued before the writer, woken by the first, has the GIL
                    self._jobs.put(job)
                return
        _fail(jobs)

    def stop(self) -> None:
        self._jobs.put(None)
        self.join()

    def run(self) -> None:
        connection = None
        try:
            connection = connect(self._path, self._lock_timeout_ms)
            while (batch := self._next_batch(connection)) is not None:
                if self._commit(connection, batch):
                    self._idle_s = IDLE_S
                self._last_batch = len(batch)
            if left := self._end():  # handed over as it stopped
                self._commit(connection, left)
            self._idle(connection)
        finally:
            _fail(self._end())  # a writer that failed answers what was handed over to it
            if connection is not None:
                connection.close()

    def _idle(self, connection: sqlite3.Connection) -> None:
        """What waits for a quiet moment: `when_idle`'s work, then the WAL copied into the
        file (a passive checkpoint). Either may find another process writing: it is tried
        again at the next quiet moment."""
        try:
            _run(connection, [self._when_idle], lambda connection: None)
        except sqlite3.Error:
            _rollback(connection)
        with contextlib.suppress(sqlite3.Error):
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _next_batch(self, connection: sqlite3.Connection) -> list[Job] | None:
        try:
            first = self._jobs.get(timeout=self._idle_s)
        except queue.Empty:  # idle since it last wrote
            self._idle(connection)
            self._idle_s = None
            first = self._jobs.get()
        if first is None:
            return None
        if self._last_batch > 1 and self._jobs.empty():
            time.sleep(GATHER_S)  # the GIL's to the event loop meanwhile: it hands more over
        batch = [first]
        while len(batch) < MAX_BATCH:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is None:
                self._jobs.put(None)  # finish this batch, then stop
                break
            batch.append(job)
        return batch

    def _end(self) -> list[Job]:
        """What was handed over and not yet taken; none is handed over after this."""
        left = []
        with self._handing:
            self._ended = True
            with contextlib.suppress(queue.Empty):
                while True:
                    if (job := self._jobs.get_nowait()) is not None:
                        left.append(job)
        return left

    def _commit(self, connection: sqlite3.Connection, batch: list[Job]) -> int:
        """The number of writes committed (0: the batch failed)."""
        try:
            outcomes = _run(connection, [work for work, _ in batch], self._before_commit)
            committed = len(batch)
        except Exception as error:  # locked past busy_timeout, disk full, a damaged file
            _rollback(connection)
            outcomes = [(False, unavailable(error)) for _ in batch]
            committed = 0
        # One wake-up of each waiting event loop per batch, not one per write.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            by_loop.setdefault(future.get_loop(), []).append((future, ok, value))
        for loop, settled in by_loop.items():
            # RuntimeError: that event loop is gone, so nobody waits for these answers.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, settled)
        if committed:
            with contextlib.suppress(Exception):  # a metric that fails must not stop the writer
                self._committed(committed)
        return committed


def _rollback(connection: sqlite3.Connection) -> None:
    # If even this fails, the next BEGIN fails the same way and answers 503 too.
    with contextlib.suppress(sqlite3.Error):
        if connection.in_transaction:
            connection.execute("ROLLBACK")


def _run(
    connection: sqlite3.Connection,
    works: list[Callable[[sqlite3.Connection], Any]],
    before_commit: Callable[[sqlite3.Connection], None],
) -> list[tuple[bool, Any]]:
    """Each work's outcome, all of them committed in one transaction. A work that raises having
    changed nothing (`total_changes` counts every row a statement or its triggers wrote) keeps
    its error and the others go on; one that changed something before raising is left out, and
    the transaction is made again without it, so no part of it is committed and no other work
    saw it. The database's own failures (not a constraint's) fail the whole batch."""
    left_out: dict[int, tuple[bool, Any]] = {}  # by index: the error each was left out for
    while True:
        connection.execute("BEGIN IMMEDIATE")
        outcomes: list[tuple[bool, Any]] = []
        again = False
        for index, work in enumerate(works):
            if index in left_out:
                outcomes.append(left_out[index])
                continue
            before = connection.total_changes
            try:
                outcomes.append((True, work(connection)))
            except Exception as error:
                if isinstance(error, sqlite3.DatabaseError) and not isinstance(
                    error, sqlite3.IntegrityError
                ):
                    raise  # the database itself failed: the whole batch is in doubt
                outcomes.append((False, error))
                if connection.total_changes != before:
                    left_out[index] = (False, error)
                    again = True
                    break
        if not again:
            before_commit(connection)
            connection.execute("COMMIT")
            return outcomes
        connection.execute("ROLLBACK")


def _fail(jobs: list[Job]) -> None:
    stopped = StorageUnavailable("the SQLite writer thread has stopped")
    for _, future in jobs:
        with contextlib.suppress(RuntimeError):  # its event loop is gone
            future.get_loop().call_soon_threadsafe(_settle, [(future, False, stopped)])


def _settle(settled: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in settled:
        if future.done():  # the request went away while its write was committed
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
