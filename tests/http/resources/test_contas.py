"""The account pages in a browser: /conta (password, sessions), and for admins /usuarios and
/tokens, over HTTP to the real app on both databases."""

import re

import httpx2
import pytest
from starlette.testclient import TestClient

from tests.databases import Database
from tests.helpers import JSON, SENHA, add_token, add_user, bearer, sign_in

NOVA = "outra senha bem comprida"


@pytest.fixture
def admin(client: TestClient, database: str) -> TestClient:
    add_user(database, "maria", "admin")
    assert sign_in(client).status_code == 303
    return client


def second_browser(client: TestClient, nome: str = "maria", senha: str = SENHA) -> str:
    """Signs `nome` in as another browser would, and gives the client back its own session:
    the other browser's is returned, to be sent with `as_browser`."""
    own = client.cookies.get("sessao")
    client.cookies.clear()
    assert sign_in(client, nome, senha).status_code == 303
    other = client.cookies["sessao"]
    client.cookies.clear()
    if own is not None:
        client.cookies.set("sessao", own)
    return other


def as_browser(secret: str) -> dict[str, str]:
    return {"cookie": f"sessao={secret}"}


def change_password(
    client: TestClient, atual: str, nova: str, repetida: str | None = None
) -> httpx2.Response:
    data = {"atual": atual, "nova": nova, "repetida": nova if repetida is None else repetida}
    return client.post("/conta/senha", data=data)


class TestConta:
    def test_is_for_signed_in_browsers_only(self, client: TestClient, database: str) -> None:
        maria = add_user(database)
        assert client.get("/conta").headers["location"] == "/entrar?proximo=%2Fconta"
        token = add_token(database, maria)
        refused = client.get("/conta", headers={"authorization": f"Bearer {token}"})
        assert refused.status_code == 403
        assert "não para tokens de API" in refused.text

    def test_changing_the_password_keeps_this_session_and_ends_the_others(
        self, admin: TestClient, database: str, db: Database
    ) -> None:
        elsewhere = second_browser(admin)
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
        changed = change_password(admin, SENHA, NOVA)
        assert changed.headers["location"] == "/conta"
        page = admin.get("/conta")
        assert "Senha alterada." in page.text and "Esta sessão" in page.text
        assert page.headers["cache-control"] == "no-store"
        assert page.headers["vary"] == "Accept, Cookie"
        assert "Senha alterada." not in admin.get("/conta").text  # shown once
        assert admin.get("/conta", headers=as_browser(elsewhere)).status_code == 303
        admin.post("/sair")
        assert sign_in(admin, senha=SENHA).status_code == 422
        assert sign_in(admin, senha=NOVA).status_code == 303

    @pytest.mark.parametrize(
        ("atual", "nova", "repetida", "said"),
        [
            ("errada errada errada", NOVA, None, "A senha atual não confere."),
            (SENHA, "curta", None, "A senha deve ter pelo menos 12 caracteres."),
            (SENHA, NOVA, NOVA + "!", "As senhas digitadas não são iguais."),
        ],
    )
    def test_a_refused_change_says_why_and_changes_nothing(
        self,
        admin: TestClient,
        db: Database,
        atual: str,
        nova: str,
        repetida: str | None,
        said: str,
    ) -> None:
        (before,) = db.execute("SELECT password_hash FROM usuarios").fetchone()
        refused = change_password(admin, atual, nova, repetida)
        assert refused.status_code == 422 and said in refused.text
        assert db.execute("SELECT password_hash FROM usuarios").fetchone()[0] == before

    def test_a_notice_comes_from_the_write_before_never_from_the_address(
        self, admin: TestClient
    ) -> None:
        assert "Senha alterada." not in admin.get("/conta?aviso=senha").text
        admin.cookies.set("aviso", "adicionado%3A1%3ACaneca")  # a product's, not this page's
        page = admin.get("/conta")
        assert "Caneca" not in page.text and "aviso=" in page.headers["set-cookie"]

    def test_one_session_or_all_of_them_can_be_ended(self, admin: TestClient, db: Database) -> None:
        elsewhere = second_browser(admin)
        other = db.execute("SELECT max(id) FROM sessions").fetchone()[0]
        ended = admin.post(f"/conta/sessoes/{other}", data={"_method": "DELETE"})
        assert ended.headers["location"] == "/conta"
        assert "Sessão encerrada." in admin.get("/conta").text
        assert admin.get("/conta", headers=as_browser(elsewhere)).status_code == 303
        again = admin.post(f"/conta/sessoes/{other}", data={"_method": "DELETE"})
        assert again.status_code == 404
        out = admin.post("/conta/sessoes", data={"_method": "DELETE"})
        assert out.headers["location"] == "/entrar" and "Max-Age=0" in out.headers["set-cookie"]
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0

    def test_another_users_session_cannot_be_ended_from_ones_own_account(
        self, admin: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "edu", "editor")
        edu = as_browser(second_browser(admin, "edu"))
        (theirs,) = db.execute(
            "SELECT s.id FROM sessions s JOIN usuarios u ON u.id = s.usuario_id "
            "WHERE u.nome = 'edu'"
        ).fetchone()
        refused = admin.post(f"/conta/sessoes/{theirs}", data={"_method": "DELETE"})
        assert refused.status_code == 404
        assert admin.get("/conta", headers=edu).status_code == 200


