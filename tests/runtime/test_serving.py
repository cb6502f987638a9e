"""`catalogo serve` stopped as systemd stops a unit, SIGTERM to its whole process group, at
any moment: idle, starting, with an editor signed in, in a burst of writes; with one worker and
with two. Each stop must end serve within seconds with status 0 and no process of it left;
every connection made after the signal must be refused or answered in full, never taken and
dropped; and every write answered is in the database."""

import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from catalogo.runtime import serving as runtime_serving
from tests.databases import Database
from tests.helpers import ONLY_SQLITE, SENHA, eventually
from tests.processes import CATALOGO, catalogo, free_port

pytestmark = ONLY_SQLITE

HANG_S = 15  # a stop, or a connection, that takes longer than this has hung
STOPS = 5  # of each kind, each of a serve of its own
REFUSED, UNANSWERED = "refused", "unanswered"
Outcome = int | str  # the status of an answer, REFUSED or UNANSWERED


class Serve:
    """`catalogo serve` in a process group of its own, on a free loopback port, its output
    read as it comes so that a test can act the moment a line appears."""

    def __init__(self, database: str, workers: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [CATALOGO, "serve", "--port", str(self.port), "--workers", workers],
            env={**os.environ, "CATALOGO_DATABASE_URL": database},
            start_new_session=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.lines: list[str] = []
        self._said = threading.Condition()
        self._reader = threading.Thread(target=self._read)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._said:
                self.lines.append(line.decode(errors="replace"))
                self._said.notify_all()

    def said(self, text: str) -> None:
        """Returns as soon as serve has written a line containing `text`."""
        with self._said:
            assert self._said.wait_for(lambda: any(text in line for line in self.lines), 60), (
                f"serve never said {text!r}:\n{''.join(self.lines)}"
            )

    def ask(self, request: bytes) -> Outcome:
        """One request on a connection of its own (see `_ask`)."""
        return _ask(self.port, request)

    def stop(self) -> float:
        """SIGTERM to every process of serve's group, as systemd stops a unit; then waits for
        serve to end. Returns how long it took."""
        os.killpg(self.process.pid, signal.SIGTERM)
        signalled = time.monotonic()
        try:
            self.process.wait(HANG_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve did not end within {HANG_S} s:\n{''.join(self.lines)}")
        return time.monotonic() - signalled

    def kill(self) -> None:
        """Ends whatever is left of serve, and stops reading it."""
        if _running(self.process.pid):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(HANG_S)
        self._reader.join(HANG_S)
        assert self.process.stdout is not None
        self.process.stdout.close()


@contextmanager
def serving(database: str, workers: str) -> Iterator[Serve]:
    serve = Serve(database, workers)
    try:
        yield serve
    finally:
        serve.kill()  # only when the test failed: a stop that works leaves nothing


def _ask(port: int, request: bytes) -> Outcome:
    """Sends `request` (which asks to close the connection) on a new connection, and reads
    until the server closes it: the status of the whole answer; REFUSED if the connection was
    refused; UNANSWERED if serve took the connection and closed it without a whole answer."""
    try:
        connection = socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
    except ConnectionRefusedError:
        return REFUSED
    received = b""
    with connection:
        try:
            connection.sendall(request)
            while chunk := connection.recv(65536):
                received += chunk
        except (ConnectionResetError, BrokenPipeError):
            return UNANSWERED
    head, _, body = received.partition(b"\r\n\r\n")
    length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    if not head.startswith(b"HTTP/1.1 ") or length is None or len(body) < int(length[1]):
        return UNANSWERED
    return int(head.split()[1])


HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


class Knocking:
    """Threads that each send requests one after another, each on a new connection, until
    serve has ended: what a balancer and its clients do while an instance stops."""

    def __init__(self, serve: Serve, threads: int, request: Callable[[str], bytes]) -> None:
        self.outcomes: list[tuple[str, Outcome]] = []  # (the request's name, its outcome)
        self._ended = threading.Event()
        self._names = itertools.count()
        self._threads = [
            threading.Thread(target=self._knock, args=(serve, request)) for _ in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def _knock(self, serve: Serve, request: Callable[[str], bytes]) -> None:
        while not self._ended.is_set():
            name = f"pedido {next(self._names)}"
            outcome = serve.ask(request(name))
            self.outcomes.append((name, outcome))
            if outcome == REFUSED:
                self._ended.wait(0.01)  # serve has not ended yet: it may still take some

    def answered(self, status: int) -> list[str]:
        return [name for name, outcome in self.outcomes if outcome == status]

    def end(self) -> list[Outcome]:
        """Once serve has ended: every outcome."""
        self._ended.set()
        for thread in self._threads:
            thread.join(HANG_S)
        return [outcome for _, outcome in self.outcomes]


def _stopped_cleanly(serve: Serve, knocking: Knocking) -> None:
    """Stops serve while `knocking` goes on, and checks everything a stop must do."""
    try:
        took = serve.stop()
    finally:
        outcomes = knocking.end()
    log = "".join(serve.lines)
    assert serve.process.returncode == 0, log
    assert took < HANG_S
    assert _group(serve.process.pid) == [], log
    assert UNANSWERED not in outcomes, log
    assert REFUSED in outcomes  # it knocked until serve was gone
    assert "Unexpected exit" not in log and "Traceback" not in log, log


def _group(group: int) -> list[int]:
    """The processes of a process group still running (a zombie has ended)."""
    running = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(pgrp) == group and state != "Z":
            running.append(int(stat.parent.name))
    return running


def _running(pid: int) -> bool:
    return _group(pid) != []


def _until_answering(serve: Serve) -> None:
    eventually(lambda: serve.process.poll() is not None or serve.ask(HEALTH) == 200)
    assert serve.process.poll() is None, "".join(serve.lines)


WORKERS = pytest.mark.parametrize("workers", ["1", "2"])


@WORKERS
def test_a_stop_while_idle_ends_serve_with_0(database: str, workers: str) -> None:
    for _ in range(STOPS):
        with serving(database, workers) as serve:
            _until_answering(serve)
            _stopped_cleanly(serve, Knocking(serve, 1, lambda _: HEALTH))


# Moments of serve's start, each twice: before Granian runs; just after a worker is forked,
# while it loads the app (where Granian's own workers lose a SIGTERM); as one begins to listen.
START_UP = ["catalogo: servindo", "Spawning worker-{workers}", "Started worker-1"]


@WORKERS
@pytest.mark.parametrize("moment", START_UP)
def test_a_stop_while_serve_starts_ends_it_with_0(database: str, workers: str, moment: str) -> None:
    for _ in range(2):
        with serving(database, workers) as serve:
            serve.said(moment.format(workers=workers))
            _stopped_cleanly(serve, Knocking(serve, 1, lambda _: HEALTH))


@WORKERS
def test_a_stop_after_an_editor_signed_in_keeps_every_write_it_answered(
    database: str, db: Database, workers: str
) -> None:
    made = catalogo(
        database, "usuarios", "criar", "ana", "--papel", "editor", "--senha-stdin", input=SENHA
    )
    assert made.returncode == 0, made.stderr
    for stop in range(STOPS):
        with serving(database, workers) as serve:
            _until_answering(serve)
            writes = Writes(f"sessao {stop}", _signed_in(serve))
            assert serve.ask(writes("antes")) == 303
            knocking = Knocking(serve, 2, writes)
            _stopped_cleanly(serve, knocking)
        assert sorted(["antes", *knocking.answered(303)]) == sorted(_stored(db, writes.prefix))


@WORKERS
def test_a_stop_in_a_burst_of_writes_answers_each_write_it_took_and_keeps_each_answered(
    database: str, db: Database, workers: str
) -> None:
    for stop in range(STOPS):
        with serving(database, workers) as serve:
            _until_answering(serve)
            writes = Writes(f"rajada {stop}")
            knocking = Knocking(serve, 6, writes)
            eventually(lambda: len(knocking.answered(303)) >= 20)  # noqa: B023 - called here
            _stopped_cleanly(serve, knocking)
        assert sorted(knocking.answered(303)) == sorted(_stored(db, writes.prefix))


class Writes:
    """The new-product form posted as a browser does (with the session's cookie, if any), the
    product named `prefix` and the name of the request."""

    def __init__(self, prefix: str, cookie: str = "") -> None:
        self.prefix, self.cookie = prefix, cookie

    def __call__(self, name: str) -> bytes:
        fields = {"produto.nome": f"{self.prefix} {name}", "produto.preco": "9,90"}
        return _posted("/produtos", fields, f"sessao={self.cookie}" if self.cookie else "")


def _posted(path: str, fields: dict[str, str], cookie: str = "") -> bytes:
    """A form posted to `path`, on a connection that closes after the answer."""
    body = urllib.parse.urlencode(fields)
    head = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Connection: close",
        "Content-Type: application/x-www-form-urlencoded",
        f"Content-Length: {len(body)}",
        *([f"Cookie: {cookie}"] if cookie else []),
    ]
    return "\r\n".join([*head, "", body]).encode()


def _stored(db: Database, prefix: str) -> list[str]:
    """The names of the requests whose products, named with `prefix`, were stored."""
    rows = db.execute("SELECT nome FROM produtos WHERE nome LIKE ?", (f"{prefix} %",))
    return [nome.removeprefix(f"{prefix} ") for (nome,) in rows]


def _signed_in(serve: Serve) -> str:
    """Signs the editor in through /entrar, as a browser does: the session's cookie."""
    request = _posted("/entrar", {"nome": "ana", "senha": SENHA, "proximo": ""})
    with socket.create_connection(("127.0.0.1", serve.port), timeout=HANG_S) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    found = re.search(rb"(?i)\r\nset-cookie: sessao=([^;]+)", answer)
    assert answer.startswith(b"HTTP/1.1 303") and found, answer
    return found[1].decode()


def test_workers_stop_on_their_own_when_serve_is_killed(database: str) -> None:
    """They take no signal, and wait for serve's word: its death is one."""
    with serving(database, "2") as serve:
        _until_answering(serve)
        serve.said("Started worker-2")
        os.kill(serve.process.pid, signal.SIGKILL)
        eventually(lambda: _group(serve.process.pid) == [])


def test_a_sighup_is_ignored(database: str) -> None:
    """Granian would restart its workers, signalling them; serve's take no signal."""
    with serving(database, "1") as serve:
        _until_answering(serve)
        os.killpg(serve.process.pid, signal.SIGHUP)
        assert serve.ask(HEALTH) == 200
        _stopped_cleanly(serve, Knocking(serve, 1, lambda _: HEALTH))
        assert "HUP" not in "".join(serve.lines)


def test_a_second_serve_on_the_same_port_is_refused_with_a_message(database: str) -> None:
    """Granian's own sockets share a port (SO_REUSEPORT): a second serve would have taken half
    of the first one's connections."""
    with serving(database, "1") as serve:
        _until_answering(serve)
        second = catalogo(database, "serve", "--port", str(serve.port))
        assert second.returncode == 1
        assert second.stderr == (
            f"catalogo: não consigo escutar em 127.0.0.1:{serve.port}: Address already in use\n"
        )
        _stopped_cleanly(serve, Knocking(serve, 1, lambda _: HEALTH))


def test_an_untested_granian_serves_as_it_is_and_serve_says_so_before_anything(
    database: str,
) -> None:
    """As after `pip install .` without the constraints: the newest Granian 2.8 (here a
    version number made up for the test) is run without catalogo's adjustments."""
    assert runtime_serving.unadjusted_because("2.8.7") is None
    said = runtime_serving.unadjusted_because("2.8.9")
    assert said == "o Granian 2.8.9 não é uma versão testada (2.8.7)"
    port = free_port()
    code = (
        "import importlib.metadata as m, sys; real = m.version; "
        "m.version = lambda name: '2.8.99' if name == 'granian' else real(name); "
        "from catalogo.cli.main import main; main(sys.argv[1:])"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--port", str(port)],
        env={**os.environ, "CATALOGO_DATABASE_URL": database, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith(
            "catalogo: aviso: o Granian 2.8.99 não é uma versão testada (2.8.7); o Granian "
            "serve como ele é"
        ), first
        assert process.stdout.readline().startswith("catalogo: servindo")
        eventually(lambda: _ask(port, HEALTH) == 200)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(HANG_S)
        assert process.stdout is not None
        process.stdout.close()
