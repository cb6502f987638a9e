"""Settings come from CATALOGO_* variables, with defaults that need no set-up at all."""

import pytest

from catalogo.domain.keyring import new_key
from catalogo.runtime.settings import Settings, SettingsError


def test_with_no_variables_the_defaults_are_a_local_sqlite_file() -> None:
    settings = Settings.from_env({})
    assert settings.database_url == "sqlite:///./catalogo.db"
    assert settings.sqlite_path == "./catalogo.db"
    assert settings.page_size == 50
    assert settings.max_body_bytes == 1024 * 1024
    assert settings.database_pool_size == 10
    assert settings.lock_timeout_ms == 5000
    assert settings.allowed_hosts == ("localhost", "127.0.0.1", "[::1]")
    assert (settings.header_timeout_ms, settings.body_timeout_ms) == (10_000, 10_000)
    assert settings.max_connections == 10_000
    assert settings.access_log is True
    assert (settings.metrics_port, settings.metrics_host) == (None, "127.0.0.1")
    assert (settings.auth, settings.session_hours, settings.trusted_proxies) == (None, 12, ())
    assert settings.trash_days == 30


def test_each_variable_is_read() -> None:
    settings = Settings.from_env(
        {
            "CATALOGO_DATABASE_URL": "sqlite:////var/lib/catalogo/c.db",
            "CATALOGO_PAGE_SIZE": "20",
            "CATALOGO_MAX_BODY_BYTES": "4096",
            "CATALOGO_DATABASE_POOL_SIZE": "4",
            "CATALOGO_LOCK_TIMEOUT_MS": "250",
            "CATALOGO_ALLOWED_HOSTS": " Catalogo.Example.com, .loja.example ,",
            "CATALOGO_HEADER_TIMEOUT_MS": "5000",
            "CATALOGO_BODY_TIMEOUT_MS": "20000",
            "CATALOGO_MAX_CONNECTIONS": "2000",
            "CATALOGO_ACCESS_LOG": "off",
            "CATALOGO_METRICS_PORT": "9100",
            "CATALOGO_METRICS_HOST": "192.0.2.10",
            "CATALOGO_AUTH": "all",
            "CATALOGO_SESSAO_HORAS": "8",
            "CATALOGO_REMOVIDOS_DIAS": "0",
            "CATALOGO_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.2",
            "CATALOGO_USERS_RECHECK_MS": "0",
        }
    )
    assert settings.sqlite_path == "/var/lib/catalogo/c.db"
    assert (settings.page_size, settings.max_body_bytes) == (20, 4096)
    assert (settings.database_pool_size, settings.lock_timeout_ms) == (4, 250)
    assert settings.allowed_hosts == ("catalogo.example.com", ".loja.example")
    assert (settings.header_timeout_ms, settings.body_timeout_ms) == (5000, 20_000)
    assert settings.max_connections == 2000
    assert settings.access_log is False
    assert (settings.metrics_port, settings.metrics_host) == (9100, "192.0.2.10")
    assert (settings.auth, settings.session_hours) == ("all", 8)
    assert settings.trash_days == 0
    assert settings.trusted_proxies == ("127.0.0.1", "10.0.0.2")
    assert settings.users_recheck_ms == 0


def test_an_empty_auth_as_an_env_file_may_leave_it_means_unset() -> None:
    assert Settings.from_env({"CATALOGO_AUTH": ""}).auth is None


@pytest.mark.parametrize(("value", "on"), [("on", True), ("off", False), ("", True)])
def test_the_access_log_is_on_unless_turned_off(value: str, on: bool) -> None:
    assert Settings.from_env({"CATALOGO_ACCESS_LOG": value}).access_log is on


def test_an_empty_metrics_port_as_an_env_file_may_leave_it_means_no_metrics() -> None:
    assert Settings.from_env({"CATALOGO_METRICS_PORT": ""}).metrics_port is None


@pytest.mark.parametrize(
    "url", ["postgresql://catalogo:s3nha@db.example:5432/loja", "postgres://localhost/loja"]
)
def test_a_postgresql_url_chooses_postgresql(url: str) -> None:
    settings = Settings.from_env({"CATALOGO_DATABASE_URL": url})
    assert (settings.database, settings.database_url) == ("postgresql", url)


