"""Real processes the tests start and stop: `catalogo serve`, and a PostgreSQL server of their
own, which, unlike the machine's, a test may stop to see what the service does without it."""

import os
import re
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import coverage
import httpx2

from tests.databases import PostgreSQLServer, unavailable

ROOT = Path(__file__).resolve().parent.parent
CATALOGO = str(Path(sys.executable).with_name("catalogo"))

# The servers the tests start speak plain HTTP on loopback, yet httpx2 makes a TLS context for
# every client, loading the CA bundle each time (tens of milliseconds, times forty clients in
# some tests): every client here shares this one.
_TLS = ssl.create_default_context()


def http_client(base_url: str = "", **kwargs: Any) -> httpx2.Client:
    """An httpx2 client for a server the tests started (use it in a `with`)."""
    return httpx2.Client(base_url=base_url, verify=_TLS, **kwargs)


def fetch(method: str, url: str, **kwargs: Any) -> httpx2.Response:
    """One request with a client of its own, as `httpx2.request` but with the shared context."""
    with http_client() as client:
        return client.request(method, url, **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Exchange(NamedTuple):
    status: int
    head: str  # the status line and the headers, lowercased
    body: str
    seconds: float  # from the first byte sent to the whole answer read
    closed: bool  # whether the server then closed the connection


def address(base: str) -> tuple[str, int]:
    """The host and port of a server the tests started, from its base URL."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def exchange(base: str, *parts: bytes | float, timeout: float = 15) -> Exchange:
    """Talks to a server the tests started as no HTTP client library would: sends `parts` over
    one new connection, a float being a pause (in seconds) between two of them, and stops
    sending as soon as the server answers. Then reads one whole answer."""
    start = time.monotonic()
    with socket.create_connection(address(base), timeout=timeout) as connection:
        for part in parts:
            if isinstance(part, float):
                if select.select([connection], [], [], part)[0]:
                    break  # the server answered before the body ended
            else:
                try:
                    connection.sendall(part)
                except (BrokenPipeError, ConnectionResetError):
                    break
        received = b""
        while b"\r\n\r\n" not in received:
            received += connection.recv(65536) or _closed_early(received)
        head, _, body = received.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head)[1])  # type: ignore[index]
        while len(body) < length:
            body += connection.recv(65536) or _closed_early(received)
        seconds = time.monotonic() - start
        connection.settimeout(1)
        try:
            closed = connection.recv(1) == b""
        except TimeoutError:
            closed = False
    return Exchange(int(head.split()[1]), head.decode().lower(), body.decode(), seconds, closed)


def errors_logged(log: Path) -> list[str]:
    """The lines of a server's log that report an error: Granian's ("[ERROR]"), catalogo's
    (JSON, `"level":"error"`), or a traceback's."""
    return [
        line
        for line in log.read_text().splitlines()
        if "[ERROR]" in line or '"level":"error"' in line or "Traceback" in line
    ]


def _closed_early(received: bytes) -> bytes:
    raise AssertionError(f"the server closed the connection mid-answer: {received!r}")


def measured(env: Mapping[str, str]) -> dict[str, str]:
    """`env`, plus, when this run measures coverage (scripts/test's does), what has coverage.py
    measure the command too (its .pth reads COVERAGE_PROCESS_START), into files pytest-cov
    combines: cli/main.py runs nowhere else. Only commands run to their end are measured. A server
    a test keeps running is not: its request path is measured in-process already, and
    measuring servers too made the tests that start them a third slower."""
    current = coverage.Coverage.current()
    if current is None:
        return dict(env)
    data_file = ROOT / str(current.get_option("run:data_file"))
    return {
        **env,
        "COVERAGE_PROCESS_START": str(ROOT / "pyproject.toml"),
        "COVERAGE_FILE": str(data_file),
    }


def catalogo(
    database: str, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs a `catalogo` command to its end, with `input` on its stdin (none: an empty one),
    measured by coverage when the run is."""
    env = measured({**os.environ, **(env or {}), "CATALOGO_DATABASE_URL": database})
    return subprocess.run(
        [CATALOGO, *args], env=env, input=input or "", capture_output=True, text=True, timeout=60
    )


class Usage(NamedTuple):
    """What a process spent: CPU seconds (user and system, every thread) and the most memory
    it held (peak resident set, MiB)."""

    cpu_s: float
    peak_mib: float


def catalogo_usage(database: str, *args: str) -> tuple[subprocess.CompletedProcess[str], Usage]:
    """Runs a `catalogo` command to its end, as `catalogo` does, and what it spent: the
    kernel's own account of that one process (wait4), however busy the machine."""
    env = measured({**os.environ, "CATALOGO_DATABASE_URL": database})
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [CATALOGO, *args], env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        said = []
        for file in (stdout, stderr):
            file.seek(0)
            said.append(file.read().decode())
    done = subprocess.CompletedProcess(process.args, process.returncode, said[0], said[1])
    return done, Usage(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def workers_of(process: subprocess.Popen[bytes]) -> list[int]:
    """The worker processes of a `catalogo serve`: its children that serve (not the helper
    multiprocessing may start beside them)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
            command = (status.parent / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if fields.get("PPid", "").strip() == str(process.pid) and b"serve" in command:
            found.append(int(status.parent.name))
    return found


class Watched:
    """A process's CPU seconds and its peak memory from a moment on: the peak is reset when
    watching starts (clear_refs), so what is read after is what happened since."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        self.rss_mib = self._status("VmRSS")
        self.cpu_s = self._cpu_s()

    def since(self) -> Usage:
        """CPU seconds spent since, and the most memory held since above what it held then."""
        return Usage(self._cpu_s() - self.cpu_s, self._status("VmHWM") - self.rss_mib)

    def _status(self, field: str) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
        raise AssertionError(f"no {field} for {self.pid}")

    def _cpu_s(self) -> float:
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_serving(
    database: str,
    log: Path,
    *args: str,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[str, subprocess.Popen[bytes]]:
    """Starts `catalogo serve` in its own process group and waits until it answers; `env`
    adds settings to the environment it inherits."""
    port = port or free_port()
    env = {**os.environ, **(env or {}), "CATALOGO_DATABASE_URL": database}
    with log.open("ab") as output:
        process = subprocess.Popen(
            [CATALOGO, "serve", "--port", str(port), *args],
            env=env,
            start_new_session=True,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    with http_client(base, timeout=10) as client:
        while True:  # a bounded poll: the server says nothing else when it is ready
            try:
                if client.get("/produtos").status_code == 200:
                    return base, process
            except httpx2.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                stop(process)
                raise RuntimeError(f"catalogo serve did not start:\n{log.read_text()}")
            time.sleep(0.02)


def stop(process: subprocess.Popen[bytes], how: signal.Signals = signal.SIGTERM) -> None:
    """Stops a process and its children: SIGTERM lets the server finish what it has begun."""
    if process.poll() is None:
        os.killpg(process.pid, how)
    process.wait(timeout=30)


@contextmanager
def serving(
    database: str, logs: Path, *args: str, env: Mapping[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    base, process = start_serving(database, logs / "serve.log", *args, env=env)
    try:
        yield base, process
    finally:
        stop(process)


class OwnPostgreSQL:
    """A PostgreSQL server in a temporary folder, on a free loopback port, from the machine's
    own binaries (Debian's `postgresql` package). As root it runs as the `postgres` user,
    since PostgreSQL refuses to run as root."""

    def __init__(self) -> None:
        bindir = _bindir()
        if bindir is None:
            unavailable(
                "PostgreSQL's server programs (initdb, pg_ctl) are not installed: "
                "apt-get install postgresql, to run the tests that stop a database"
            )
        self._bin = bindir
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.folder = Path(tempfile.mkdtemp(prefix="catalogo-postgresql-"))
        if self._as:
            shutil.chown(self.folder, "postgres", "postgres")
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._run("initdb", "-D", "data", "-U", "postgres", "-A", "trust", "-E", "UTF8")
        self.start()

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self._as, str(self._bin / program), *args],
            cwd=self.folder,
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        self._run("pg_ctl", "-D", "data", "-o", options, "-l", "log", "-w", "start")

    def stop(self) -> None:
        """A fast shutdown, as an administrator's: sessions are ended, nothing is lost."""
        self._run("pg_ctl", "-D", "data", "-m", "fast", "-w", "stop")

    def server(self) -> PostgreSQLServer:
        return PostgreSQLServer(self.url)

    def remove(self) -> None:
        subprocess.run(
            [*self._as, str(self._bin / "pg_ctl"), "-D", "data", "-m", "immediate", "stop"],
            cwd=self.folder,
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def _bindir() -> Path | None:
    if shutil.which("pg_config"):
        found = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        if found.returncode == 0 and (Path(found.stdout.strip()) / "initdb").exists():
            return Path(found.stdout.strip())
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).resolve().parent if pg_ctl else None
