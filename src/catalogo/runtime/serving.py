"""How `catalogo serve` runs Granian so that a stop is clean whenever it comes: SIGTERM (to
serve alone, or to its whole process group as systemd sends it) or Ctrl-C ends serve with
status 0, with every connection it took answered and every later one refused.

Granian 2.8.7 alone gets that wrong in three ways:
- Its main process stops from a Python signal handler that sets the threading.Event its main
  thread waits on (server/common.py: signal_handler_interrupt, _serve_loop). A signal that
  comes while the main thread holds that Event's lock deadlocks it on its own lock; the
  threads that watch the workers then block on it too, and serve never ends.
- A worker installs its signal handlers only once it has loaded the app (server/mp.py:
  set_loop_signals). A SIGTERM before that runs the handler inherited from the main process
  and is lost: the worker serves on until it is killed. And a worker that ends on the group's
  SIGTERM before the main process asked it to counts as crashed: serve exits 1.
- Each worker listens on a socket of its own (SO_REUSEPORT) and closes it when it stops,
  resetting the connections the kernel had completed on it and the worker had not taken yet;
  and one it had taken but not read from yet, hyper (its HTTP) closes unanswered.

So here the main process blocks the stop signals in all its threads and waits for them on one
of its own (signal.sigwait); the workers, forked with the same mask, take no signal and stop
when the main process says so, or is gone, whether serving yet or still starting; and all of
them accept on one socket that the main process holds, which hands them a connection only
once its request has begun to arrive, and which it closes to new connections before the
workers stop accepting (Server._drop_shared_socket). All of this is Linux's, and reaches into
Granian's internals (runtime/granian_adjusted.py): on another system, or with a Granian
release it was not tested with (`ADJUSTED_FOR`), serve runs Granian as it is, its flaws
included, and says so (`unadjusted_because`).
"""

import importlib.metadata
import signal
import sys
from typing import Any

from catalogo.domain.errors import CatalogoError

# The Granian releases runtime/granian_adjusted.py was written against and tested with;
# constraints.txt installs the first. Another release may have moved what it replaces.
ADJUSTED_FOR = ("2.8.7",)

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
# On SIGHUP Granian would restart its workers by signalling them, which here take no signal:
# serve has no reload, and leaves SIGHUP blocked.
_BLOCKED = STOP_SIGNALS | {signal.SIGHUP}


class CannotListen(CatalogoError):
    """The address and port serve was given cannot be listened on."""


def hold_stop_signals() -> None:
    """From now on a stop signal waits for `serve` instead of ending the process: call it
    before any thread or process starts, so that they all inherit it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)


def unadjusted_because(version: str | None = None) -> str | None:
    """Why serve runs Granian as it is, in the operator's words, or None when it adjusts it."""
    if sys.platform != "linux":  # the socket's filter and tables are Linux's
        return f"o sistema é {sys.platform}, não Linux"
    version = version or importlib.metadata.version("granian")
    if version not in ADJUSTED_FOR:
        return f"o Granian {version} não é uma versão testada ({', '.join(ADJUSTED_FOR)})"
    return None


def serve(**options: Any) -> None:
    """Runs Granian's server with `options` until a stop signal, or a worker's crash (which
    exits 1); returns once every worker has finished. A stop that came earlier ends it at
    once."""
    if STOP_SIGNALS & signal.sigpending():
        return
    if unadjusted_because() is not None:
        from granian import Granian

        signal.pthread_sigmask(signal.SIG_UNBLOCK, _BLOCKED)
        Granian(factory=True, **options).serve()
        return
    from catalogo.runtime import granian_adjusted

    try:
        granian_adjusted.serve(STOP_SIGNALS, **options)
    except granian_adjusted.BindFailed as error:
        raise CannotListen(f"não consigo escutar em {error.strerror}") from None
