"""Who may do what, over HTTP to the real app and a real database: the modes, sessions, tokens
and roles (http/access.py), on SQLite and PostgreSQL."""

import contextlib
import dataclasses
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import httpx2
import pytest
from starlette.testclient import TestClient

from catalogo.domain import contas
from catalogo.domain.senhas import Busy, Passwords
from catalogo.http import access
from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import (
    JSON,
    SENHA,
    Stored,
    add_token,
    add_user,
    all_at_once,
    bearer,
    create_via_form,
    eventually,
    form_on,
    post_form,
    sign_in,
    stored,
    stored_names,
)
from tests.processes import catalogo, http_client, serving

PRODUTO = {"nome": "Caneca", "preco": "10,00"}


def client_for(
    settings: Settings,
    auth: Literal["off", "writes", "all"] | None = None,
    trusted_proxies: tuple[str, ...] = (),
) -> TestClient:
    app = create_app(dataclasses.replace(settings, auth=auth, trusted_proxies=trusted_proxies))
    return TestClient(app, follow_redirects=False)


def sent_to_sign_in(response: httpx2.Response) -> bool:
    """A browser's form write refused for want of a session: the sign-in page, keeping it."""
    return response.status_code == 401 and 'name="pendente"' in response.text


@pytest.fixture
def all_mode(settings: Settings) -> Iterator[TestClient]:
    with client_for(settings, auth="all") as client:
        yield client