def test_a_refused_url_is_shown_without_its_password() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"CATALOGO_DATABASE_URL": "mysql://loja:s3nha@db/loja"})
    assert "mysql://loja:***@db/loja" in str(refused.value)
    assert "s3nha" not in str(refused.value)


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"CATALOGO_DATABASE_URL": "mysql://x"}, "CATALOGO_DATABASE_URL"),
        ({"CATALOGO_DATABASE_URL": "sqlite:///:memory:"}, "CATALOGO_DATABASE_URL"),
        ({"CATALOGO_DATABASE_URL": "sqlite:///"}, "CATALOGO_DATABASE_URL"),
        ({"CATALOGO_PAGE_SIZE": "many"}, "CATALOGO_PAGE_SIZE"),
        ({"CATALOGO_PAGE_SIZE": "0"}, "CATALOGO_PAGE_SIZE"),
        ({"CATALOGO_MAX_BODY_BYTES": "10"}, "CATALOGO_MAX_BODY_BYTES"),
        ({"CATALOGO_DATABASE_POOL_SIZE": "0"}, "CATALOGO_DATABASE_POOL_SIZE"),
        ({"CATALOGO_DATABASE_POOL_SIZE": "many"}, "CATALOGO_DATABASE_POOL_SIZE"),
        ({"CATALOGO_DATABASE_URL": "postgresql:/x"}, "CATALOGO_DATABASE_URL"),
        ({"CATALOGO_LOCK_TIMEOUT_MS": "0"}, "CATALOGO_LOCK_TIMEOUT_MS"),
        ({"CATALOGO_LOCK_TIMEOUT_MS": "60001"}, "CATALOGO_LOCK_TIMEOUT_MS"),
        ({"CATALOGO_LOCK_TIMEOUT_MS": "5s"}, "CATALOGO_LOCK_TIMEOUT_MS"),
        ({"CATALOGO_ALLOWED_HOSTS": ""}, "CATALOGO_ALLOWED_HOSTS"),
        ({"CATALOGO_ALLOWED_HOSTS": " , "}, "CATALOGO_ALLOWED_HOSTS"),
        ({"CATALOGO_ALLOWED_HOSTS": "http://loja.example"}, "CATALOGO_ALLOWED_HOSTS"),
        ({"CATALOGO_ALLOWED_HOSTS": "loja.example:8000"}, "CATALOGO_ALLOWED_HOSTS"),
        ({"CATALOGO_ALLOWED_HOSTS": "*.loja.example"}, "CATALOGO_ALLOWED_HOSTS"),
        ({"CATALOGO_ALLOWED_HOSTS": "::1"}, "CATALOGO_ALLOWED_HOSTS"),
        ({"CATALOGO_HEADER_TIMEOUT_MS": "99"}, "CATALOGO_HEADER_TIMEOUT_MS"),
        ({"CATALOGO_BODY_TIMEOUT_MS": "600001"}, "CATALOGO_BODY_TIMEOUT_MS"),
        ({"CATALOGO_BODY_TIMEOUT_MS": "10s"}, "CATALOGO_BODY_TIMEOUT_MS"),
        ({"CATALOGO_MAX_CONNECTIONS": "99"}, "CATALOGO_MAX_CONNECTIONS"),
        ({"CATALOGO_ACCESS_LOG": "yes"}, "CATALOGO_ACCESS_LOG"),
        ({"CATALOGO_ACCESS_LOG": "ON"}, "CATALOGO_ACCESS_LOG"),
        ({"CATALOGO_METRICS_PORT": "0"}, "CATALOGO_METRICS_PORT"),
        ({"CATALOGO_METRICS_PORT": "65536"}, "CATALOGO_METRICS_PORT"),
        ({"CATALOGO_METRICS_PORT": "-1"}, "CATALOGO_METRICS_PORT"),
        ({"CATALOGO_METRICS_PORT": "metrics"}, "CATALOGO_METRICS_PORT"),
        ({"CATALOGO_METRICS_PORT": "9100", "CATALOGO_METRICS_HOST": ""}, "CATALOGO_METRICS_HOST"),
        ({"CATALOGO_AUTH": "on"}, "CATALOGO_AUTH"),
        ({"CATALOGO_AUTH": "OFF"}, "CATALOGO_AUTH"),
        ({"CATALOGO_USERS_RECHECK_MS": "60001"}, "CATALOGO_USERS_RECHECK_MS"),
        ({"CATALOGO_USERS_RECHECK_MS": "1s"}, "CATALOGO_USERS_RECHECK_MS"),
        ({"CATALOGO_SESSAO_HORAS": "0"}, "CATALOGO_SESSAO_HORAS"),
        ({"CATALOGO_SESSAO_HORAS": "721"}, "CATALOGO_SESSAO_HORAS"),
        ({"CATALOGO_SESSAO_HORAS": "12h"}, "CATALOGO_SESSAO_HORAS"),
        ({"CATALOGO_REMOVIDOS_DIAS": "-1"}, "CATALOGO_REMOVIDOS_DIAS"),
        ({"CATALOGO_REMOVIDOS_DIAS": "36501"}, "CATALOGO_REMOVIDOS_DIAS"),
        ({"CATALOGO_REMOVIDOS_DIAS": "30d"}, "CATALOGO_REMOVIDOS_DIAS"),
        ({"CATALOGO_LIXEIRA_DIAS": "30d"}, "CATALOGO_LIXEIRA_DIAS"),
        ({"CATALOGO_REMOVIDOS_DIAS": "7", "CATALOGO_LIXEIRA_DIAS": "30"}, "CATALOGO_LIXEIRA_DIAS"),
    ],
)
def test_a_value_we_cannot_use_is_refused_naming_the_variable(
    environ: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(environ)


def test_the_path_is_percent_decoded_once_for_every_part_of_the_app() -> None:
    settings = Settings.from_env({"CATALOGO_DATABASE_URL": "sqlite:////srv/a%20b/c.db"})
    assert settings.sqlite_path == "/srv/a b/c.db"


def test_url_options_are_refused_rather_than_silently_dropped() -> None:
    with pytest.raises(SettingsError, match="sem \\?opções"):
        Settings.from_env({"CATALOGO_DATABASE_URL": "sqlite:///c.db?mode=ro"})


def test_webhook_keys_are_read_in_order_checked_and_never_shown() -> None:
    first, second = new_key(), new_key()
    settings = Settings.from_env({"CATALOGO_WEBHOOKS_CHAVES": f" {first}, {second} ,"})
    assert settings.webhook_keys == (first, second)
    assert first not in repr(settings) and second not in repr(settings)
    with pytest.raises(SettingsError, match="CATALOGO_WEBHOOKS_CHAVES deve listar chaves Fernet"):
        Settings.from_env({"CATALOGO_WEBHOOKS_CHAVES": f"{first},senha123"})
