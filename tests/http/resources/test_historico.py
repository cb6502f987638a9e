"""A product's history over HTTP, on SQLite and PostgreSQL: every write leaves its event,
removal keeps the product, and /produtos/{id}/restauracao brings it back."""

import json
import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.databases import Database
from tests.helpers import (
    JSON,
    Stored,
    add_token,
    add_user,
    bearer,
    create_via_form,
    create_via_json,
    form_on,
    removed,
    sign_in,
    stored,
)
from tests.processes import catalogo

CANECA = {"nome": "Caneca", "descricao": "Azul", "preco": "29.90"}
PROBLEM = "application/problem+json"


def as_page(token: str) -> dict[str, str]:
    """A token's request that asks for the page by name: one with no Accept gets JSON."""
    return {"authorization": f"Bearer {token}", "accept": "text/html"}


def events(db: Database, id: int) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT tipo, versao, antes, depois, quem, token, origem, request_id FROM eventos "
        "WHERE produto_id = ? ORDER BY id",
        (id,),
    ).fetchall()
    names = ("tipo", "versao", "antes", "depois", "quem", "token", "origem", "request_id")
    found = [dict(zip(names, row, strict=True)) for row in rows]
    for event in found:
        for side in ("antes", "depois"):
            event[side] = None if event[side] is None else json.loads(event[side])
    return found


