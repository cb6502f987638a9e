"""Settings, read from the environment in this one place and nowhere else.

`Settings.from_env()` is called by the app factory and the CLI, never at import time, so tests
build a `Settings` directly instead of patching the environment.
"""

import ipaddress
import os
import re
import urllib.parse
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from catalogo.domain.errors import CatalogoError
from catalogo.domain.keyring import valid_key

_POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")
# What CATALOGO_ALLOWED_HOSTS may hold: a name (catalogo.example.com), a suffix standing for a
# domain and all its subdomains (.example.com), an address (127.0.0.1, [::1]), or * for any.
_HOST_ENTRY = re.compile(r"\*|\.?[a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\]")


TRASH_DAYS_MAX = 36_500


class SettingsError(CatalogoError, ValueError):
    """A CATALOGO_* variable has a value we cannot use; the message names it."""


@dataclass(frozen=True)
class Settings:
    database_url: str = "sqlite:///./catalogo.db"
    page_size: int = 50
    max_body_bytes: int = 1024 * 1024
    import_max_bytes: int = 20 * 1024 * 1024  # a file sent to /produtos/importacoes
    batch_max: int = 10_000  # products one batch (/produtos/lote) may change
    database_pool_size: int = 10
    lock_timeout_ms: int = 5000
    query_timeout_ms: int = 5000  # a list query running longer is stopped: 422, narrow it
    allowed_hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
    header_timeout_ms: int = 10_000
    body_timeout_ms: int = 10_000
    max_connections: int = 10_000
    access_log: bool = True
    metrics_port: int | None = None  # None: no metrics
    metrics_host: str = "127.0.0.1"
    auth: Literal["off", "writes", "all"] | None = None  # None: off until a user exists
    # While CATALOGO_AUTH is unset and no user exists, how often to ask whether one does now.
    users_recheck_ms: int = 1000
    session_hours: int = 12
    trusted_proxies: tuple[str, ...] = ()
    trash_days: int = 30  # removals older than this are purged by `catalogo removidos limpar`
    # Networks webhook deliveries may reach although not public (webhooks.refused_address).
    webhook_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    # Fernet keys that seal webhook secrets at rest (domain/keyring.py): the first seals, any opens.
    webhook_keys: tuple[str, ...] = field(default=(), repr=False)
    # The shop's zone, an IANA name: every moment shown to people reads in it (time_zone.py).
    time_zone: str = "America/Sao_Paulo"

    def __post_init__(self) -> None:
        sqlite = self.database_url.startswith("sqlite:///")
        if not (self.database_url.startswith(_POSTGRESQL_SCHEMES) or sqlite) or (
            sqlite and ("?" in self.database_url or self.sqlite_path in ("", ":memory:"))
        ):
            raise SettingsError(
                "CATALOGO_DATABASE_URL deve ser como sqlite:///caminho/do/arquivo.db, sem "
                "?opções, ou postgresql://usuario:senha@host:porta/banco (recebido "
                f"{_without_password(self.database_url)!r})"
            )
        if not 1 <= self.page_size <= 500:
            raise SettingsError("CATALOGO_PAGE_SIZE deve estar entre 1 e 500")
        if self.max_body_bytes < 1024:
            raise SettingsError("CATALOGO_MAX_BODY_BYTES deve ser pelo menos 1024")
        if not 1 <= self.batch_max <= 100_000:
            raise SettingsError("CATALOGO_LOTE_MAXIMO deve estar entre 1 e 100000")
        if not 1024 <= self.import_max_bytes <= 1024**3:
            raise SettingsError("CATALOGO_IMPORT_MAX_BYTES deve estar entre 1024 e 1073741824")
        if not 1 <= self.database_pool_size <= 100:
            raise SettingsError("CATALOGO_DATABASE_POOL_SIZE deve estar entre 1 e 100")
        if not 1 <= self.lock_timeout_ms <= 60_000:
            raise SettingsError("CATALOGO_LOCK_TIMEOUT_MS deve estar entre 1 e 60000")
        if not 1 <= self.query_timeout_ms <= 60_000:
            raise SettingsError("CATALOGO_QUERY_TIMEOUT_MS deve estar entre 1 e 60000")
        for variable, value in [
            ("CATALOGO_HEADER_TIMEOUT_MS", self.header_timeout_ms),
            ("CATALOGO_BODY_TIMEOUT_MS", self.body_timeout_ms),
        ]:
            if not 100 <= value <= 600_000:
                raise SettingsError(f"{variable} deve estar entre 100 e 600000")
        if not 0 <= self.users_recheck_ms <= 60_000:
            raise SettingsError("CATALOGO_USERS_RECHECK_MS deve estar entre 0 e 60000")
        if not 100 <= self.max_connections <= 1_000_000:
            raise SettingsError("CATALOGO_MAX_CONNECTIONS deve estar entre 100 e 1000000")
        bad = [h for h in self.allowed_hosts if not _HOST_ENTRY.fullmatch(h)]
        if bad or not self.allowed_hosts:
            raise SettingsError(
                "CATALOGO_ALLOWED_HOSTS deve listar, separados por vírgulas, os nomes que os "
                "clientes usam para este serviço: um nome (catalogo.example.com), um domínio "
                "com seus subdomínios (.example.com), um endereço (127.0.0.1, [::1]) ou * para "
                f"qualquer um (recebido: {', '.join(bad) or 'nenhum'})"
            )
        if self.metrics_port is not None and not 1 <= self.metrics_port <= 65535:
            raise SettingsError(
                "CATALOGO_METRICS_PORT deve ser o número de uma porta, de 1 a 65535 (sem ela: "
                "sem métricas)"
            )
        if self.auth not in (None, "off", "writes", "all"):
            raise SettingsError(
                "CATALOGO_AUTH deve ser off, writes ou all (sem ela: off até que o primeiro "
                "usuário seja criado, writes depois)"
            )
        if not 1 <= self.session_hours <= 24 * 30:
            raise SettingsError("CATALOGO_SESSAO_HORAS deve estar entre 1 e 720")
        if not 0 <= self.trash_days <= TRASH_DAYS_MAX:
            raise SettingsError(f"CATALOGO_REMOVIDOS_DIAS deve estar entre 0 e {TRASH_DAYS_MAX}")
        if not all(valid_key(key) for key in self.webhook_keys):
            raise SettingsError(
                "CATALOGO_WEBHOOKS_CHAVES deve listar chaves Fernet (44 caracteres em base64; "
                "`catalogo webhooks chave` cria uma), separadas por vírgulas"
            )
        if not self.metrics_host:
            raise SettingsError("CATALOGO_METRICS_HOST deve ser um endereço, como 127.0.0.1")
        try:
            zoneinfo.ZoneInfo(self.time_zone)
        except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError):
            raise SettingsError(
                "CATALOGO_FUSO_HORARIO deve ser o nome de um fuso horário, como "
                f"America/Sao_Paulo, America/Manaus ou UTC (recebido: {self.time_zone!r})"
            ) from None

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
            batch_max=_whole_number(environ, "CATALOGO_LOTE_MAXIMO", cls.batch_max),
            import_max_bytes=_whole_number(
                environ, "CATALOGO_IMPORT_MAX_BYTES", cls.import_max_bytes
            ),
            database_pool_size=_whole_number(
                environ, "CATALOGO_DATABASE_POOL_SIZE", cls.database_pool_size
            ),
            lock_timeout_ms=_whole_number(environ, "CATALOGO_LOCK_TIMEOUT_MS", cls.lock_timeout_ms),
            query_timeout_ms=_whole_number(
                environ, "CATALOGO_QUERY_TIMEOUT_MS", cls.query_timeout_ms
            ),
            allowed_hosts=_names(environ, "CATALOGO_ALLOWED_HOSTS", cls.allowed_hosts),
            header_timeout_ms=_whole_number(
                environ, "CATALOGO_HEADER_TIMEOUT_MS", cls.header_timeout_ms
            ),
            body_timeout_ms=_whole_number(environ, "CATALOGO_BODY_TIMEOUT_MS", cls.body_timeout_ms),
            max_connections=_whole_number(environ, "CATALOGO_MAX_CONNECTIONS", cls.max_connections),
            access_log=_on_or_off(environ, "CATALOGO_ACCESS_LOG", cls.access_log),
            metrics_port=_optional_number(environ, "CATALOGO_METRICS_PORT"),
            metrics_host=environ.get("CATALOGO_METRICS_HOST", cls.metrics_host),
            auth=environ.get("CATALOGO_AUTH") or None,  # type: ignore[arg-type]  # checked
            users_recheck_ms=_whole_number(
                environ, "CATALOGO_USERS_RECHECK_MS", cls.users_recheck_ms
            ),
            session_hours=_whole_number(environ, "CATALOGO_SESSAO_HORAS", cls.session_hours),
            trusted_proxies=_names(environ, "CATALOGO_TRUSTED_PROXIES", cls.trusted_proxies),
            trash_days=_whole_number(environ, _renamed(environ, TRASH_DAYS), cls.trash_days),
            webhook_networks=_networks(environ, "CATALOGO_WEBHOOKS_REDES_PERMITIDAS"),
            time_zone=environ.get("CATALOGO_FUSO_HORARIO") or cls.time_zone,
            webhook_keys=tuple(
                key.strip()
                for key in environ.get("CATALOGO_WEBHOOKS_CHAVES", "").split(",")
                if key.strip()
            ),
        )


