"""/webhooks: admins subscribe programs, in a browser and in JSON, with a session or an admin's
token; addresses that are not public are refused; the secret is shown once."""

import ipaddress
import re

import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import JSON, add_token, add_user, bearer, sign_in

PUBLIC = "http://93.184.215.14/eventos"  # public; no event is written here, none is sent


@pytest.fixture
def admin_token(database: str) -> str:
    return add_token(database, add_user(database, "ana", "admin"), "admin")


class TestInJson:
    def test_an_admins_token_subscribes_and_gets_the_secret_once(
        self, client: TestClient, admin_token: str
    ) -> None:
        made = client.post(
            "/webhooks",
            json={"url": PUBLIC, "eventos": ["criado", "alterado"]},
            headers=bearer(admin_token),
        )
        assert made.status_code == 201 and made.headers["location"] == "/webhooks/1"
        body = made.json()
        assert body["eventos"] == ["criado", "alterado"] and body["ativo"] is True
        assert re.fullmatch(r"whsec_[A-Za-z0-9+/]+=*", body["segredo"])
        listed = client.get("/webhooks", headers=bearer(admin_token)).json()["webhooks"]
        assert [w["url"] for w in listed] == [PUBLIC] and "segredo" not in listed[0]
        one = client.get("/webhooks/1", headers=bearer(admin_token)).json()
        assert "segredo" not in one and one["criado_por"] == "ana"
        assert body["segredo"] not in client.get("/webhooks", headers=bearer(admin_token)).text

    @pytest.mark.parametrize(
        ("url", "said"),
        [
            ("http://127.0.0.1/", "é de loopback"),
            ("http://localhost:8000/", "é de loopback"),
            ("http://169.254.169.254/latest/meta-data", "link-local"),
            ("http://10.0.0.5/", "rede privada"),
            ("http://[::1]/", "é de loopback"),
            ("http://[64:ff9b::a9fe:a9fe]/latest/meta-data", "link-local"),
            ("http://[::127.0.0.1]/", "é de loopback"),
            ("http://[64:ff9b::7f00:1]/", "é de loopback"),
            ("http://[2002:7f00:1::]/", "é de loopback"),
            ("http://[::ffff:0:7f00:1]/", "é de loopback"),
            ("http://[fec0::1]/", "site-local"),
            ("ftp://example.com/", "http:// ou https://"),
            ("http://no-such-name.invalid/", "não existe no DNS"),
        ],
    )
    def test_a_url_deliveries_may_not_reach_is_refused_and_nothing_is_made(
        self, client: TestClient, admin_token: str, db: Database, url: str, said: str
    ) -> None:
        refused = client.post(
            "/webhooks", json={"url": url, "eventos": ["criado"]}, headers=bearer(admin_token)
        )
        assert refused.status_code == 422
        assert said in refused.json()["errors"]["url"]
        assert db.execute("SELECT count(*) FROM webhooks").fetchone() == (0,)

    @pytest.mark.parametrize(
        "body",
        [
            {"url": PUBLIC},
            {"eventos": ["criado"]},
            {"url": 3, "eventos": []},
            {"url": PUBLIC, "eventos": "criado"},
        ],
    )
    def test_a_body_of_another_shape_is_400(
        self, client: TestClient, admin_token: str, body: dict[str, object]
    ) -> None:
        refused = client.post("/webhooks", json=body, headers=bearer(admin_token))
        assert refused.status_code == 400 and '"eventos"' in refused.json()["detail"]

    def test_unknown_or_no_events_are_422(self, client: TestClient, admin_token: str) -> None:
        for eventos, said in ((["apagado"], "desconhecido"), ([], "ao menos um")):
            refused = client.post(
                "/webhooks", json={"url": PUBLIC, "eventos": eventos}, headers=bearer(admin_token)
            )
            assert refused.status_code == 422 and said in refused.json()["errors"]["eventos"]

    def test_an_editors_token_or_nobody_is_refused(
        self, client: TestClient, database: str, admin_token: str
    ) -> None:
        editor = add_token(database, add_user(database, "bia", "editor"), "editor")
        assert (
            client.post(
                "/webhooks", json={"url": PUBLIC, "eventos": ["criado"]}, headers=bearer(editor)
            ).status_code
            == 403
        )
        assert client.get("/webhooks", headers=JSON).status_code == 401

    def test_removing_and_replaying(self, client: TestClient, admin_token: str) -> None:
        client.post(
            "/webhooks", json={"url": PUBLIC, "eventos": ["criado"]}, headers=bearer(admin_token)
        )
        replayed = client.post(
            "/webhooks/1/reenvio", json={"desde": 5}, headers=bearer(admin_token)
        )
        assert replayed.status_code == 200 and replayed.json()["ultimo_evento"] == 4
        bad = client.post("/webhooks/1/reenvio", json={"desde": 0}, headers=bearer(admin_token))
        assert bad.status_code == 422 and "desde" in bad.json()["errors"]
        assert client.delete("/webhooks/1", headers=bearer(admin_token)).status_code == 204
        assert client.delete("/webhooks/1", headers=bearer(admin_token)).status_code == 404
        missing = client.post("/webhooks/9/reenvio", json={"desde": 1}, headers=bearer(admin_token))
        assert missing.status_code == 404


def test_an_admins_token_still_never_manages_accounts(client: TestClient, admin_token: str) -> None:
    for path in ("/usuarios", "/tokens"):
        refused = client.get(path, headers={"authorization": f"Bearer {admin_token}"})
        assert refused.status_code == 403 and "não para tokens de API" in refused.text


class TestInABrowser:
    def test_the_form_subscribes_and_shows_the_secret_once(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "admin")
        assert sign_in(client).status_code == 303
        made = client.post("/webhooks", data={"url": PUBLIC, "eventos": ["criado", "removido"]})
        assert made.status_code == 303 and made.headers["location"] == "/webhooks"
        page = client.get("/webhooks")
        (secret,) = db.execute("SELECT segredo FROM webhooks").fetchone()
        assert secret in page.text and "não será mostrado de novo" in page.text
        assert page.headers["cache-control"] == "no-store"
        again = client.get("/webhooks").text
        assert secret not in again and PUBLIC in again and "criado, removido" in again

    def test_a_refused_url_shows_the_form_again_with_what_was_typed(
        self, client: TestClient, database: str
    ) -> None:
        add_user(database, "maria", "admin")
        assert sign_in(client).status_code == 303
        page = client.post("/webhooks", data={"url": "http://127.0.0.1:9/x", "eventos": "criado"})
        assert page.status_code == 422 and "é de loopback" in page.text
        assert 'value="http://127.0.0.1:9/x"' in page.text and 'aria-invalid="true"' in page.text


def test_the_setting_allows_a_private_network(database: str, settings: Settings) -> None:
    token = add_token(database, add_user(database, "ana", "admin"), "admin")
    allowed = Settings(
        **{**vars(settings), "webhook_networks": (ipaddress.ip_network("10.0.0.0/8"),)}
    )
    with TestClient(create_app(allowed)) as client:
        made = client.post(
            "/webhooks",
            json={"url": "http://10.1.2.3/x", "eventos": ["criado"]},
            headers=bearer(token),
        )
    assert made.status_code == 201
