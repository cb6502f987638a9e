"""The file's mark: the same while nothing is committed, another after any commit, by any
connection; unknown, never "unchanged", when it cannot be read whole."""

import sqlite3
import subprocess
import sys
from pathlib import Path

from catalogo.storage.sqlite.changes import Changes
from catalogo.storage.sqlite.writer import connect


def opened(path: Path) -> tuple[sqlite3.Connection, sqlite3.Connection]:
    """A reader that has the file open in WAL mode (what Changes needs), and a writer."""
    writer = connect(str(path), 1000)
    writer.execute("CREATE TABLE t (x)")
    reader = connect(str(path), 1000)
    reader.execute("SELECT count(*) FROM t").fetchall()
    return reader, writer


def test_the_mark_stays_while_nothing_is_committed_and_moves_with_each_commit(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    reader, writer = opened(path)
    changes = Changes(str(path))
    try:
        before = changes.mark()
        assert before is not None
        reader.execute("SELECT * FROM t").fetchall()
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO t VALUES (1)")
        assert changes.mark() == before  # not committed yet
        writer.execute("ROLLBACK")
        assert changes.mark() == before
        marks: set[bytes | None] = {before}
        for n in range(3):
            writer.execute("INSERT INTO t VALUES (?)", (n,))
            now = changes.mark()
            assert now not in marks
            marks.add(now)
        other = connect(str(path), 1000)  # another connection, as another process would be
        other.execute("DELETE FROM t")
        assert changes.mark() not in marks
        other.close()
    finally:
        changes.close()
        reader.close()
        writer.close()


def test_the_mark_is_unknown_when_the_headers_copies_differ_or_there_is_no_file(
    tmp_path: Path,
) -> None:
    """SQLite writes the header's second copy first: copies that differ are a commit caught in
    the middle."""
    shm = tmp_path / "x.db-shm"
    shm.write_bytes(b"\1" * 48 + b"\2" * 48 + b"\0" * 100)
    assert Changes(str(tmp_path / "x.db")).mark() is None
    shm.write_bytes(b"\1" * 96)
    assert Changes(str(tmp_path / "x.db")).mark() == b"\1" * 48
    shm.write_bytes(b"\1" * 10)
    assert Changes(str(tmp_path / "x.db")).mark() is None
    assert Changes(str(tmp_path / "none.db")).mark() is None
    closed = Changes(str(tmp_path / "x.db"))
    closed.close()
    assert closed.mark() is None


def locked_elsewhere(shm: Path) -> bool:
    """Whether some process other than the one asking holds SQLite's lock on the `-shm` file's
    "DMS" byte (128), which keeps any other connection from truncating it: asked by another
    process, since a process never conflicts with its own POSIX locks."""
    ask = (
        "import fcntl, os, struct, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "asked = struct.pack('hhqqi', fcntl.F_WRLCK, 0, 128, 1, 0)\n"
        "found = fcntl.fcntl(fd, fcntl.F_GETLK, asked)\n"
        "sys.exit(0 if struct.unpack('hhqqi', found)[0] != fcntl.F_UNLCK else 1)\n"
    )
    return subprocess.run([sys.executable, "-c", ask, str(shm)], check=False).returncode == 0


def test_mapping_the_file_and_letting_it_go_keep_sqlites_locks(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops all its process's POSIX locks on it: the
    descriptor Changes opens must outlive its use, or another process could truncate the
    `-shm` file under the mapping (a worker killed by SIGBUS) and under SQLite's readers."""
    path = tmp_path / "c.db"
    reader, writer = opened(path)
    shm = Path(f"{path}-shm")
    try:
        assert locked_elsewhere(shm)
        first = Changes(str(path))
        first.close()
        second = Changes(str(path))
        assert second.mark() is not None
        second.close()
        assert locked_elsewhere(shm)
    finally:
        reader.close()
        writer.close()


def test_a_file_made_again_at_the_same_path_is_mapped_anew(tmp_path: Path) -> None:
    """SQLite deletes the `-shm` file when the last connection closes; the next one makes
    another, whose commits the old mapping would never see."""
    path = tmp_path / "c.db"
    reader, writer = opened(path)
    Changes(str(path)).close()
    reader.close()
    writer.close()
    assert not Path(f"{path}-shm").exists()
    reader = connect(str(path), 1000)
    reader.execute("SELECT count(*) FROM t").fetchall()
    changes = Changes(str(path))
    try:
        before = changes.mark()
        assert before is not None
        reader.execute("INSERT INTO t VALUES (1)")
        assert changes.mark() != before
    finally:
        changes.close()
        reader.close()
