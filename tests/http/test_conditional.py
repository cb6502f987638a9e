"""No lost updates: versions, ETags, If-None-Match (304), If-Match (412), stale forms (409)."""

import dataclasses
import re
from collections.abc import Callable

import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import (
    JSON,
    Stored,
    add_token,
    add_user,
    all_at_once,
    bearer,
    create_via_form,
    form_on,
    sign_in,
    stored,
)

CANECA = {"nome": "Caneca", "descricao": "", "preco": "10"}


def edit_form(client: TestClient, id: int) -> dict[str, str]:
    """What the product's edit form sends when saved unchanged, as the page has it now."""
    return form_on(client.get(f"/produtos/{id}").text, f"/produtos/{id}")


def form_version(html: str) -> str:
    """The version the edit form in `html` was filled from (its hidden produto.versao)."""
    found = re.search(r'name="produto.versao" value="(\d+)"', html)
    assert found is not None
    return found.group(1)


class TestValidatorsNameWhoWasLooking:
    """A browser's copy made for one visitor is never confirmed (304) to another: the page says
    "Entrar" or a name, and offers Salvar or not."""

    def test_the_page_a_visitor_kept_is_not_confirmed_once_they_sign_in(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        id = _product(db)
        anonymous = client.get(f"/produtos/{id}")
        assert "Entrar" in anonymous.text and "Salvar" not in anonymous.text
        sign_in(client, "maria")
        again = client.get(f"/produtos/{id}", headers={"if-none-match": anonymous.headers["etag"]})
        assert again.status_code == 200
        assert "maria" in again.text and "Salvar" in again.text
        assert again.headers["etag"] != anonymous.headers["etag"]

    def test_the_page_kept_while_signed_in_is_not_confirmed_after_signing_out(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        id = _product(db)
        sign_in(client, "maria")
        hers = client.get(f"/produtos/{id}")
        assert "Salvar" in hers.text
        signed_out = client.post("/sair")
        assert signed_out.headers["cache-control"] == "no-store"
        again = client.get(f"/produtos/{id}", headers={"if-none-match": hers.headers["etag"]})
        assert again.status_code == 200
        assert "maria" not in again.text and "Salvar" not in again.text

    def test_each_user_and_each_role_has_tags_of_its_own(
        self, settings: Settings, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        add_user(database, "ana", "leitor")
        id = _product(db)
        tags = {}
        for nome in ("maria", "ana", None):
            with TestClient(create_app(settings)) as client:
                if nome:
                    sign_in(client, nome)
                tags[nome] = client.get(f"/produtos/{id}").headers["etag"]
        assert len(set(tags.values())) == 3
        db.execute("UPDATE usuarios SET papel = 'admin' WHERE nome = 'maria'")
        with TestClient(create_app(settings)) as client:
            sign_in(client, "maria")
            as_admin = client.get(f"/produtos/{id}", headers={"if-none-match": tags["maria"]})
            assert as_admin.status_code == 200 and 'href="/usuarios"' in as_admin.text

    def test_a_token_is_not_confirmed_the_json_tag_of_another_visitor_but_writes_with_it(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        secret = add_token(database, add_user(database, "maria", "editor"), "editor")
        id = _product(db)
        anonymous = client.get(f"/produtos/{id}", headers=JSON).headers["etag"]
        mine = client.get(f"/produtos/{id}", headers={**bearer(secret), "if-none-match": anonymous})
        assert mine.status_code == 200 and mine.headers["etag"] != anonymous
        same = client.get(
            f"/produtos/{id}", headers={**bearer(secret), "if-none-match": mine.headers["etag"]}
        )
        assert same.status_code == 304
        saved = client.put(
            f"/produtos/{id}", json=CANECA, headers={**bearer(secret), "if-match": anonymous}
        )
        assert saved.status_code == 200

    def test_the_open_catalog_keeps_its_plain_tags(self, client: TestClient, db: Database) -> None:
        id = _product(db)
        assert client.get(f"/produtos/{id}", headers=JSON).headers["etag"] == '"1-json"'
        assert re.fullmatch(r'"1-h[0-9a-f]{10}"', client.get(f"/produtos/{id}").headers["etag"])


def _product(db: Database) -> int:
    """A product put in behind the app's back: its writes need someone signed in."""
    db.insert("Caneca", 1000)
    return int(db.execute("SELECT max(id) FROM produtos").fetchone()[0])


class TestEtags:
    def test_every_write_increments_the_version(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        for nome in ("x", "y", "z"):
            client.put(f"/produtos/{id}", data={"produto.nome": nome, "produto.preco": "1"})
        assert stored(db, id) == Stored("z", "", 100, 4)

    def test_html_and_json_have_distinct_strong_etags_of_the_same_version(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        html = client.get(f"/produtos/{id}").headers["etag"]
        json = client.get(f"/produtos/{id}", headers=JSON).headers["etag"]
        assert html != json
        assert html.startswith('"1-') and json == '"1-json"'

    @pytest.mark.parametrize("accept", ["text/html", "application/json"])
    def test_if_none_match_with_the_current_etag_is_304(
        self, client: TestClient, db: Database, accept: str
    ) -> None:
        id = create_via_form(client, db)
        first = client.get(f"/produtos/{id}", headers={"accept": accept})
        etag = first.headers["etag"]
        for header in (etag, f"W/{etag}", f'"x", {etag}', "*"):
            again = client.get(
                f"/produtos/{id}", headers={"accept": accept, "if-none-match": header}
            )
            assert again.status_code == 304
            assert again.content == b""
            assert again.headers["etag"] == etag
        client.put(f"/produtos/{id}", data={"produto.nome": "mudou", "produto.preco": "1"})
        changed = client.get(f"/produtos/{id}", headers={"accept": accept, "if-none-match": etag})
        assert changed.status_code == 200
        assert changed.headers["etag"] != etag


class TestIfMatch:
    def test_put_with_the_current_etag_succeeds(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        etag = client.get(f"/produtos/{id}", headers=JSON).headers["etag"]
        response = client.put(f"/produtos/{id}", json=CANECA, headers={**JSON, "if-match": etag})
        assert response.status_code == 200
        assert stored(db, id) == Stored("Caneca", "", 1000, 2)

    @pytest.mark.parametrize("if_match", ['"7-json"', 'W/"1-json"', '"garbage"', '"1-json'])
    def test_put_or_delete_with_a_stale_or_weak_etag_is_412_and_changes_nothing(
        self, client: TestClient, db: Database, if_match: str
    ) -> None:
        id = create_via_form(client, db)
        put = client.put(f"/produtos/{id}", json=CANECA, headers={**JSON, "if-match": if_match})
        assert put.status_code == 412
        assert put.headers["content-type"] == "application/problem+json"
        delete = client.delete(f"/produtos/{id}", headers={**JSON, "if-match": if_match})
        assert delete.status_code == 412
        assert stored(db, id) == Stored("Caneta", "", 250, 1)

    @pytest.mark.parametrize("if_match", ["1", '"1"', 'W/"1-json"', '"1-json'])
    def test_a_tag_never_given_is_412_saying_so_and_showing_the_format(
        self, client: TestClient, db: Database, if_match: str
    ) -> None:
        id = create_via_form(client, db)
        put = client.put(f"/produtos/{id}", json=CANECA, headers={**JSON, "if-match": if_match})
        assert put.status_code == 412
        detail = put.json()["detail"]
        assert if_match in detail and "não é uma ETag que este serviço dá" in detail
        assert '"3-json"' in detail and "mudou" not in detail
        assert ("fracas" in detail) is if_match.startswith("W/")
        assert stored(db, id) == Stored("Caneta", "", 250, 1)

    def test_a_tag_once_given_that_no_longer_matches_says_the_product_changed(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        put = client.put(f"/produtos/{id}", json=CANECA, headers={**JSON, "if-match": '"7-json"'})
        assert put.status_code == 412
        assert "O produto mudou" in put.json()["detail"]

    def test_an_etag_of_either_representation_names_the_version(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        html_etag = client.get(f"/produtos/{id}").headers["etag"]
        response = client.delete(f"/produtos/{id}", headers={**JSON, "if-match": html_etag})
        assert response.status_code == 204

    def test_if_match_star_needs_the_product_to_exist(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        assert (
            client.put(f"/produtos/{id}", json=CANECA, headers={"if-match": "*"}).status_code == 200
        )
        assert (
            client.put("/produtos/999", json=CANECA, headers={"if-match": "*"}).status_code == 412
        )

    def test_without_if_match_writes_work_as_the_spec_expects(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        client.put(f"/produtos/{id}", json=CANECA)
        assert client.put(f"/produtos/{id}", json={**CANECA, "nome": "Outra"}).status_code == 200
        assert stored(db, id) == Stored("Outra", "", 1000, 3)


class TestStaleForms:
    def test_the_edit_form_carries_the_version_which_is_not_the_id(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        html = client.get(f"/produtos/{id}").text
        assert form_version(html) == "1"
        assert "produto.id" not in html

    def test_an_invalid_stale_form_keeps_the_version_it_was_based_on(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        response = client.put(
            f"/produtos/{id}",
            data={"produto.nome": "", "produto.preco": "1", "produto.versao": "1"},
        )
        assert response.status_code == 422
        assert form_version(response.text) == "1"

    def test_a_stale_json_body_version_is_409_with_the_current_product(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        client.put(f"/produtos/{id}", json={**CANECA, "nome": "Primeiro"})
        response = client.put(f"/produtos/{id}", json={**CANECA, "versao": 1}, headers=JSON)
        assert response.status_code == 409
        assert response.json()["instance"] == f"/produtos/{id}"
        assert response.json()["current"]["nome"] == "Primeiro"
        assert response.json()["current"]["versao"] == 2
        assert stored(db, id) == Stored("Primeiro", "", 1000, 2)


def test_two_editors_html_and_json_never_lose_an_update(client: TestClient, db: Database) -> None:
    id = create_via_form(client, db)
    form = client.get(f"/produtos/{id}").text
    etag = client.get(f"/produtos/{id}", headers=JSON).headers["etag"]
    # The browser saves first, from version 1.
    browser = {
        "_method": "PUT",
        "produto.nome": "Navegador",
        "produto.preco": "5",
        "produto.versao": form_version(form),
    }
    assert client.post(f"/produtos/{id}", data=browser).status_code == 303
    # The script, also from version 1, is refused instead of overwriting.
    script = client.put(
        f"/produtos/{id}", json={**CANECA, "nome": "Script"}, headers={**JSON, "if-match": etag}
    )
    assert script.status_code == 412
    assert stored(db, id) == Stored("Navegador", "", 500, 2)


def test_concurrent_editors_each_win_once_per_version_and_nothing_is_lost(
    settings: Settings, db: Database
) -> None:
    # The suite's 100 ms lock timeout is for the tests of timeouts: here eleven editors queue
    # for the winner's row lock on PostgreSQL, which a busy machine may hold longer than that.
    patient = dataclasses.replace(settings, lock_timeout_ms=Settings.lock_timeout_ms)
    with TestClient(create_app(patient), follow_redirects=False) as client:
        id = create_via_form(client, db)

        def editor(n: int, start: Callable[[], None]) -> tuple[int, str]:
            etag = client.get(f"/produtos/{id}", headers=JSON).headers["etag"]
            start()
            response = client.put(
                f"/produtos/{id}",
                json={**CANECA, "nome": f"editor {n}"},
                headers={**JSON, "if-match": etag},
            )
            return response.status_code, f"editor {n}"

        outcomes = all_at_once(12, editor)
    wins = [nome for status, nome in outcomes if status == 200]
    assert sorted(status for status, _ in outcomes) == [200] * len(wins) + [412] * (12 - len(wins))
    final = stored(db, id)
    assert final is not None
    assert final.versao == 1 + len(wins)  # every success is a version: none silently overwritten
    assert len(wins) == 1 and final.nome == wins[0]


class TestPreconditionsFirst:
    @pytest.mark.parametrize("if_match", ['W/"1-json"', '"nope"', '"1-zzz"', '"1-hzzzzzzzzzz"'])
    def test_a_weak_or_foreign_if_match_fails_even_with_a_matching_body_version(
        self, client: TestClient, db: Database, if_match: str
    ) -> None:
        id = create_via_form(client, db)
        response = client.put(
            f"/produtos/{id}",
            json={**CANECA, "versao": 1},
            headers={**JSON, "if-match": if_match},
        )
        assert response.status_code == 412
        assert stored(db, id) == Stored("Caneta", "", 250, 1)

    def test_a_stale_if_match_is_412_even_when_the_body_is_invalid(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        response = client.put(
            f"/produtos/{id}", json={"nome": ""}, headers={**JSON, "if-match": '"9-json"'}
        )
        assert response.status_code == 412

    @pytest.mark.parametrize("if_none_match", ["*", '"1-json"', 'W/"1-json"'])
    def test_a_write_with_a_matching_if_none_match_is_412(
        self, client: TestClient, db: Database, if_none_match: str
    ) -> None:
        id = create_via_form(client, db)
        put = client.put(
            f"/produtos/{id}", json=CANECA, headers={**JSON, "if-none-match": if_none_match}
        )
        delete = client.delete(f"/produtos/{id}", headers={**JSON, "if-none-match": if_none_match})
        assert (put.status_code, delete.status_code) == (412, 412)
        assert stored(db, id) == Stored("Caneta", "", 250, 1)

    def test_a_get_with_a_stale_if_match_is_412(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        assert client.get(f"/produtos/{id}", headers={"if-match": '"1-json"'}).status_code == 200
        assert client.get(f"/produtos/{id}", headers={"if-match": '"2-json"'}).status_code == 412


class TestStaleRemoval:
    def test_removing_from_a_stale_page_is_409_and_removes_nothing_until_confirmed(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        client.put(f"/produtos/{id}", data={"produto.nome": "Editado", "produto.preco": "1"})
        stale = {"_method": "DELETE", "produto.versao": "1"}
        response = client.post(f"/produtos/{id}", data=stale)
        assert response.status_code == 409
        assert "Nada foi removido." in response.text
        assert stored(db, id) == Stored("Editado", "", 100, 2)
        confirmed = {"_method": "DELETE", "produto.versao": "2"}  # the page's own Remover
        assert client.post(f"/produtos/{id}", data=confirmed).status_code == 303
        assert stored(db, id) is None

    def test_a_stale_json_removal_is_409_with_the_current_product(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        client.put(f"/produtos/{id}", json=CANECA)
        response = client.request("DELETE", f"/produtos/{id}", json={"versao": 1}, headers=JSON)
        assert response.status_code == 409
        assert response.json()["current"]["versao"] == 2
        assert stored(db, id) is not None


def test_a_19_digit_version_is_named_by_its_etag(client: TestClient, db: Database) -> None:
    id = create_via_form(client, db)
    db.execute("UPDATE produtos SET versao = ? WHERE id = ?", (10**18 + 5, id))
    etag = client.get(f"/produtos/{id}", headers=JSON).headers["etag"]
    assert etag == '"1000000000000000005-json"'
    response = client.put(f"/produtos/{id}", json=CANECA, headers={**JSON, "if-match": etag})
    assert response.status_code == 200
    assert response.json()["versao"] == 10**18 + 6


@pytest.mark.parametrize("versao", ["007", "0", "-1", "abc", str(2**63), " 1"])
def test_a_form_version_out_of_the_one_id_rule_is_400_and_changes_nothing(
    client: TestClient, db: Database, versao: str
) -> None:
    id = create_via_form(client, db)
    before = stored(db, id)
    form = {"produto.nome": "Outra", "produto.preco": "1", "produto.versao": versao}
    response = client.put(f"/produtos/{id}", data=form)
    assert response.status_code == 400
    assert "versao" in response.text
    assert stored(db, id) == before


@pytest.mark.parametrize("versao", ["007", 0, -1, 2**63, True, 1.5, "1e3", [1]])
def test_a_json_version_out_of_the_one_id_rule_is_400_and_changes_nothing(
    client: TestClient, db: Database, versao: object
) -> None:
    id = create_via_form(client, db)
    before = stored(db, id)
    response = client.put(f"/produtos/{id}", json={**CANECA, "versao": versao}, headers=JSON)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert stored(db, id) == before


def test_a_412_from_if_none_match_names_if_none_match(client: TestClient, db: Database) -> None:
    id = create_via_form(client, db)
    answer = client.put(f"/produtos/{id}", json=CANECA, headers={**JSON, "if-none-match": "*"})
    assert answer.status_code == 412
    assert answer.json()["detail"].startswith("If-None-Match pede")
    assert stored(db, id) == Stored("Caneta", "", 250, 1)


def test_a_removal_with_a_json_content_type_and_no_body_is_a_removal(
    client: TestClient, db: Database
) -> None:
    id = create_via_form(client, db)
    headers = {**JSON, "content-type": "application/json"}
    assert client.request("DELETE", f"/produtos/{id}", headers=headers).status_code == 204
    assert stored(db, id) is None