class TestEveryWriteLeavesAnEvent:
    def test_create_update_and_remove_each_record_what_changed_who_and_from_where(
        self, client: TestClient, db: Database
    ) -> None:
        created = client.post("/produtos", data={"produto.nome": "Caneca", "produto.preco": "10"})
        id = int(db.execute("SELECT max(id) FROM produtos").fetchone()[0])
        updated = client.put(
            f"/produtos/{id}", json={"nome": "Caneca azul", "preco": "12.5"}, headers=JSON
        )
        gone = client.delete(f"/produtos/{id}", headers=JSON)
        assert (created.status_code, updated.status_code, gone.status_code) == (303, 200, 204)
        fields = {"codigo": None, "nome": "Caneca", "descricao": "", "preco": "10.00"}
        changed = {"codigo": None, "nome": "Caneca azul", "descricao": "", "preco": "12.50"}
        assert events(db, id) == [
            {
                "tipo": "criado",
                "versao": 1,
                "antes": None,
                "depois": fields,
                "quem": None,
                "token": None,
                "origem": "web",
                "request_id": created.headers["x-request-id"],
            },
            {
                "tipo": "alterado",
                "versao": 2,
                "antes": fields,
                "depois": changed,
                "quem": None,
                "token": None,
                "origem": "api",
                "request_id": updated.headers["x-request-id"],
            },
            {
                "tipo": "removido",
                "versao": 3,
                "antes": changed,
                "depois": None,
                "quem": None,
                "token": None,
                "origem": "api",
                "request_id": gone.headers["x-request-id"],
            },
        ]

    def test_a_refused_write_leaves_no_event(self, client: TestClient, db: Database) -> None:
        id = create_via_json(client, CANECA)["id"]
        stale = client.put(f"/produtos/{id}", json={**CANECA, "versao": 9}, headers=JSON)
        invalid = client.put(f"/produtos/{id}", json={"nome": ""}, headers=JSON)
        assert (stale.status_code, invalid.status_code) == (409, 422)
        assert [e["tipo"] for e in events(db, int(str(id)))] == ["criado"]

    def test_a_token_records_its_user_and_its_label(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        secret = add_token(database, add_user(database, "maria", "editor"))
        created = client.post("/produtos", json=CANECA, headers={**JSON, **bearer(secret)})
        assert created.status_code == 201
        (event,) = events(db, created.json()["id"])
        assert (event["quem"], event["token"], event["origem"]) == ("maria", "testes", "api")

    def test_a_signed_in_browser_records_its_user(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        sign_in(client, "maria")
        id = create_via_form(client, db)
        (event,) = events(db, id)
        assert (event["quem"], event["token"], event["origem"]) == ("maria", None, "web")

    def test_a_product_says_when_it_was_made_and_last_changed(self, client: TestClient) -> None:
        created = create_via_json(client, CANECA)
        assert created["criado_em"] == created["atualizado_em"]
        updated = client.put(
            f"/produtos/{created['id']}", json={**CANECA, "nome": "Xícara"}, headers=JSON
        ).json()
        assert updated["criado_em"] == created["criado_em"]
        assert updated["atualizado_em"] >= created["atualizado_em"]

    def test_the_edit_page_says_when_the_product_was_made_and_changed(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        page = client.get(f"/produtos/{id}").text
        assert '<p class="datas">Criado em ' in page and "atualizado em" not in page
        client.put(f"/produtos/{id}", json={**CANECA, "nome": "Xícara"}, headers=JSON)
        minute = 1_800_000_000  # a whole minute: 2027-01-15 08:00 UTC
        db.execute(
            "UPDATE produtos SET criado_em = ?, atualizado_em = ? WHERE id = ?",
            (minute, minute + 30, id),
        )
        assert "atualizado em" not in client.get(f"/produtos/{id}").text  # the same minute
        db.execute("UPDATE produtos SET atualizado_em = atualizado_em + 3600 WHERE id = ?", (id,))
        assert " · atualizado em " in client.get(f"/produtos/{id}").text

    def test_a_replayed_creation_answers_with_the_first_answers_times(
        self, client: TestClient
    ) -> None:
        headers = {**JSON, "Idempotency-Key": "k1"}
        first = client.post("/produtos", json=CANECA, headers=headers).json()
        again = client.post("/produtos", json=CANECA, headers=headers)
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json() == first


class TestRemovalKeepsTheProduct:
    def test_a_removed_product_is_404_says_when_and_by_whom_and_leaves_the_list(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        sign_in(client, "maria")
        id = create_via_form(client, db, "Caneca")
        client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        assert stored(db, id) is None and removed(db, id) is not None
        page = client.get(f"/produtos/{id}")
        assert page.status_code == 404
        assert "Produto removido" in page.text and " por maria." in page.text
        problem = client.get(f"/produtos/{id}", headers=JSON).json()
        assert problem["detail"].startswith(f"O produto {id} foi removido em ")
        assert f'href="/produtos/{id}"' not in client.get("/produtos").text
        assert client.get("/produtos", headers=JSON).json()["produtos"] == []

    def test_a_removed_product_cannot_be_changed_or_removed_again(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_json(client, CANECA)["id"]
        assert client.delete(f"/produtos/{id}", headers=JSON).status_code == 204
        assert client.put(f"/produtos/{id}", json=CANECA, headers=JSON).status_code == 404
        assert client.delete(f"/produtos/{id}", headers=JSON).status_code == 404
        assert [e["tipo"] for e in events(db, int(str(id)))] == ["criado", "removido"]


class TestRestoring:
    def test_json_gets_the_product_back_with_its_id_and_a_new_version(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_json(client, CANECA)["id"]
        client.delete(f"/produtos/{id}", headers=JSON)
        back = client.post(f"/produtos/{id}/restauracao", headers=JSON)
        assert back.status_code == 200
        assert back.json() | {"criado_em": None, "atualizado_em": None} == {
            "id": id,
            "codigo": None,
            **CANECA,
            "versao": 3,
            "criado_em": None,
            "atualizado_em": None,
        }
        assert back.headers["etag"] == client.get(f"/produtos/{id}", headers=JSON).headers["etag"]
        assert [e["tipo"] for e in events(db, int(str(id)))] == ["criado", "removido", "restaurado"]

    def test_the_notice_of_a_removal_offers_to_undo_it_and_come_back_here(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca")
        gone = client.post(f"/produtos/{id}", data={"_method": "DELETE", "lista": "depois=99"})
        assert gone.headers["location"] == "/produtos?depois=99"
        page = client.get("/produtos?depois=99").text
        undo = form_on(page, f"/produtos/{id}/restauracao")
        assert undo == {"lista": "depois=99"}
        assert '<p role="status" tabindex="-1" autofocus>Produto «Caneca» removido.</p>' in page
        back = client.post(f"/produtos/{id}/restauracao", data=undo)
        assert back.headers["location"] == "/produtos?depois=99"
        assert stored(db, id) is not None
        assert "Desfazer" not in client.get("/produtos").text  # a notice of a restore has none

    def test_a_browser_returns_to_its_page_of_the_list_with_a_notice(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca")
        client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        back = client.post(f"/produtos/{id}/restauracao", data={"lista": "depois=99"})
        assert back.status_code == 303 and back.headers["location"] == "/produtos?depois=99"
        assert "Produto «Caneca» restaurado." in client.get("/produtos").text
        assert stored(db, id) is not None

    def test_a_product_that_is_not_removed_is_409_and_an_unknown_one_404(
        self, client: TestClient
    ) -> None:
        id = create_via_json(client, CANECA)["id"]
        refused = client.post(f"/produtos/{id}/restauracao", headers=JSON)
        assert refused.status_code == 409
        assert refused.json()["current"]["versao"] == 1
        page = client.post(f"/produtos/{id}/restauracao")
        assert page.status_code == 409 and "Nada a restaurar" in page.text
        assert client.post("/produtos/999/restauracao", headers=JSON).status_code == 404

    def test_only_those_who_may_edit_may_restore(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        editor = {**JSON, **bearer(add_token(database, add_user(database, "maria", "editor")))}
        secret = add_token(database, add_user(database, "ana", "leitor"), "leitor")
        id = client.post("/produtos", json=CANECA, headers=editor).json()["id"]
        client.delete(f"/produtos/{id}", headers=editor)
        assert client.post(f"/produtos/{id}/restauracao", headers=JSON).status_code == 401
        reader = client.post(f"/produtos/{id}/restauracao", headers={**JSON, **bearer(secret)})
        assert reader.status_code == 403
        assert stored(db, int(str(id))) is None

    def test_a_malformed_body_is_400_and_restores_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_json(client, CANECA)["id"]
        client.delete(f"/produtos/{id}", headers=JSON)
        for body, kind in ((b"{", "application/json"), (b"x", "text/plain")):
            refused = client.post(
                f"/produtos/{id}/restauracao", content=body, headers={**JSON, "content-type": kind}
            )
            assert refused.status_code in (400, 415)
        assert stored(db, int(str(id))) is None

    def test_a_bad_way_back_is_400_and_restores_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        bad = client.post(f"/produtos/{id}/restauracao", data={"lista": "depois=abc"})
        assert bad.status_code == 400
        assert stored(db, id) is None


def change(client: TestClient, id: int, **fields: str) -> None:
    """Saves the product with `fields` changed, as JSON does (no version: never a conflict)."""
    current = client.get(f"/produtos/{id}", headers=JSON).json()
    kept = {c: current[c] for c in ("nome", "descricao", "preco")}
    assert client.put(f"/produtos/{id}", json={**kept, **fields}, headers=JSON).status_code == 200


class TestTheHistoryPage:
    def test_shows_each_change_newest_first_with_who_and_old_and_new_values(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        id = create_via_json(client, CANECA)["id"]
        token = add_token(database, add_user(database, "maria", "editor"))
        client.put(f"/produtos/{id}", json={**CANECA, "preco": "1234.5"}, headers=bearer(token))
        page = client.get(f"/produtos/{id}/historico", headers=as_page(token))
        assert page.status_code == 200 and page.headers["cache-control"] == "private, no-store"
        rows = re.findall(r'<p class="evento">(.*?)</p>', page.text)
        assert [re.sub(r"<.*?>|\d\d/\d\d/\d{4} \d\d:\d\d", "", row) for row in rows] == [
            " · Alterado por maria pela API, com o token «testes» (versão 2)",
            " · Criado pela API (versão 1)",
        ]
        assert "<del>R$ 29,90</del>" in page.text and "<ins>R$ 1.234,50</ins>" in page.text
        assert "<title>Histórico de «Caneca» · Catálogo</title>" in page.text

    def test_reads_each_change_as_a_sentence_what_by_whom_which_way_and_which_version(
        self, client: TestClient, database: str
    ) -> None:
        """The product is what changed ("Criado", "Removido"), then who did it, if anyone was
        signed in, the way the change came, and its version."""
        assert catalogo(database, "seed", "1").returncode == 0
        (id,) = [p["id"] for p in client.get("/produtos", headers=JSON).json()["produtos"]]
        add_user(database, "ana", "editor")
        sign_in(client, "ana")
        edit = {
            "_method": "PUT",
            "produto.nome": "Caneca",
            "produto.preco": "5",
            "produto.versao": "1",
        }
        assert client.post(f"/produtos/{id}", data=edit).status_code == 303
        assert client.post(f"/produtos/{id}", data={"_method": "DELETE"}).status_code == 303
        restored = client.post(f"/produtos/{id}/restauracao", data={"removidos": ""})
        assert restored.status_code == 303
        rows: list[str] = []
        url: str | None = f"/produtos/{id}/historico"
        while url is not None:  # three to a page
            page = client.get(url).text
            rows += re.findall(r'<p class="evento">(.*?)</p>', page)
            found = re.search(r'<a rel="next" href="([^"]+)"', page)
            url = found[1] if found else None
        assert [re.sub(r"<.*?>|\d\d/\d\d/\d{4} \d\d:\d\d", "", row) for row in rows] == [
            " · Restaurado por ana pelo site (versão 4)",
            " · Removido por ana pelo site (versão 3)",
            " · Alterado por ana pelo site (versão 2)",
            " · Criado pela linha de comando (versão 1)",
        ]

    def test_names_an_empty_description_in_words(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db, "Caneca")
        client.put(
            f"/produtos/{id}",
            data={"produto.nome": "Caneca", "produto.descricao": "Azul", "produto.preco": "1"},
        )
        page = client.get(f"/produtos/{id}/historico").text
        assert "<del>(sem descrição)</del>" in page and "<ins>(sem descrição)</ins>" in page

    def test_is_linked_from_the_edit_page(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        assert (
            f'<a href="/produtos/{id}/historico">Histórico</a>'
            in client.get(f"/produtos/{id}").text
        )

    def test_pages_by_version_in_html_and_json_alike(
        self, client: TestClient, db: Database
    ) -> None:
        id = int(str(create_via_json(client, CANECA)["id"]))
        for n in range(2, 8):
            change(client, id, nome=f"v{n}")
        first = client.get(f"/produtos/{id}/historico", headers=JSON)
        assert [e["versao"] for e in first.json()["eventos"]] == [7, 6, 5]  # page_size is 3
        assert first.json()["links"] == {"next": f"/produtos/{id}/historico?depois=5"}
        assert first.headers["link"] == f'</produtos/{id}/historico?depois=5>; rel="next"'
        second = client.get(f"/produtos/{id}/historico?depois=5", headers=JSON).json()
        assert [e["versao"] for e in second["eventos"]] == [4, 3, 2]
        assert second["links"]["prev"] == f"/produtos/{id}/historico"
        last = client.get(f"/produtos/{id}/historico?depois=2").text
        assert "(versão 1)" in last and 'rel="prev"' in last and 'rel="next"' not in last

    def test_restoring_a_version_is_an_ordinary_update_of_the_current_one(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        change(client, id, nome="Xícara", preco="12.00")
        page = client.get(f"/produtos/{id}/historico").text
        assert page.count("Restaurar esta versão") == 1  # the current one is not offered
        form = form_on(page, f"/produtos/{id}")
        assert form == {
            "_method": "PUT",
            "produto.codigo": "",
            "produto.nome": "Caneca",
            "produto.descricao": "",
            "produto.preco": "10,00",
            "produto.versao": "2",
        }
        assert client.post(f"/produtos/{id}", data=form).status_code == 303
        assert stored(db, id) == Stored("Caneca", "", 1000, 3)

    def test_of_a_removed_product_says_so_and_offers_to_restore_it(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca")
        client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        page = client.get(f"/produtos/{id}/historico").text
        assert "Removido em " in page and "Restaurar esta versão" not in page
        assert form_on(page, f"/produtos/{id}/restauracao") == {"removidos": ""}
        assert [
            e["tipo"]
            for e in client.get(f"/produtos/{id}/historico", headers=JSON).json()["eventos"]
        ] == ["removido", "criado"]

    @pytest.mark.parametrize(
        "query", ["depois=abc", "antes=0", "depois=007", "depois=1&antes=2", f"antes={2**63}"]
    )
    def test_a_malformed_cursor_is_400(self, client: TestClient, query: str) -> None:
        id = create_via_json(client, CANECA)["id"]
        answer = client.get(f"/produtos/{id}/historico?{query}", headers=JSON)
        assert answer.status_code == 400 and answer.headers["content-type"] == PROBLEM

    def test_of_a_product_never_made_is_404(self, client: TestClient) -> None:
        assert client.get("/produtos/999/historico").status_code == 404

    def test_is_for_staff_once_users_exist(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        reader = add_token(database, add_user(database, "ana", "leitor"), "leitor")
        db.insert("Caneta", 250)  # before any request: a worker looks for users once a second
        (id,) = db.execute("SELECT max(id) FROM produtos").fetchone()
        for path in (f"/produtos/{id}/historico", "/produtos/removidos", "/produtos/eventos"):
            assert client.get(path).status_code == 303, path  # a browser signs in first
            assert client.get(path, headers=JSON).status_code == 401, path
            assert client.get(path, headers=bearer(reader)).status_code == 200, path
        assert client.get("/produtos").status_code == 200  # the catalog stays public


class TestTheTrash:
    def test_lists_removed_products_latest_removal_first_with_who_and_when(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        token = add_token(database, add_user(database, "maria", "editor"))
        ids = [
            client.post(
                "/produtos", json={**CANECA, "nome": f"p{n}"}, headers=bearer(token)
            ).json()["id"]
            for n in range(4)
        ]
        for id in (ids[1], ids[0], ids[3]):
            assert client.delete(f"/produtos/{id}", headers=bearer(token)).status_code == 204
        first = client.get("/produtos/removidos", headers=bearer(token)).json()
        assert [r["produto"]["nome"] for r in first["removidos"]] == ["p3", "p0", "p1"]
        assert {r["quem"] for r in first["removidos"]} == {"maria"}
        assert first["links"] == {}
        page = client.get("/produtos/removidos", headers=as_page(token))
        assert page.text.count("por maria") == 3
        assert "<title>Removidos · Catálogo</title>" in page.text

    def test_is_searched_by_name_description_or_code_and_pages_within_the_search(
        self, client: TestClient
    ) -> None:
        made = {
            nome: int(
                str(create_via_json(client, {**CANECA, "nome": nome, "codigo": codigo})["id"])
            )
            for nome, codigo in (
                ("Caneca azul", "CN-1"),
                ("Caneca verde", "CN-2"),
                ("Prato fundo", "PR-1"),
                ("Caneca rosa", "CN-3"),
                ("Caneca lilás", "CN-4"),
                ("Pires 50%_off", None),
            )
        }
        for id in made.values():
            client.delete(f"/produtos/{id}")
        found = client.get("/produtos/removidos?q=caneca", headers=JSON).json()
        assert [r["produto"]["nome"] for r in found["removidos"]] == [
            "Caneca lilás",
            "Caneca rosa",
            "Caneca verde",
        ]
        assert found["links"] == {
            "next": f"/produtos/removidos?q=caneca&depois={made['Caneca verde']}"
        }
        rest = client.get(found["links"]["next"], headers=JSON).json()
        assert [r["produto"]["nome"] for r in rest["removidos"]] == ["Caneca azul"]
        by_code = client.get("/produtos/removidos?q=pr-1", headers=JSON).json()
        assert [r["produto"]["nome"] for r in by_code["removidos"]] == ["Prato fundo"]
        literal = client.get("/produtos/removidos?q=50%25_", headers=JSON).json()  # as typed
        assert [r["produto"]["nome"] for r in literal["removidos"]] == ["Pires 50%_off"]
        assert client.get("/produtos/removidos?q=5_%25", headers=JSON).json()["removidos"] == []
        page = client.get("/produtos/removidos?q=xicara").text
        assert "Nenhum removido com «xicara»" in page and 'value="xicara"' in page
        assert (
            '<td class="codigo" title="CN-3">CN-3</td>'
            in client.get("/produtos/removidos?q=rosa").text
        )

    def test_pages_by_product_and_restores_back_to_the_page_it_came_from(
        self, client: TestClient, db: Database
    ) -> None:
        ids = [int(str(create_via_json(client, CANECA, nome=f"p{n}")["id"])) for n in range(5)]
        for id in ids:
            client.delete(f"/produtos/{id}")
        first = client.get("/produtos/removidos", headers=JSON).json()
        assert first["links"] == {"next": f"/produtos/removidos?depois={ids[2]}"}
        second = client.get(f"/produtos/removidos?depois={ids[2]}").text
        restore = form_on(second, f"/produtos/{ids[1]}/restauracao")
        assert restore == {"removidos": f"depois={ids[2]}"}
        back = client.post(f"/produtos/{ids[1]}/restauracao", data=restore)
        assert back.headers["location"] == f"/produtos/removidos?depois={ids[2]}"
        page = client.get(back.headers["location"]).text
        assert "Produto «p1» restaurado." in page and ">p1<" not in page
        assert stored(db, ids[1]) is not None
        former = client.post(f"/produtos/{ids[0]}/restauracao", data={"lixeira": "depois=9"})
        assert former.headers["location"] == "/produtos/removidos?depois=9"  # its former name

    def test_restores_back_to_the_search_and_the_page_of_it_it_came_from(
        self, client: TestClient
    ) -> None:
        ids = [
            int(str(create_via_json(client, CANECA, nome=f"Caneca {n}")["id"])) for n in range(5)
        ]
        other = int(str(create_via_json(client, CANECA, nome="Prato")["id"]))
        for id in (*ids, other):
            client.delete(f"/produtos/{id}")
        second = client.get(f"/produtos/removidos?q=caneca&depois={ids[2]}").text
        restore = form_on(second, f"/produtos/{ids[1]}/restauracao")
        assert restore == {"removidos": f"depois={ids[2]}&q=caneca"}
        back = client.post(f"/produtos/{ids[1]}/restauracao", data=restore)
        assert back.headers["location"] == f"/produtos/removidos?q=caneca&depois={ids[2]}"
        page = client.get(back.headers["location"]).text
        assert "Produto «Caneca 1» restaurado." in page and 'value="caneca"' in page
        assert ">Prato<" not in page
        spaced = client.post(
            f"/produtos/{ids[0]}/restauracao", data={"removidos": "q=+x%C3%ADcara+%26+pires+"}
        )
        assert spaced.headers["location"] == "/produtos/removidos?q=x%C3%ADcara+%26+pires"

    def test_empty_says_so_and_is_linked_from_the_list(self, client: TestClient) -> None:
        assert "Não há produtos removidos." in client.get("/produtos/removidos").text
        assert '<a href="/produtos/removidos">Removidos</a>' in client.get("/produtos").text

    @pytest.mark.parametrize("name", ["removidos", "lixeira"])
    @pytest.mark.parametrize("way_back", ["depois=abc", "x=1&y", "depois=1&antes=2", "%FF"])
    def test_a_bad_way_back_to_it_is_400_and_restores_nothing(
        self, client: TestClient, db: Database, name: str, way_back: str
    ) -> None:
        id = create_via_form(client, db)
        client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        bad = client.post(f"/produtos/{id}/restauracao", data={name: way_back})
        assert bad.status_code == 400 and f"«{name}»" in bad.text
        assert stored(db, id) is None


class TestTheFeed:
    def test_gives_every_event_in_id_order_removals_included_with_a_next_link(
        self, client: TestClient
    ) -> None:
        id = int(str(create_via_json(client, CANECA)["id"]))
        change(client, id, preco="30.00")
        client.delete(f"/produtos/{id}", headers=JSON)
        client.post(f"/produtos/{id}/restauracao", headers=JSON)
        first = client.get("/produtos/eventos?limite=2", headers=JSON)
        assert first.headers["cache-control"] == "no-cache"
        body = first.json()
        assert [e["tipo"] for e in body["eventos"]] == ["criado", "alterado"]
        assert body["eventos"][1]["antes"]["preco"] == "29.90"
        assert body["eventos"][1]["depois"]["preco"] == "30.00"
        rest = client.get(body["links"]["next"], headers=JSON).json()
        assert [e["tipo"] for e in rest["eventos"]] == ["removido", "restaurado"]
        assert rest["eventos"][0]["depois"] is None
        assert rest["cursores"] == {"next": {"depois": 4}}  # the link's `depois`, as a value
        end = client.get(rest["links"]["next"], headers=JSON).json()
        assert end == {"eventos": [], "links": rest["links"], "cursores": rest["cursores"]}

    @pytest.mark.parametrize(
        "query",
        [
            "depois=-1",
            "depois=x",
            "depois=01",
            f"depois={2**63}",
            "limite=0",
            "limite=1001",
            "limite=",
            "depois=",
            "limite=1e3",
            "depois=%D9%A1",
        ],
    )
    def test_a_malformed_parameter_is_400_naming_what_is_accepted(
        self, client: TestClient, query: str
    ) -> None:
        answer = client.get(f"/produtos/eventos?{query}", headers=JSON)
        assert answer.status_code == 400 and answer.headers["content-type"] == PROBLEM
        assert ("depois deve" in answer.json()["detail"]) or (
            "limite deve" in answer.json()["detail"]
        )

    def test_speaks_json_only(self, client: TestClient) -> None:
        assert client.get("/produtos/eventos", headers={"accept": "text/html"}).status_code == 406
