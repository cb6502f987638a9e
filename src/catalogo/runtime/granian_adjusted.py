"""Granian's multiprocess server, adjusted so that a stop is clean whenever it comes
(runtime/serving.py says what Granian 2.8.7 gets wrong and why each part is here). It reaches
into Granian's internals, so runtime/serving.py uses it only with a Granian release it was
tested with (`ADJUSTED_FOR`)."""

import contextlib
import ctypes
import functools
import importlib
import multiprocessing
import signal
import socket
import struct
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from granian import _signals
from granian._granian import SocketHolder, WorkerSignal
from granian.server.mp import MPServer

# How long a stop waits for the workers to take the connections already made: milliseconds,
# as a worker takes one at once and a client sends its request as soon as it has connected.
# Only workers at their connection limit, or a client that connected and sends nothing, take
# longer; what is not taken by then is reset. Short, so that with the workers' own time to
# finish (cli/serve.STOP_TIMEOUT_S) a stop stays under systemd's 30 s.
DRAIN_S = 2


class BindFailed(OSError):
    """The address and port cannot be bound: serving.py says it in the operator's words."""


def serve(stop_signals: set[signal.Signals], **options: Any) -> None:
    """Serves until one of `stop_signals` (blocked in every thread by then) comes."""
    # The workers inherit the socket, the pipe and the signal mask: a fork, as Granian does on
    # Linux up to Python 3.13 (it would start them afresh on 3.14).
    multiprocessing.set_start_method("fork", force=True)
    server = Server(stop_signals, **options)
    threading.Thread(target=server.stop_on_signal, daemon=True).start()
    server.serve(target_loader=server.load_app, wrap_loader=False)


class Server(MPServer):  # Granian's server where Python has a GIL: a process per worker
    def __init__(self, stop_signals: set[signal.Signals], **options: Any) -> None:
        super().__init__(**options)
        self._stop_signals = stop_signals
        self._listener: socket.socket
        # The workers' cue to stop: the main process closes its end (or dies).
        self._cue, self._cue_given = multiprocessing.Pipe(duplex=False)
        self.load_app = functools.partial(_load_app, self._cue, self._cue_given, options["target"])

    def stop_on_signal(self) -> None:
        signal.sigwait(self._stop_signals)
        self.interrupt_signal = True  # as Granian's handler, but on a thread holding no lock
        self.main_loop_interrupt.set()

    def _init_shared_socket(self) -> None:
        """One socket for every worker, made and held here. Bound, not listening: each worker
        listens once it is ready, so until then a connection is refused, as with Granian's."""
        family = socket.AF_INET6 if ":" in self.bind_addr else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # A connection is handed to a worker once its request has begun to arrive, so that a
        # stop finds none that hyper would close unanswered. One that sends nothing is handed
        # over after a second, and then closed by the header timeout as before.
        self._listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 1)
        try:
            self._listener.bind((self.bind_addr, self.bind_port))
        except OSError as error:
            where = f"{self.bind_addr}:{self.bind_port}"
            raise BindFailed(error.errno, f"{where}: {error.strerror}") from None
        self._listener.set_inheritable(True)
        self._sso = None  # what Granian hands its workers on Windows only
        # The stub knows Windows's SocketHolder(fd); Linux's takes these.
        self._shd = SocketHolder(self._listener.fileno(), False, self.backlog)  # type: ignore[call-arg,assignment]

    def _drop_shared_socket(self) -> None:
        """Before the workers are told to stop: the kernel drops every new connection request
        (the client sends it again a second later and, the socket closed by then, is refused),
        the workers take every connection already made, and this process lets go of the
        socket, which closes when the last worker stops accepting."""
        _drop_connection_requests(self._listener)
        deadline = time.monotonic() + DRAIN_S
        while _not_taken(self._listener) and time.monotonic() < deadline:
            if not any(worker.inner.is_alive() for worker in self.wrks):
                break
            time.sleep(0.005)
        self._listener.close()

    def _stop_workers(self) -> None:
        for worker in self.wrks:
            worker.interrupt_by_parent = True  # so its watcher takes its end as asked for
        self._cue_given.close()
        super()._stop_workers()  # type: ignore[no-untyped-call] # waits; kills one late


def _load_app(cue: Connection, cue_given: Connection, target: str) -> Any:
    """Runs in each worker. Granian's would make the worker's stop from SIGTERM and SIGINT
    (_signals.set_loop_signals, which it calls next); this one makes it from the cue. The app is
    the factory `target` names ("module:name", as Granian reads it), made in the worker."""
    cue_given.close()  # the main process's end, copied by the fork: only the original counts
    stop = WorkerSignal()
    _signals.set_loop_signals = lambda loop: stop

    def on_cue() -> None:
        with contextlib.suppress(EOFError):
            cue.recv_bytes()
        stop.set()

    threading.Thread(target=on_cue, daemon=True).start()
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)()


# A classic BPF socket filter: drop a packet that opens a connection (SYN without ACK), keep
# every other. The kernel then starts no new connection on the socket, while those under way
# complete and wait in its queue to be accepted.
_DROP_CONNECTION_REQUESTS = [
    (0x30, 0, 0, 13),  # load the byte of the TCP header that holds the flags
    (0x54, 0, 0, 0x12),  # keep SYN and ACK
    (0x15, 0, 1, 0x02),  # SYN alone: go to the next, else skip it
    (0x06, 0, 0, 0),  # drop
    (0x06, 0, 0, 0xFFFFFFFF),  # keep, whole
]
_SO_ATTACH_FILTER = 26  # Linux's; Python's socket module does not name it


def _drop_connection_requests(listener: socket.socket) -> None:
    program = b"".join(struct.pack("HBBI", *op) for op in _DROP_CONNECTION_REQUESTS)
    instructions = ctypes.create_string_buffer(program)
    fprog = struct.pack("HP", len(_DROP_CONNECTION_REQUESTS), ctypes.addressof(instructions))
    listener.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, fprog)


def _not_taken(listener: socket.socket) -> bool:
    """Whether a connection made is not yet taken by a worker: in the socket's queue (its
    tcpi_unacked, 0 for a socket no worker listens on yet), or still waiting for the first
    bytes of its request (SYN_RECV, 03, in the kernel's tables)."""
    info = listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 32)
    if struct.unpack_from("I", info, 24)[0]:
        return True
    port = f":{listener.getsockname()[1]:04X}"
    table = "/proc/net/tcp6" if listener.family == socket.AF_INET6 else "/proc/net/tcp"
    with open(table) as rows:
        next(rows)  # the heading
        return any(row.split()[1].endswith(port) and row.split()[3] == "03" for row in rows)
