"""Log lines as log shippers read them: one JSON object per line, on stderr.

Every line has `time` (UTC, RFC 3339, milliseconds), `level`, `logger` and `message`, then
the fields it carries: a request's id (`request_id`) on each line about a request, and the
traceback under `exception`. Lines of the `catalogo` loggers go through stdlib logging
(`configure`); the access log (http/middleware/outermost.py) builds its lines with `line()` and
writes them with `write()` itself, since a stdlib logging call costs several times a whole line (a
LogRecord, the caller's frame, a lock: docs/operations.md has the figures), once per request.
"""

import logging
import os
import sys
import time
from typing import Any

import orjson

_second = -1
_stamp = ""
_MILLISECONDS = [f".{n:03d}Z" for n in range(1000)]
PIPE_BUF = 4096  # what a pipe writes whole (POSIX: at least 512; Linux 4,096)


def timestamp(moment: float) -> str:
    """`moment` (a time.time()) as RFC 3339 in UTC, to the millisecond; what comes before the
    milliseconds is made once a second, as this runs once per request."""
    global _second, _stamp
    second = int(moment)
    if second != _second:
        _second, _stamp = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
    return _stamp + _MILLISECONDS[int((moment - second) * 1000)]


def line(fields: dict[str, Any]) -> bytes:
    """One log line: the fields as a JSON object, newline included. Control characters are
    escaped, so nothing a client sends can start a line of its own."""
    return orjson.dumps(fields, option=orjson.OPT_APPEND_NEWLINE)


def write(lines: list[bytes]) -> None:
    """Writes lines to stderr (fd 2), as few system calls as keep each line whole: every call
    takes whole lines and at most PIPE_BUF bytes (unless one line is longer), so the lines of
    several worker processes on one pipe never interleave."""
    chunk: list[bytes] = []
    size = 0
    for one in lines:
        if chunk and size + len(one) > PIPE_BUF:
            _write(b"".join(chunk))
            chunk, size = [], 0
        chunk.append(one)
        size += len(one)
    if chunk:
        _write(b"".join(chunk))


def _write(data: bytes) -> None:
    try:
        written = os.write(2, data)
        while written < len(data):
            written += os.write(2, data[written:])
    except OSError:  # stderr closed or broken: the answers were sent all the same, unlogged
        return


def fields(**values: Any) -> dict[str, Any]:
    """What to pass as a logging call's `extra` for these fields to appear in its line."""
    return {"fields": values}


class JSONLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


class _Stderr(logging.Handler):
    """Writes to whatever `sys.stderr` is when a line comes, as logging's own last resort does."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # logging's rule: a line that cannot be written never fails the caller
            self.handleError(record)


_HANDLER = _Stderr()
_HANDLER.setFormatter(JSONLines())


def configure() -> None:
    """Sends the `catalogo` loggers' lines, from INFO up, to stderr as JSON lines. Idempotent:
    the app factory calls it, once per app. Records still propagate, so a root handler that an
    embedding program installs (pytest's caplog too) sees them as well."""
    logger = logging.getLogger("catalogo")
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
    logger.setLevel(logging.INFO)
    # python-multipart warns, in plain text, of every malformed body it then raises about
    # ("No boundary given"); that error is the client's 400 (http/bodies.py), which says why and is
    # in the access log under its request id. Its own errors, if any, come here as JSON.
    multipart = logging.getLogger("python_multipart")
    if _HANDLER not in multipart.handlers:
        multipart.addHandler(_HANDLER)
    multipart.setLevel(logging.ERROR)