class TestUsuarios:
    def test_only_admins_manage_users(self, client: TestClient, database: str) -> None:
        add_user(database, "edu", "editor")
        sign_in(client, "edu")
        assert client.get("/usuarios").status_code == 403
        assert client.post("/usuarios", data={"nome": "x"}).status_code == 403

    def test_an_admin_creates_a_user_who_can_then_sign_in(
        self, admin: TestClient, database: str
    ) -> None:
        created = admin.post("/usuarios", data={"nome": "Joana", "papel": "leitor", "senha": NOVA})
        assert created.headers["location"] == "/usuarios"
        page = admin.get("/usuarios").text
        assert "Usuário «joana» criado, com o papel leitor." in page
        assert page.count(">leitor</option>") == 1 + 1  # the new user's row, and the form's
        second_browser(admin, "joana", NOVA)

    @pytest.mark.parametrize(
        ("form", "said"),
        [
            ({"nome": "maria", "papel": "editor", "senha": NOVA}, "Já existe o usuário «maria»."),
            ({"nome": "jo ana", "papel": "editor", "senha": NOVA}, "letras sem acento"),
            ({"nome": "joana", "papel": "chefe", "senha": NOVA}, "O papel deve ser"),
            ({"nome": "joana", "papel": "editor", "senha": "curta"}, "pelo menos 12"),
        ],
    )
    def test_a_refused_user_says_why(
        self, admin: TestClient, db: Database, form: dict[str, str], said: str
    ) -> None:
        refused = admin.post("/usuarios", data=form)
        assert refused.status_code == 422 and said in refused.text
        assert db.execute("SELECT count(*) FROM usuarios").fetchone()[0] == 1

    def test_a_role_change_or_a_deactivation_takes_effect_at_once(
        self, admin: TestClient, database: str
    ) -> None:
        add_user(database, "edu", "editor")
        edu = as_browser(second_browser(admin, "edu"))
        assert admin.get("/produtos/novo", headers=edu).status_code == 200
        demoted = admin.post(
            "/usuarios/edu", data={"_method": "PUT", "papel": "leitor", "ativo": "sim"}
        )
        assert demoted.headers["location"] == "/usuarios"
        assert "Usuário «edu» alterado: agora é leitor, ativo." in admin.get("/usuarios").text
        assert admin.get("/produtos/novo", headers=edu).status_code == 403
        admin.post("/usuarios/edu", data={"_method": "PUT", "papel": "leitor", "ativo": "nao"})
        page = admin.get("/usuarios").text
        assert "Usuário «edu» desativado: as sessões dele foram encerradas." in page
        assert page.count('<option value="nao" selected>desativado</option>') == 1  # shown once
        assert admin.get("/produtos/novo", headers=edu).headers["location"].startswith("/entrar")

    def test_an_admin_cannot_demote_themselves_nor_change_a_user_who_is_not_there(
        self, admin: TestClient
    ) -> None:
        own = admin.post(
            "/usuarios/maria", data={"_method": "PUT", "papel": "leitor", "ativo": "sim"}
        )
        assert own.status_code == 403
        missing = admin.post(
            "/usuarios/ana", data={"_method": "PUT", "papel": "leitor", "ativo": "sim"}
        )
        assert missing.status_code == 404
        bad = admin.post("/usuarios/ana", data={"_method": "PUT", "papel": "leitor", "ativo": "x"})
        assert bad.status_code == 400


