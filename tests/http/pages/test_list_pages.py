"""The list pages a worker keeps (list_pages.list_page, and the pages SQLite's store keeps): each
read shows what is stored now, to whoever is asking now, through HTTP on the real app and a
real database."""

import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from catalogo.http.pages import list_pages
from tests.databases import Database
from tests.helpers import JSON, ONLY_SQLITE, add_user, create_via_form, sign_in
from tests.http.resources.test_contas import as_browser, second_browser


def _names_listed(page: str) -> list[str]:
    return re.findall(r'<td class="nome"><a href="/produtos/\d+[^"]*">([^<]*)</a>', page)


def _seen(client: TestClient, url: str = "/produtos", **headers: str) -> str:
    """The page, once any notice of a write was shown, asked twice: the second answer is the
    one a worker kept, and says the same."""
    client.get(url, headers=headers)
    first = client.get(url, headers=headers)
    again = client.get(url, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.text == first.text
    return again.text


class TestTheListPageKept:
    def test_a_new_product_and_an_edit_are_shown_at_once(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneta")
        assert _names_listed(_seen(client)) == ["Caneta"]
        create_via_form(client, db, "Lápis")
        assert _names_listed(_seen(client)) == ["Lápis", "Caneta"]
        client.post(
            f"/produtos/{id}",
            data={"_method": "PUT", "produto.nome": "Borracha", "produto.preco": "2,50"},
        )
        assert _names_listed(_seen(client)) == ["Lápis", "Borracha"]
        assert _names_listed(_seen(client, "/produtos?q=borracha")) == ["Borracha"]

    def test_a_change_written_by_another_instance_is_shown_at_once(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneta")
        _seen(client, "/produtos?q=caneta")
        _seen(client)
        db.execute("UPDATE produtos SET nome = 'Borracha', versao = versao + 1 WHERE id = ?", (id,))
        assert _names_listed(_seen(client)) == ["Borracha"]
        db.execute("UPDATE produtos SET nome = 'Lápis' WHERE id = ?", (id,))  # the same version
        assert _names_listed(_seen(client)) == ["Lápis"]

    def test_a_removed_product_is_gone_and_a_restored_one_back(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneta")
        create_via_form(client, db, "Lápis")
        _seen(client)
        client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        assert _names_listed(_seen(client)) == ["Lápis"]
        assert client.post(f"/produtos/{id}/restauracao").status_code == 303
        assert _names_listed(_seen(client)) == ["Lápis", "Caneta"]

    def test_the_notice_of_a_write_is_shown_once_and_the_kept_page_never_shows_it(
        self, client: TestClient, db: Database
    ) -> None:
        create_via_form(client, db, "Caneta")
        client.cookies.clear()
        _seen(client)  # kept without a notice
        create_via_form(client, db, "Lápis")
        shown = client.get("/produtos")
        assert "Produto «Lápis» adicionado." in shown.text
        assert shown.headers["cache-control"] == "no-store"
        again = client.get("/produtos")
        assert "adicionado" not in again.text and again.headers["cache-control"] == "no-cache"
        assert _names_listed(again.text) == ["Lápis", "Caneta"]

    def test_each_page_and_query_is_its_own(self, client: TestClient, db: Database) -> None:
        for nome in ("Caneta", "Lápis", "Caderno"):
            create_via_form(client, db, nome)
        assert _names_listed(_seen(client, "/produtos?ordem=nome")) == [
            "Caderno",
            "Caneta",
            "Lápis",
        ]
        assert _names_listed(_seen(client, "/produtos?ordem=-nome"))[0] == "Lápis"
        assert _names_listed(_seen(client, "/produtos?q=can")) == ["Caneta"]
        assert _names_listed(_seen(client, "/produtos?preco_min=3")) == []

    @pytest.mark.parametrize(
        "accept",
        ["application/json", "text/html;q=0.5, application/json", "application/*"],
    )
    def test_a_program_gets_json_after_a_browser_was_shown_the_page(
        self, client: TestClient, db: Database, accept: str
    ) -> None:
        create_via_form(client, db, "Caneta")
        _seen(client)
        json = client.get("/produtos", headers={"accept": accept})
        assert json.headers["content-type"] == "application/json"
        assert [p["nome"] for p in json.json()["produtos"]] == ["Caneta"]
        create_via_form(client, db, "Lápis")
        assert len(client.get("/produtos", headers=JSON).json()["produtos"]) == 2
        head = client.head("/produtos")
        assert head.status_code == 200 and head.content == b""

    def test_each_visitor_sees_their_own_list_across_signing_in_and_out(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "admin")
        add_user(database, "joao", "leitor")
        anonymous = _seen(client)
        assert "Entrar</a>" in anonymous and "maria" not in anonymous
        assert sign_in(client).status_code == 303
        create_via_form(client, db, "Caneta")
        maria = _seen(client)
        assert "maria <span" in maria and "Aplicar aos selecionados" in maria
        joao = as_browser(second_browser(client, "joao"))
        as_joao = _seen(client, **joao)
        assert "joao <span" in as_joao and "maria" not in as_joao
        assert "Aplicar aos selecionados" not in as_joao
        promoted = client.post(
            "/usuarios/joao", data={"_method": "PUT", "papel": "editor", "ativo": "sim"}
        )
        assert promoted.status_code == 303
        client.get("/usuarios")  # the notice, shown once
        assert "Aplicar aos selecionados" in _seen(client, **joao)
        client.post("/sair")
        signed_out = _seen(client)
        assert "maria" not in signed_out and "Entrar</a>" in signed_out
        assert "Caneta" in signed_out
        ended = client.get("/produtos", headers=as_browser("x" * 43)).text
        assert "maria" not in ended and "joao" not in ended

    @ONLY_SQLITE  # the store that keeps pages of products
    def test_a_kept_list_page_is_never_shown_for_a_newer_page_of_products(
        self, client: TestClient, db: Database
    ) -> None:
        """What a list page is kept by is the page of products the store gave (its serial):
        after a write the store reads a new page, and the list is made again from it."""
        create_via_form(client, db, "Caneta")
        before = set(list_pages._PAGES._kept)  # other tests' pages
        _seen(client)
        _seen(client, "/produtos?ordem=nome")
        made: set[Any] = set(list_pages._PAGES._kept) - before
        assert len(made) == 2
        create_via_form(client, db, "Lápis")
        assert "Lápis" in _seen(client)
        new = set(list_pages._PAGES._kept) - before - made
        [first] = [key for key in made if isinstance(key, tuple) and key[1] == b""]
        [again] = [key for key in new if isinstance(key, tuple) and key[1] == b""]
        assert again[0] != first[0]
