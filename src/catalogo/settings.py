"""Settings, read from the environment in this one place and nowhere else.

`Settings.from_env()` is called by the app factory and the CLI, never at import time, so tests
build a `Settings` directly instead of patching the environment.
"""

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass


class SettingsError(ValueError):
    """A CATALOGO_* variable has a value we cannot use; the message names it."""


@dataclass(frozen=True)
class Settings:
    database_url: str = "sqlite:///./catalogo.db"
    page_size: int = 50
    max_body_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        if (
            not self.database_url.startswith("sqlite:///")
            or "?" in self.database_url
            or self.sqlite_path in ("", ":memory:")
        ):
            raise SettingsError(
                "CATALOGO_DATABASE_URL must look like sqlite:///path/to/file.db, with no "
                f"?options (got {self.database_url!r})"
            )
        if not 1 <= self.page_size <= 500:
            raise SettingsError("CATALOGO_PAGE_SIZE must be between 1 and 500")
        if self.max_body_bytes < 1024:
            raise SettingsError("CATALOGO_MAX_BODY_BYTES must be at least 1024")

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
        )


def _whole_number(environ: Mapping[str, str], variable: str, default: int) -> int:
    try:
        return int(environ.get(variable, default))
    except ValueError:
        raise SettingsError(f"{variable} must be a whole number") from None
