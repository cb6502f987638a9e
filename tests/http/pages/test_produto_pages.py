"""The pages a worker keeps (produto_pages.product_page, new_form_page): each read shows what is
stored now, to whoever is asking now, through HTTP on the real app and a real database."""

import re
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.testclient import TestClient

from catalogo.domain.contas import Principal
from catalogo.domain.produtos import Produto, stored
from catalogo.http import identity, templating
from catalogo.http.listing import Listing
from catalogo.http.pages import produto_pages
from tests.databases import Database
from tests.helpers import JSON, SENHA, add_user, create_via_form, sign_in
from tests.http.resources.test_contas import as_browser, second_browser


def _name_shown(page: str) -> str:
    found = re.search(r'name="produto.nome" type="text" value="([^"]*)"', page)
    assert found is not None, page
    return found.group(1)


class TestTheEditPageKept:
    def test_a_new_version_is_shown_at_once(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db, "Caneta")
        assert _name_shown(client.get(f"/produtos/{id}").text) == "Caneta"
        client.post(
            f"/produtos/{id}",
            data={"_method": "PUT", "produto.nome": "Lápis", "produto.preco": "2,50"},
        )
        assert _name_shown(client.get(f"/produtos/{id}").text) == "Lápis"

    def test_a_change_written_by_another_instance_is_shown_at_once(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneta")
        client.get(f"/produtos/{id}")
        db.execute("UPDATE produtos SET nome = 'Borracha' WHERE id = ?", (id,))
        assert _name_shown(client.get(f"/produtos/{id}").text) == "Borracha"

    def test_a_removed_product_is_gone_and_a_restored_one_back(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneta")
        page = client.get(f"/produtos/{id}")
        client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        assert client.get(f"/produtos/{id}").status_code == 404
        assert client.post(f"/produtos/{id}/restauracao").status_code == 303
        again = client.get(f"/produtos/{id}")
        assert again.status_code == 200
        assert again.headers["etag"] != page.headers["etag"]
        assert _name_shown(again.text) == "Caneta"

    def test_the_list_to_return_to_is_the_one_asked_for(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneta")
        plain = client.get(f"/produtos/{id}").text
        searched = client.get(f"/produtos/{id}", params={"lista": "q=caneta"}).text
        assert 'href="/produtos?q=caneta"' in searched
        assert 'href="/produtos?q=caneta"' not in plain
        assert client.get(f"/produtos/{id}", params={"lista": "depois=x"}).status_code == 400

    def test_a_list_to_return_to_that_looks_like_a_slot_is_shown_as_it_was_asked(
        self, client: TestClient, db: Database
    ) -> None:
        """The edit page's skeleton (templating.Skeleton) is rendered with the list's query: a
        query made of the private-use characters a slot is made of stays text."""
        id = create_via_form(client, db, "Caneta")
        for query in ("q=\ue000nome\ue001", "q=\ue000id\ue001&ordem=preco", "q=%EE%80%80x"):
            page = client.get(f"/produtos/{id}", params={"lista": query})
            assert page.status_code == 200
            assert _name_shown(page.text) == "Caneta"
            assert page.text.count("Caneta") == client.get(f"/produtos/{id}").text.count("Caneta")

    @pytest.mark.parametrize(
        "accept",
        ["application/json", "text/html;q=0.5, application/json", "application/*"],
    )
    def test_a_program_gets_json_after_a_browser_was_shown_the_page(
        self, client: TestClient, db: Database, accept: str
    ) -> None:
        id = create_via_form(client, db, "Caneta")
        assert client.get(f"/produtos/{id}").headers["content-type"].startswith("text/html")
        json = client.get(f"/produtos/{id}", headers={"accept": accept})
        assert json.headers["content-type"] == "application/json"
        assert json.json()["nome"] == "Caneta"
        head = client.head(f"/produtos/{id}")
        assert head.content == b""
        assert head.headers["etag"] == client.get(f"/produtos/{id}").headers["etag"]

    def test_each_visitor_sees_their_own_page_across_signing_in_and_out(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "admin")
        add_user(database, "joao", "leitor")
        assert sign_in(client).status_code == 303
        id = create_via_form(client, db, "Caneta")
        maria = client.get(f"/produtos/{id}").text
        assert "maria <span" in maria and "Salvar" in maria
        joao = as_browser(second_browser(client, "joao"))
        as_joao = client.get(f"/produtos/{id}", headers=joao).text
        assert "joao <span" in as_joao and "maria" not in as_joao and "Salvar" not in as_joao
        promoted = client.post(
            "/usuarios/joao", data={"_method": "PUT", "papel": "editor", "ativo": "sim"}
        )
        assert promoted.status_code == 303
        assert "Salvar" in client.get(f"/produtos/{id}", headers=joao).text
        client.post("/sair")
        anonymous = client.get(f"/produtos/{id}").text
        assert "maria" not in anonymous and "Entrar</a>" in anonymous
        ended = client.get(f"/produtos/{id}", headers=as_browser("x" * 43)).text
        assert "maria" not in ended

    def test_a_session_ended_elsewhere_is_said_on_the_page(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "maria", "editor")
        other = second_browser(client, "maria")
        sign_in(client)
        id = create_via_form(client, db, "Caneta")
        client.post("/sair")
        assert "maria" in client.get(f"/produtos/{id}", headers=as_browser(other)).text
        client.cookies.set("sessao", other)
        client.post("/sair")
        client.cookies.clear()
        ended = client.get(f"/produtos/{id}", headers=as_browser(other)).text
        assert "Sua sessão terminou." in ended
        assert "Sua sessão terminou." not in client.get(f"/produtos/{id}").text


class TestTheNewFormKept:
    def test_it_follows_the_list_to_return_to(self, client: TestClient) -> None:
        anonymous = client.get("/produtos/novo").text
        assert "Entrar" not in anonymous and 'name="lista"' not in anonymous
        assert 'value="q=caneta"' in client.get("/produtos/novo?lista=q%3Dcaneta").text
        assert client.get("/produtos/novo", headers=JSON).status_code == 406

    def test_it_follows_who_signs_in_and_out(self, client: TestClient, database: str) -> None:
        add_user(database, "maria", "editor", SENHA)
        sign_in(client)
        assert "maria <span" in client.get("/produtos/novo").text
        client.post("/sair")
        assert client.get("/produtos/novo").headers["location"].startswith("/entrar")


# Who may look at an edit page, as http/access.py notes them: no accounts; anonymous where there
# are; an editor, a reader; a browser whose session ended.
_VISITORS: list[tuple[Principal | None, identity.Mode, bool]] = [
    (None, "off", False),
    (None, "writes", False),
    (Principal(7, "maria <&>", "editor"), "writes", False),
    (Principal(8, "joão", "leitor"), "all", False),
    (None, "writes", True),
]
_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
_MOMENT = st.floats(min_value=1e9, max_value=4e9)


def _page_request(id: int, query: bytes, visitor: int) -> Request:
    request = Request(
        {"type": "http", "method": "GET", "path": f"/produtos/{id}", "query_string": query}
    )
    identity.note(request, *_VISITORS[visitor])
    return request


class TestTheEditPagesSkeleton:
    @given(
        id=st.integers(1, 2**63 - 1),
        versao=st.integers(1, 10**6),
        codigo=st.none() | _TEXT,
        nome=_TEXT,
        descricao=_TEXT,
        centavos=st.integers(1, 99_999_999_999),
        criado_em=_MOMENT,
        later=st.sampled_from([0.0, 1.0, 59.0, 60.0, 86_400.0]) | _MOMENT,
        query=st.sampled_from([b"", b"lista=q%3Dcaneca%26preco_max%3D5", b"lista=ordem%3Dpreco"]),
        visitor=st.integers(0, len(_VISITORS) - 1),
    )
    def test_a_filled_skeleton_is_the_page_the_template_renders(
        self, visitor: int, query: bytes, criado_em: float, later: float, **fields: Any
    ) -> None:
        """Whatever a product holds, whoever looks and whichever list they return to, the page
        filled in (product_page) is, byte for byte, the template rendered for that product."""
        centavos = fields.pop("centavos")
        produto = stored(
            criado_em=criado_em,
            atualizado_em=criado_em + later if later < 1e9 else later,
            preco=Decimal(centavos).scaleb(-2),
            **fields,
        )
        request = _page_request(produto.id or 0, query, visitor)
        assert produto_pages.product_page(request, produto) == _rendered(request, produto)


def _rendered(request: Request, produto: Produto) -> bytes:
    """The edit page rendered whole, as a refused write renders it."""
    listing = Listing.returning_to(request.query_params)
    who = identity.visitor(request)
    context = produto_pages._editing(who, produto, produto_pages.form_values(produto), {}, listing)
    criado, atualizado = produto_pages._dates(produto)
    page = templating.load().page(
        "produtos/editar.html", **context, criado=criado, atualizado=atualizado
    )
    return page
