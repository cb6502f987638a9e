"""Settings, read from the environment in this one place and nowhere else.

`Settings.from_env()` is called by the app factory and the CLI, never at import time, so tests
build a `Settings` directly instead of patching the environment.
"""

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

_POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


class SettingsError(ValueError):
    """A CATALOGO_* variable has a value we cannot use; the message names it."""


@dataclass(frozen=True)
class Settings:
    database_url: str = "sqlite:///./catalogo.db"
    page_size: int = 50
    max_body_bytes: int = 1024 * 1024
    database_pool_size: int = 10
    lock_timeout_ms: int = 5000
    access_log: bool = True
    metrics_port: int | None = None  # None: no metrics
    metrics_host: str = "127.0.0.1"

    def __post_init__(self) -> None:
        sqlite = self.database_url.startswith("sqlite:///")
        if not (self.database_url.startswith(_POSTGRESQL_SCHEMES) or sqlite) or (
            sqlite and ("?" in self.database_url or self.sqlite_path in ("", ":memory:"))
        ):
            raise SettingsError(
                "CATALOGO_DATABASE_URL must look like sqlite:///path/to/file.db, with no "
                "?options, or postgresql://user:password@host:port/database (got "
                f"{_without_password(self.database_url)!r})"
            )
        if not 1 <= self.page_size <= 500:
            raise SettingsError("CATALOGO_PAGE_SIZE must be between 1 and 500")
        if self.max_body_bytes < 1024:
            raise SettingsError("CATALOGO_MAX_BODY_BYTES must be at least 1024")
        if not 1 <= self.database_pool_size <= 100:
            raise SettingsError("CATALOGO_DATABASE_POOL_SIZE must be between 1 and 100")
        if not 1 <= self.lock_timeout_ms <= 60_000:
            raise SettingsError("CATALOGO_LOCK_TIMEOUT_MS must be between 1 and 60000")
        if self.metrics_port is not None and not 1 <= self.metrics_port <= 65535:
            raise SettingsError(
                "CATALOGO_METRICS_PORT must be a port number, 1 to 65535 (unset: no metrics)"
            )
        if not self.metrics_host:
            raise SettingsError("CATALOGO_METRICS_HOST must be an address, such as 127.0.0.1")

    @property
    def database(self) -> Literal["sqlite", "postgresql"]:
        return "sqlite" if self.database_url.startswith("sqlite:") else "postgresql"

    @property
    def sqlite_path(self) -> str:
        """The file's path, percent-decoded as in any URL: every part of the app opens this."""
        return urllib.parse.unquote(self.database_url.removeprefix("sqlite:///"))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> "Settings":
        return cls(
            database_url=environ.get("CATALOGO_DATABASE_URL", cls.database_url),
            page_size=_whole_number(environ, "CATALOGO_PAGE_SIZE", cls.page_size),
            max_body_bytes=_whole_number(environ, "CATALOGO_MAX_BODY_BYTES", cls.max_body_bytes),
            database_pool_size=_whole_number(
                environ, "CATALOGO_DATABASE_POOL_SIZE", cls.database_pool_size
            ),
            lock_timeout_ms=_whole_number(environ, "CATALOGO_LOCK_TIMEOUT_MS", cls.lock_timeout_ms),
            access_log=_on_or_off(environ, "CATALOGO_ACCESS_LOG", cls.access_log),
            metrics_port=_optional_number(environ, "CATALOGO_METRICS_PORT"),
            metrics_host=environ.get("CATALOGO_METRICS_HOST", cls.metrics_host),
        )


def _whole_number(environ: Mapping[str, str], variable: str, default: int) -> int:
    try:
        return int(environ.get(variable, default))
    except ValueError:
        raise SettingsError(f"{variable} must be a whole number") from None


def _optional_number(environ: Mapping[str, str], variable: str) -> int | None:
    """A number that may be left out: unset, or empty as an env file may leave it, is None."""
    value = environ.get(variable, "")
    return _whole_number(environ, variable, 0) if value else None


def _on_or_off(environ: Mapping[str, str], variable: str, default: bool) -> bool:
    value = environ.get(variable, "")
    if value not in ("", "on", "off"):
        raise SettingsError(f"{variable} must be on or off")
    return default if not value else value == "on"


def _without_password(url: str) -> str:
    """The URL as it may be shown in a message or a log: a password never is."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.password is None:
            return url
    except ValueError:  # not even a URL (an unclosed "[", a bad port): show only its scheme
        return url.partition(":")[0] + ":…"
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))