class TestTokens:
    def test_a_new_token_is_shown_once_and_works_at_once(
        self, admin: TestClient, db: Database
    ) -> None:
        made = admin.post(
            "/tokens", data={"nome": "ERP", "usuario": "maria", "papel": "editor", "expira": "30"}
        )
        assert made.status_code == 303 and made.headers["location"] == "/tokens"
        cookie = made.headers["set-cookie"]
        assert "HttpOnly" in cookie and "Path=/tokens" in cookie and "SameSite=Strict" in cookie
        shown = admin.get("/tokens")
        assert shown.headers["cache-control"] == "no-store"
        (token,) = re.findall(r"cat_[A-Za-z0-9_-]{43}", shown.text)
        assert "Token «ERP» criado" in shown.text
        assert token not in admin.get("/tokens").text  # shown once: the reload has no secret
        created = admin.post("/produtos", json={"nome": "A", "preco": "1"}, headers=bearer(token))
        assert created.status_code == 201
        (id,) = db.execute("SELECT id FROM tokens").fetchone()
        revoked = admin.post(f"/tokens/{id}", data={"_method": "DELETE"})
        assert revoked.headers["location"] == "/tokens"
        assert "Token revogado" in admin.get("/tokens").text
        assert admin.get("/produtos", headers=bearer(token)).status_code == 401
        assert "revogado" in admin.get("/tokens").text

    @pytest.mark.parametrize(
        ("form", "said"),
        [
            ({"nome": "", "usuario": "maria", "papel": "editor"}, "Dê ao token um nome"),
            ({"nome": "ERP", "usuario": "ninguem", "papel": "editor"}, "Escolha um usuário"),
            ({"nome": "ERP", "usuario": "ana", "papel": "editor"}, "ana é leitor"),
            (
                {"nome": "ERP", "usuario": "maria", "papel": "dono"},
                "O papel deve ser leitor ou editor ou admin",
            ),
            ({"nome": "ERP", "usuario": "ana", "papel": "admin"}, "ana é leitor"),
            ({"nome": "ERP", "usuario": "maria", "expira": "0"}, "A validade é de 1 a 3650 dias"),
            ({"nome": "ERP", "usuario": "maria", "expira": "1e3"}, "A validade é de 1 a 3650 dias"),
            ({"nome": "ERP", "usuario": "maria", "expira": "9" * 5000}, "A validade é de 1 a"),
            ({"nome": "ERP", "usuario": "maria", "expira": "٣"}, "A validade é de 1 a 3650 dias"),
        ],
    )
    def test_a_refused_token_says_why_and_makes_none(
        self, admin: TestClient, database: str, db: Database, form: dict[str, str], said: str
    ) -> None:
        add_user(database, "ana", "leitor")
        refused = admin.post("/tokens", data=form)
        assert refused.status_code == 422 and said in refused.text
        assert not re.search(r"cat_[A-Za-z0-9_-]{43}", refused.text)
        assert db.execute("SELECT count(*) FROM tokens").fetchone()[0] == 0

    def test_revoking_a_token_that_is_not_there_is_404(self, admin: TestClient) -> None:
        assert admin.post("/tokens/99", data={"_method": "DELETE"}).status_code == 404

    def test_programs_cannot_manage_tokens_even_with_an_admins_token(
        self, client: TestClient, database: str
    ) -> None:
        token = add_token(database, add_user(database, "maria", "admin"))
        assert client.get("/tokens", headers={**JSON, **bearer(token)}).status_code == 403


class TestTheTokensForm:
    def test_a_new_token_is_for_the_admin_signed_in_unless_another_is_chosen(
        self, admin: TestClient, database: str
    ) -> None:
        add_user(database, "ana", "editor")  # first alphabetically
        page = admin.get("/tokens").text
        assert '<option value="maria" selected>maria (admin)</option>' in page
        assert '<option value="ana">' in page

    def test_a_bad_expiry_is_marked_on_its_field(self, admin: TestClient) -> None:
        refused = admin.post(
            "/tokens", data={"nome": "loja", "usuario": "maria", "papel": "editor", "expira": "0"}
        )
        assert refused.status_code == 422
        assert 'id="token-expira" aria-invalid="true" aria-describedby="token-erro"' in refused.text
        assert '<h2 id="token-erro">A validade é de 1 a' in refused.text


def test_a_session_is_shown_by_its_browser_and_system_not_its_user_agent(
    admin: TestClient, database: str
) -> None:
    chrome = (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "HeadlessChrome/131.0.0.0 Safari/537.36"
    )
    admin.cookies.clear()
    signed = admin.post(
        "/entrar", data={"nome": "maria", "senha": SENHA}, headers={"user-agent": chrome}
    )
    assert signed.status_code == 303
    page = admin.get("/conta").text
    assert '<td class="nome">Chrome no Linux</td>' in page and "HeadlessChrome" not in page