class TestAFreshInstall:
    def test_lets_anyone_write_as_the_spec_says_and_shows_no_sign_in(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        page = client.get(f"/produtos/{id}")
        listing = client.get("/produtos")
        for response in (page, listing):
            assert "Entrar" not in response.text and 'class="conta"' not in response.text
            assert response.headers["vary"] == "Accept"
            assert "private" not in response.headers["cache-control"]
            assert "sessao" not in response.headers.get("set-cookie", "")
        assert client.post(f"/produtos/{id}", data={"_method": "DELETE"}).status_code == 303
        assert stored_names(db) == []

    def test_a_stray_token_or_cookie_changes_nothing_but_a_bad_token_is_refused(
        self, client: TestClient
    ) -> None:
        client.cookies.set("sessao", "x" * 43)
        assert client.get("/produtos").status_code == 200
        assert post_form(client).status_code == 303
        refused = client.get("/produtos", headers=bearer("cat_" + "x" * 43))
        assert refused.status_code == 401
        assert (
            refused.headers["www-authenticate"] == 'Bearer realm="catalogo", error="invalid_token"'
        )


class TestOnceAUserExists:
    def test_anonymous_reads_go_on_and_writes_are_refused_by_kind_of_client(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)  # before any request: a worker looks for users once a second
        db.insert("Caneta", 250)
        (id,) = db.execute("SELECT max(id) FROM produtos").fetchone()
        assert client.get("/produtos").status_code == 200
        assert client.get(f"/produtos/{id}", headers=JSON).status_code == 200
        browser = client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        assert browser.status_code == 401  # the sign-in page, which keeps the removal
        assert form_on(browser.text, "/entrar") == {
            "proximo": "/produtos/1",
            "pendente": "_method=DELETE",
            "nome": "",
            "senha": "",
        }
        program = client.post("/produtos", json=PRODUTO, headers=JSON)
        assert program.status_code == 401
        assert program.headers["www-authenticate"] == 'Bearer realm="catalogo"'
        assert program.json()["detail"].startswith("Esta ação exige um token")
        assert stored_names(db) == ["Caneta"]

    def test_pages_offer_sign_in_and_hide_the_buttons_that_would_be_refused(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        db.insert("Caneta", 250)
        (id,) = db.execute("SELECT max(id) FROM produtos").fetchone()
        listing = client.get("/produtos?depois=9")
        assert '<a href="/entrar?proximo=/produtos%3Fdepois%3D9">Entrar</a>' in listing.text
        assert listing.headers["vary"] == "Accept, Cookie"
        page = client.get(f"/produtos/{id}").text
        assert "Novo produto" not in client.get("/produtos").text
        assert "Remover" not in page and "Salvar" not in page and "readonly" in page

    def test_the_pages_that_only_write_send_a_browser_to_sign_in_first(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)  # before any request: a worker looks for users once a second
        db.insert("Caneta", 250)
        (id,) = db.execute("SELECT max(id) FROM produtos").fetchone()
        novo = client.get("/produtos/novo?lista=depois%3D5")
        assert novo.status_code == 303
        assert (
            novo.headers["location"] == "/entrar?proximo=%2Fprodutos%2Fnovo%3Flista%3Ddepois%253D5"
        )
        assert client.get(f"/produtos/{id}").status_code == 200  # the edit page is a read

    def test_the_first_user_is_noticed_within_a_second_without_a_restart(
        self, client: TestClient, database: str
    ) -> None:
        assert post_form(client).status_code == 303
        add_user(database)
        eventually(lambda: sent_to_sign_in(post_form(client)), 5)

    def test_catalogo_auth_off_keeps_the_catalog_open_on_purpose(
        self, settings: Settings, database: str, db: Database
    ) -> None:
        add_user(database)
        with client_for(settings, auth="off") as client:
            assert post_form(client).status_code == 303
            assert "Entrar" not in client.get("/produtos").text
        assert stored_names(db) == ["Caneta"]


class TestSessions:
    def test_signing_in_lets_a_browser_write_and_shows_who_it_is(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        signed_in = sign_in(client, "Maria", proximo="/produtos/novo")
        assert signed_in.status_code == 303
        assert signed_in.headers["location"] == "/produtos/novo"
        cookie = signed_in.headers["set-cookie"]
        assert cookie.startswith("sessao=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
        assert "Max-Age=43200" in cookie and "Secure" not in cookie
        assert client.get("/produtos/novo").status_code == 200
        id = create_via_form(client, db)
        page = client.get(f"/produtos/{id}")
        assert 'maria <span class="papel">(editor)</span></a>' in page.text
        assert page.headers["cache-control"] == "private, no-store"
        assert page.headers["vary"] == "Accept, Cookie"

    def test_the_session_lives_in_the_database_hashed_and_ends_at_sign_out(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        secret = sign_in(client).cookies["sessao"]
        (stored,) = db.execute("SELECT secret_hash FROM sessions").fetchall()
        assert secret not in stored[0] and len(stored[0]) == 64
        out = client.post("/sair")
        assert out.status_code == 303 and out.headers["location"] == "/entrar"
        assert "Max-Age=0" in out.headers["set-cookie"]
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
        client.cookies.set("sessao", secret)  # the old cookie, kept by an attacker
        assert sent_to_sign_in(post_form(client))

    def test_signing_in_again_makes_a_new_session_and_ends_the_one_sent(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        first = sign_in(client).cookies["sessao"]
        second = sign_in(client).cookies["sessao"]
        assert first != second
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1

    def test_the_session_cookie_is_found_among_others_and_only_under_its_own_name(
        self, client: TestClient, database: str
    ) -> None:
        add_user(database, "maria", "editor")
        secret = sign_in(client).cookies["sessao"]
        client.cookies.clear()
        for cookie, signed_in in (
            (f"tema=escuro; sessao={secret}; idioma=pt", True),
            (f"sessao={secret};outro=1", True),
            (f"sessao=velha; sessao={secret}", True),  # the last, as a parser keeps it
            (f"xsessao={secret}", False),
            (f"__Host-sessao={secret}", False),  # that name is for HTTPS only
            (f"tema=sessao={secret}", False),
        ):
            page = client.get("/produtos", headers={"cookie": cookie})
            assert ("maria <span" in page.text) is signed_in, cookie

    def test_a_cookie_header_seen_before_is_read_as_it_was_and_checked_again(
        self, client: TestClient, database: str
    ) -> None:
        """The secret found in a Cookie header is kept by the header (access._kept): however
        long the header, however many there were, it reads the same, and the session it names
        is asked after every time."""
        add_user(database, "maria", "editor")
        secret = sign_in(client).cookies["sessao"]
        client.cookies.clear()
        long = f"tema={'x' * access.KEPT_HEADER_BYTES}; sessao={secret}"
        many = [f"n={n}; sessao={secret}" for n in range(access.KEPT_CREDENTIALS + 5)]
        for cookie in [long, *many, long, many[0], f"sessao=velha; n=0; sessao={secret}"]:
            page = client.get("/produtos/novo", headers={"cookie": cookie})
            assert "maria <span" in page.text, cookie[:40]
        assert client.post("/sair", headers={"cookie": many[-1]}).status_code == 303
        for cookie in (long, many[0], many[-1]):
            page = client.get("/produtos", headers={"cookie": cookie})
            assert "maria <span" not in page.text and "Entrar" in page.text

    def test_an_expired_session_or_a_deactivated_user_signs_no_one_in(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        sign_in(client)
        db.execute("UPDATE sessions SET expires_at = ?", (time.time() - 1,))
        assert sent_to_sign_in(post_form(client))
        sign_in(client)
        db.execute("UPDATE usuarios SET ativo = ?", (False,))
        assert sent_to_sign_in(post_form(client))

    def test_over_https_the_cookie_is_secure_and_pinned_to_the_host(
        self, settings: Settings, database: str
    ) -> None:
        add_user(database)
        with client_for(settings) as client:
            client.base_url = "https://testserver"
            cookie = sign_in(client).headers["set-cookie"]
            assert cookie.startswith("__Host-sessao=") and "; Secure" in cookie
            assert post_form(client).status_code == 303

    def test_behind_a_trusted_balancer_its_forwarded_address_and_scheme_count(
        self, settings: Settings, database: str, db: Database
    ) -> None:
        add_user(database)
        forwarded = {"x-forwarded-for": "203.0.113.9, 198.51.100.7", "x-forwarded-proto": "https"}
        with client_for(settings) as client:  # the peer is no balancer: both are ignored
            cookie = client.post(
                "/entrar", data={"nome": "maria", "senha": SENHA}, headers=forwarded
            ).headers["set-cookie"]
            assert cookie.startswith("sessao=") and "Secure" not in cookie
        with client_for(settings, trusted_proxies=("testclient",)) as client:
            cookie = client.post(
                "/entrar", data={"nome": "maria", "senha": SENHA}, headers=forwarded
            ).headers["set-cookie"]
            assert cookie.startswith("__Host-sessao=") and "; Secure" in cookie
        addresses = db.execute("SELECT address FROM sessions ORDER BY id").fetchall()
        assert [a for (a,) in addresses] == ["testclient", "198.51.100.7"]


class TestSigningIn:
    def test_a_wrong_password_and_an_unknown_name_get_the_same_answer(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        wrong = sign_in(client, senha="outra senha qualquer")
        unknown = sign_in(client, nome="joana")
        assert wrong.status_code == unknown.status_code == 422
        assert (
            "Nome ou senha incorretos." in wrong.text
            and "Nome ou senha incorretos." in unknown.text
        )
        assert "set-cookie" not in wrong.headers
        assert db.execute("SELECT count(*) FROM login_attempts WHERE NOT ok").fetchone()[0] == 2

    def test_an_empty_field_is_named_and_costs_no_password_check(
        self, client: TestClient, db: Database
    ) -> None:
        response = client.post("/entrar", data={"nome": "maria"})
        assert response.status_code == 422
        assert "Informe o nome de usuário e a senha." in response.text
        assert db.execute("SELECT count(*) FROM login_attempts").fetchone()[0] == 0

    @pytest.mark.parametrize(
        "proximo",
        [
            "//evil.example",
            "/\\evil.example",
            "https://evil.example",
            "javascript:alert(1)",
            "evil",
            "/\x00",
            "/" + "a" * 3000,
            "/€",
            "/é",
            "/a b",
        ],
    )
    def test_proximo_never_leads_off_the_site(
        self, client: TestClient, database: str, proximo: str
    ) -> None:
        add_user(database)
        assert sign_in(client, proximo=proximo).headers["location"] == "/produtos"
        form = client.get("/entrar", params={"proximo": proximo}).text
        assert '<input type="hidden" name="proximo" value="/produtos">' in form

    def test_another_site_cannot_post_the_sign_in_form(
        self, client: TestClient, database: str
    ) -> None:
        add_user(database)
        response = client.post(
            "/entrar",
            data={"nome": "maria", "senha": SENHA},
            headers={"sec-fetch-site": "cross-site"},
        )
        assert response.status_code == 403

    def test_failures_from_one_address_are_throttled_with_retry_after(
        self, client: TestClient, database: str
    ) -> None:
        add_user(database)
        for _ in range(5):
            assert sign_in(client, senha="errada errada errada").status_code == 422
        refused = sign_in(client)
        assert refused.status_code == 429
        assert 800 < int(refused.headers["retry-after"]) <= 901
        assert "set-cookie" not in refused.headers

    @pytest.mark.parametrize("servers", [1, 2], ids=["two workers", "two instances"])
    def test_a_burst_of_wrong_passwords_gets_exactly_the_limit_checked_and_the_rest_429(
        self, database: str, tmp_path: Path, servers: int
    ) -> None:
        """Thirty at once for one name from one address, to real servers: each attempt counts
        before its password is checked, whichever worker or instance takes it."""
        created = catalogo(
            database,
            "usuarios",
            "criar",
            "maria",
            "--papel",
            "editor",
            "--senha-stdin",
            input=SENHA,
        )
        assert created.returncode == 0, created.stderr
        workers = ("--workers", "2") if servers == 1 else ()
        with contextlib.ExitStack() as running:
            bases = []
            for n in range(servers):
                (logs := tmp_path / f"serve{n}").mkdir()
                bases.append(running.enter_context(serving(database, logs, *workers))[0])

            def attempt(n: int, start: Callable[[], None]) -> tuple[int, str]:
                with http_client(bases[n % servers], timeout=30) as client:
                    start()
                    answer = sign_in(client, senha="errada errada errada")
                    return answer.status_code, answer.headers.get("retry-after", "")

            answers = all_at_once(30, attempt)
        limit = contas.MAX_FAILURES_PAIR
        assert Counter(status for status, _ in answers) == {422: limit, 429: 30 - limit}
        assert all(800 < int(wait) <= 901 for status, wait in answers if status == 429)

    def test_a_sign_in_turned_away_for_a_crowd_counts_for_nothing(
        self, settings: Settings, database: str, db: Database
    ) -> None:
        class Crowded(Passwords):
            async def verify(self, stored: str | None, senha: str) -> bool:
                raise Busy()

        add_user(database)
        app = create_app(settings)
        with TestClient(app, follow_redirects=False) as client:
            real = app.shared
            app.shared = dataclasses.replace(real, passwords=Crowded())
            for _ in range(contas.MAX_FAILURES_PAIR + 1):
                assert sign_in(client).status_code == 503
            app.shared = real
            assert db.execute("SELECT count(*) FROM login_attempts").fetchone()[0] == 0
            assert sign_in(client).status_code == 303

    def test_a_stranger_failing_everywhere_cannot_lock_out_an_address_that_signed_in_before(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        assert sign_in(client).status_code == 303  # testclient's address is now known
        now = time.time()
        for n in range(60):
            db.execute(
                "INSERT INTO login_attempts (nome, address, at, ok) VALUES (?, ?, ?, ?)",
                ("maria", f"203.0.113.{n}", now - 10, False),
            )
        assert sign_in(client).status_code == 303
        db.execute("DELETE FROM login_attempts WHERE ok")
        assert sign_in(client).status_code == 429  # an address never seen is slowed down

    def test_failures_older_than_the_window_count_for_nothing(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        for _ in range(40):
            db.execute(
                "INSERT INTO login_attempts (nome, address, at, ok) VALUES (?, ?, ?, ?)",
                ("maria", "testclient", time.time() - 16 * 60, False),
            )
        assert sign_in(client).status_code == 303

    def test_a_hash_made_with_older_parameters_is_made_again_at_sign_in(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        import argon2

        add_user(database)
        old = argon2.PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(SENHA)
        db.execute("UPDATE usuarios SET password_hash = ?", (old,))
        assert sign_in(client).status_code == 303
        (now,) = db.execute("SELECT password_hash FROM usuarios").fetchone()
        assert now != old and "m=19456,t=2,p=1" in now
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1


class TestNothingTypedIsLost:
    """A person whose session ended while they typed loses nothing: the sign-in page keeps
    what they sent (never in a URL), and signing in sends it."""

    def edit_after_the_session_ended(
        self, client: TestClient, database: str, db: Database, **typed: str
    ) -> tuple[int, dict[str, str]]:
        add_user(database, "maria", "editor")
        sign_in(client, "maria")
        id = create_via_form(client, db, "Caneca", "10")
        form = form_on(client.get(f"/produtos/{id}").text, f"/produtos/{id}")
        db.execute("UPDATE sessions SET expires_at = 0")
        sent = client.post(f"/produtos/{id}", data={**form, **typed})
        assert sent.status_code == 401 and sent.headers["cache-control"] == "no-store"
        assert "location" not in sent.headers
        assert "Sua sessão terminou; entre de novo para salvar." in sent.text
        return id, form_on(sent.text, "/entrar")

    def test_signing_in_again_saves_the_edit(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        id, page = self.edit_after_the_session_ended(
            client, database, db, **{"produto.nome": "Caneca azul", "produto.descricao": "a\nb"}
        )
        assert stored(db, id) == Stored("Caneca", "", 1000, 1)
        saved = client.post("/entrar", data={**page, "nome": "maria", "senha": SENHA})
        assert saved.status_code == 303 and saved.headers["location"] == "/produtos"
        assert "Caneca azul" not in saved.headers["location"]
        assert stored(db, id) == Stored("Caneca azul", "a\nb", 1000, 2)
        (quem,) = db.execute("SELECT quem FROM eventos WHERE versao = 2").fetchone()
        assert quem == "maria"
        assert "Produto «Caneca azul» atualizado." in client.get("/produtos").text

    def test_a_wrong_password_keeps_the_edit_for_the_next_try(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        id, page = self.edit_after_the_session_ended(
            client, database, db, **{"produto.nome": "Caneca azul"}
        )
        wrong = client.post("/entrar", data={**page, "nome": "maria", "senha": "errada"})
        assert wrong.status_code == 422
        again = form_on(wrong.text, "/entrar")
        assert again["pendente"] == page["pendente"]
        assert "continua guardado" in wrong.text
        client.post("/entrar", data={**again, "nome": "maria", "senha": SENHA})
        assert stored(db, id) == Stored("Caneca azul", "", 1000, 2)

    def test_an_edit_the_product_moved_on_from_meanwhile_is_merged(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        id, page = self.edit_after_the_session_ended(
            client, database, db, **{"produto.nome": "Caneca azul"}
        )
        db.execute(f"UPDATE produtos SET descricao = 'Da Ana', versao = 2 WHERE id = {id}")
        client.post("/entrar", data={**page, "nome": "maria", "senha": SENHA})
        assert stored(db, id) == Stored("Caneca azul", "Da Ana", 1000, 3)

    def test_a_removal_is_made_once_signed_in(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        sign_in(client, "maria")
        id = create_via_form(client, db)
        db.execute("UPDATE sessions SET expires_at = 0")
        refused = client.post(f"/produtos/{id}", data={"_method": "DELETE", "produto.versao": "1"})
        assert "entre de novo para remover" in refused.text
        page = form_on(refused.text, "/entrar")
        removed = client.post("/entrar", data={**page, "nome": "maria", "senha": SENHA})
        assert removed.status_code == 303 and stored(db, id) is None

    def test_a_user_who_may_not_write_is_refused_once_signed_in(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "ana", "leitor")
        db.insert("Caneta", 250)
        refused = client.post("/produtos/1", data={"_method": "PUT", "produto.nome": "x"})
        page = form_on(refused.text, "/entrar")
        answer = client.post("/entrar", data={**page, "nome": "ana", "senha": SENHA})
        assert answer.status_code == 403 and "Seu papel (leitor)" in answer.text
        assert stored_names(db) == ["Caneta"]


class TestAKeptWriteAsAnAttackerSendsIt:
    """`pendente` is only a form body sent as the person who signs in: every check a write
    gets still applies, and it never leads anywhere a browser's own form could not."""

    def signed_in_with(
        self, client: TestClient, database: str, pendente: str, proximo: str = "/produtos"
    ) -> httpx2.Response:
        add_user(database, "maria", "editor")
        data = {"nome": "maria", "senha": SENHA, "proximo": proximo, "pendente": pendente}
        return client.post("/entrar", data=data)

    def test_a_malformed_one_is_the_write_s_400_and_changes_nothing(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        answer = self.signed_in_with(client, database, "produto.nome=%FF&produto.preco=1")
        assert answer.status_code == 400 and stored_names(db) == []
        assert "sessao=" in answer.headers["set-cookie"]  # signed in all the same

    def test_one_over_the_body_limit_is_413_before_anyone_signs_in(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        answer = self.signed_in_with(client, database, "x=" + "a" * (1024 * 1024))
        assert answer.status_code == 413 and "set-cookie" not in answer.headers
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0

    def test_a_sign_in_kept_inside_one_is_not_sent_again(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        inner = urllib.parse.urlencode(
            {"nome": "maria", "senha": SENHA, "proximo": "/produtos", "pendente": "x=1"}
        )
        answer = self.signed_in_with(client, database, inner, proximo="/entrar")
        assert answer.status_code == 303 and answer.headers["location"] == "/produtos"
        assert stored_names(db) == []  # the inner x=1 would have been a 422, not a 303

    def test_it_goes_only_to_a_path_of_this_site_and_keeps_its_query(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        pendente = "produto.nome=Caneca&produto.preco=3"
        away = self.signed_in_with(client, database, pendente, proximo="//outro.site/produtos")
        assert away.status_code == 303 and away.headers["location"] == "/produtos"
        assert stored_names(db) == ["Caneca"]  # to /produtos, where local_path sends it
        kept = client.post(
            "/entrar",
            data={
                "nome": "maria",
                "senha": SENHA,
                "proximo": "/produtos?lista=q%3Dx",
                "pendente": pendente,
            },
        )
        assert kept.status_code == 303 and stored_names(db) == ["Caneca", "Caneca"]


class TestTheWayToSignIn:
    """Every page tells a visitor what they may do, and how to do more."""

    @pytest.mark.parametrize(
        ("proximo", "why"),
        [
            ("/produtos/novo", "Entre para adicionar produtos."),
            ("/produtos/3/historico", "Entre para ver o histórico do produto."),
            ("/produtos/removidos?depois=3", "Entre para ver os produtos removidos."),
            ("/usuarios", "Entre como admin para ver esta página."),
        ],
    )
    def test_the_sign_in_page_says_why_it_is_shown(
        self, client: TestClient, database: str, proximo: str, why: str
    ) -> None:
        add_user(database)
        page = client.get("/entrar", params={"proximo": proximo})
        assert why in page.text
        assert form_on(page.text, "/entrar")["proximo"] == proximo
        assert "Entre para" not in client.get("/entrar").text

    def test_a_session_that_ended_is_named_on_the_page_and_at_sign_in(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        db.insert("Caneta", 250)
        sign_in(client, "maria")
        db.execute("UPDATE sessions SET expires_at = 0")
        page = client.get("/produtos/1")
        assert "Sua sessão terminou." in page.text and "Salvar" not in page.text
        sent_back = client.get("/produtos/1/historico")
        assert sent_back.headers["location"].endswith("&motivo=sessao")
        again = client.get(sent_back.headers["location"])
        assert "Sua sessão terminou; entre de novo para continuar." in again.text

    def test_a_visitor_is_told_to_sign_in_to_edit_and_shown_no_link_that_would_bounce(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database)
        db.insert("Caneta", 250)
        for path in ("/produtos/1", "/produtos"):
            page = client.get(path).text
            assert "para adicionar, alterar ou remover produtos" in page
            assert f'<a href="/entrar?proximo={path}">Entre</a>' in page
            assert "/historico" not in page and "/produtos/removidos" not in page

    def test_a_reader_is_told_what_the_role_allows(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "ana", "leitor")
        db.insert("Caneta", 250)
        sign_in(client, "ana")
        page = client.get("/produtos/1").text
        assert "Seu papel (leitor) permite ver o catálogo, não alterá-lo" in page
        assert 'href="/produtos/1/historico"' in page


class TestTokens:
    def test_an_editor_token_writes_and_a_reader_token_only_reads(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        maria = add_user(database, "maria", "editor")
        editor = add_token(database, maria, "editor")
        leitor = add_token(database, maria, "leitor")
        created = client.post("/produtos", json=PRODUTO, headers=bearer(editor))
        assert created.status_code == 201
        assert created.headers["cache-control"] == "private"
        path = created.headers["location"]
        assert client.get(path, headers=bearer(leitor)).status_code == 200
        refused = client.delete(path, headers=bearer(leitor))
        assert refused.status_code == 403
        assert refused.json()["detail"] == (
            "Seu papel (leitor) não permite esta ação: ela exige o papel editor."
        )
        assert client.delete(path, headers=bearer(editor)).status_code == 204

    def test_a_token_is_never_worth_more_than_its_user_is_now(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        maria = add_user(database, "maria", "editor")
        token = add_token(database, maria, "editor")
        db.execute("UPDATE usuarios SET papel = 'leitor'")
        assert client.post("/produtos", json=PRODUTO, headers=bearer(token)).status_code == 403

    @pytest.mark.parametrize(
        "authorization",
        [
            "Bearer cat_" + "a" * 43,
            "Bearer cat_short",
            "Bearer ",
            "Basic bWFyaWE6c2VuaGE=",
            "cat_" + "a" * 43,
            b"Bearer cat_" + b"a" * 42 + "é".encode(),
        ],
    )
    def test_an_unknown_or_malformed_credential_is_401_even_for_a_read(
        self, client: TestClient, database: str, authorization: str | bytes
    ) -> None:
        add_user(database)
        value = authorization if isinstance(authorization, bytes) else authorization.encode()
        response = client.get(
            "/produtos", headers=[(b"accept", b"application/json"), (b"authorization", value)]
        )
        assert response.status_code == 401
        assert 'error="invalid_token"' in response.headers["www-authenticate"]

    def test_a_revoked_or_expired_token_stops_at_once(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        maria = add_user(database)
        token = add_token(database, maria)
        assert client.post("/produtos", json=PRODUTO, headers=bearer(token)).status_code == 201
        db.execute("UPDATE tokens SET revoked_at = ?", (time.time(),))
        assert client.post("/produtos", json=PRODUTO, headers=bearer(token)).status_code == 401
        expired = add_token(database, maria, expires_at=time.time() - 1)
        assert client.get("/produtos", headers=bearer(expired)).status_code == 401

    def test_its_last_use_is_noted_once_a_minute_not_on_every_request(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        token = add_token(database, add_user(database))
        for _ in range(3):
            client.get("/produtos", headers=bearer(token))
        (used,) = db.execute("SELECT last_used_at FROM tokens").fetchone()
        assert time.time() - 60 < used <= time.time()
        assert (
            db.execute("SELECT count(*) FROM tokens WHERE last_used_at = ?", (used,)).fetchone()[0]
            == 1
        )

    def test_idempotency_keys_are_each_users_own(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        maria = add_token(database, add_user(database, "maria", "editor"))
        joana = add_token(database, add_user(database, "joana", "editor"))
        key = {"idempotency-key": "pedido-1"}
        first = client.post("/produtos", json=PRODUTO, headers={**bearer(maria), **key})
        again = client.post("/produtos", json=PRODUTO, headers={**bearer(maria), **key})
        other = client.post("/produtos", json=PRODUTO, headers={**bearer(joana), **key})
        assert first.status_code == again.status_code == other.status_code == 201
        assert again.headers["idempotent-replayed"] == "true"
        assert "idempotent-replayed" not in other.headers
        assert first.json()["id"] == again.json()["id"] != other.json()["id"]


class TestEverythingMode:
    def test_asks_for_credentials_on_every_page_but_the_few_public_ones(
        self, all_mode: TestClient
    ) -> None:
        listing = all_mode.get("/produtos?depois=5")
        assert listing.status_code == 303
        assert listing.headers["location"] == "/entrar?proximo=%2Fprodutos%3Fdepois%3D5"
        assert all_mode.get("/produtos/1", headers=JSON).status_code == 401
        for path in ("/", "/docs", "/openapi.json", "/produtos/novo"):
            assert all_mode.get(path).status_code == 303, path
        for path in ("/entrar", "/healthz", "/readyz", "/static/catalogo.css"):
            assert all_mode.get(path).status_code == 200, path

    def test_a_page_with_any_characters_in_its_address_is_come_back_to_after_signing_in(
        self, all_mode: TestClient, database: str
    ) -> None:
        add_user(database)
        sent = all_mode.get("/produtos?q=café&depois=5")
        assert sent.headers["location"] == (
            "/entrar?proximo=%2Fprodutos%3Fq%3Dcaf%25C3%25A9%26depois%3D5"
        )
        back = sign_in(all_mode, proximo="/produtos?q=caf%C3%A9&depois=5")
        assert back.headers["location"] == "/produtos?q=caf%C3%A9&depois=5"

    def test_a_reader_reads_everything_and_changes_nothing(
        self, all_mode: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "ana", "leitor")
        sign_in(all_mode, "ana")
        page = all_mode.get("/produtos")
        assert page.status_code == 200 and "Novo produto" not in page.text
        refused = post_form(all_mode)
        assert refused.status_code == 403
        assert "Seu papel (leitor) não permite esta ação" in refused.text
        assert stored_names(db) == []