# A setting's name now, and the name it had before (still read, so no deployment breaks).
TRASH_DAYS = ("CATALOGO_REMOVIDOS_DIAS", "CATALOGO_LIXEIRA_DIAS")


def _renamed(environ: Mapping[str, str], names: tuple[str, str]) -> str:
    """The variable to read: the current name, else the former one; both, with two values,
    is a mistake to point out rather than to settle silently."""
    current, former = names
    if current in environ and former in environ and environ[current] != environ[former]:
        raise SettingsError(f"{current} e {former} (o nome antigo) têm valores diferentes")
    return former if current not in environ and former in environ else current


def _whole_number(environ: Mapping[str, str], variable: str, default: int) -> int:
    try:
        return int(environ.get(variable, default))
    except ValueError:
        raise SettingsError(f"{variable} deve ser um número inteiro") from None


def _names(environ: Mapping[str, str], variable: str, default: tuple[str, ...]) -> tuple[str, ...]:
    if variable not in environ:
        return default
    return tuple(name.strip().lower() for name in environ[variable].split(",") if name.strip())


def _networks(
    environ: Mapping[str, str], variable: str
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Networks in CIDR (`10.0.0.0/8`, `127.0.0.1`, `fd00::/8`), separated by commas."""
    try:
        return tuple(
            ipaddress.ip_network(part.strip(), strict=False)
            for part in environ.get(variable, "").split(",")
            if part.strip()
        )
    except ValueError:
        raise SettingsError(
            f"{variable} deve listar redes separadas por vírgulas, como 10.0.0.0/8,127.0.0.1"
        ) from None


def _optional_number(environ: Mapping[str, str], variable: str) -> int | None:
    """A number that may be left out: unset, or empty as an env file may leave it, is None."""
    value = environ.get(variable, "")
    return _whole_number(environ, variable, 0) if value else None


def _on_or_off(environ: Mapping[str, str], variable: str, default: bool) -> bool:
    value = environ.get(variable, "")
    if value not in ("", "on", "off"):
        raise SettingsError(f"{variable} deve ser on ou off")
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
