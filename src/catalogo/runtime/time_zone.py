"""The shop's time zone (CATALOGO_FUSO_HORARIO) made the process's own, once, at start: every
moment shown to people (pages, the CSV and xlsx for people, the command line) then reads in it
at no cost per request, as Django does it (TZ set, `time.tzset()`). JSON and the CSV for
programs keep UTC instants, which no zone can misread."""

import functools
import os
import time
import zoneinfo
from importlib import resources
from pathlib import Path

from catalogo.domain import text
from catalogo.runtime.settings import Settings

_current: str | None = None  # until `use`, the process's own zone (TZ, or the system's)


def use(name: str) -> None:
    """From now on this process, and every worker it forks, reads moments in zone `name` (an
    IANA name Settings has checked)."""
    global _current
    if name == _current:
        return
    os.environ["TZ"] = ":" + _zone_file(name)
    time.tzset()
    text.forget_moments()
    _current = name


def current() -> str:
    """The zone moments read in: the one `use` set (Settings' default, where no app or command
    has started yet)."""
    return _current or Settings.time_zone


@functools.cache
def _zone_file(name: str) -> str:
    """The zone's file: the system's (Debian's tzdata) if it has it, else the `tzdata`
    package's, so that a machine without the system's zones still reads the shop's time and
    never falls back silently to UTC, as TZ with an unknown name would."""
    for folder in zoneinfo.TZPATH:
        if (Path(folder) / name).is_file():
            return str(Path(folder) / name)
    packaged = resources.files("tzdata.zoneinfo").joinpath(*name.split("/"))
    return str(packaged)
