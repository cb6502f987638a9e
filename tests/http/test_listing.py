"""The list page a person came from: every save, removal and cancel goes back to it, and a
return address can only ever be a page of the list. page_size is 3 in the tests."""

import re
from urllib.parse import unquote_to_bytes

import pytest
from starlette.testclient import TestClient

from tests.databases import Database
from tests.helpers import Stored, count_products, create_via_form, form_on, stored


def edit_link(list_page: str, id: int) -> str:
    found = re.search(rf'<td class="nome"><a href="(/produtos/{id}[^"]*)"', list_page)
    assert found is not None, f"product {id} is not on the page"
    return found.group(1).replace("&amp;", "&")


@pytest.fixture
def deep(client: TestClient, db: Database) -> tuple[list[int], str]:
    """Eight products and the address of the list's second page (ids[4], ids[3], ids[2])."""
    ids = [create_via_form(client, db, f"Produto {n}") for n in range(8)]
    return ids, f"/produtos?depois={ids[5]}"


class TestTheWayBack:
    def test_the_first_page_carries_nothing(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        page = client.get("/produtos").text
        assert edit_link(page, id) == f"/produtos/{id}"
        assert 'href="/produtos/novo"' in page and 'name="lista"' not in page

    def test_saving_from_a_deep_page_returns_to_it(
        self, client: TestClient, db: Database, deep: tuple[list[int], str]
    ) -> None:
        ids, second = deep
        link = edit_link(client.get(second).text, ids[3])
        assert link == f"/produtos/{ids[3]}?lista=depois%3D{ids[5]}"
        edit = client.get(link).text
        assert f'<a href="{second}">Cancelar</a>' in edit
        assert f'<a href="{second}">Produtos</a>' in edit  # the breadcrumb
        form = form_on(edit, f"/produtos/{ids[3]}")
        assert form["lista"] == f"depois={ids[5]}"
        saved = client.post(f"/produtos/{ids[3]}", data={**form, "produto.nome": "Novo nome"})
        assert saved.status_code == 303 and saved.headers["location"] == second
        assert "Novo nome" in client.get(second).text

    def test_removing_from_a_deep_page_returns_to_it(
        self, client: TestClient, db: Database, deep: tuple[list[int], str]
    ) -> None:
        ids, second = deep
        form = form_on(client.get(second).text, f"/produtos/{ids[2]}", "remover")
        assert form["lista"] == f"depois={ids[5]}"
        removed = client.post(f"/produtos/{ids[2]}", data=form)
        assert removed.status_code == 303 and removed.headers["location"] == second
        assert stored(db, ids[2]) is None

    def test_a_new_product_lands_on_the_first_page_and_cancel_goes_back(
        self, client: TestClient, db: Database, deep: tuple[list[int], str]
    ) -> None:
        ids, second = deep
        page = client.get(second).text
        assert f'href="/produtos/novo?lista=depois%3D{ids[5]}"' in page
        form_page = client.get(f"/produtos/novo?lista=depois%3D{ids[5]}").text
        assert f'<a href="{second}">Cancelar</a>' in form_page
        form = form_on(form_page, "/produtos")
        added = client.post(
            "/produtos", data={**form, "produto.nome": "Nono", "produto.preco": "1"}
        )
        assert added.status_code == 303 and added.headers["location"] == "/produtos"

    def test_an_invalid_form_keeps_the_way_back(
        self, client: TestClient, db: Database, deep: tuple[list[int], str]
    ) -> None:
        ids, second = deep
        edit = client.get(f"/produtos/{ids[3]}?lista=depois%3D{ids[5]}").text
        refused = client.post(
            f"/produtos/{ids[3]}",
            data={**form_on(edit, f"/produtos/{ids[3]}"), "produto.preco": "abc"},
        )
        assert refused.status_code == 422
        assert form_on(refused.text, f"/produtos/{ids[3]}")["lista"] == f"depois={ids[5]}"
        assert f'<a href="{second}">Cancelar</a>' in refused.text

    def test_other_parameters_in_the_way_back_are_dropped(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        edit = client.get(f"/produtos/{id}?lista=x%3D%2F%2Fevil.example%26depois%3D{id}").text
        assert f'<a href="/produtos?depois={id}">Cancelar</a>' in edit
        assert "evil" not in edit


@pytest.mark.parametrize(
    "lista",
    [
        "abc",
        "//evil.example",
        "javascript:alert(1)",
        "depois=abc",
        "depois=007",
        "depois=1%26antes%3D2",
        f"depois={2**63}",
        "depois=%25FF",
        "depois=%FF",
        "depois%3D",
    ],
)
class TestAMalformedWayBack:
    def test_is_400_on_every_page_that_carries_it(
        self, client: TestClient, db: Database, lista: str
    ) -> None:
        id = create_via_form(client, db)
        for page in (f"/produtos/{id}", "/produtos/novo"):
            response = client.get(f"{page}?lista={lista}")
            assert response.status_code == 400, page
            assert "«lista» deve ser a consulta de uma página da lista" in response.text

    def test_is_400_on_every_write_and_changes_nothing(
        self, client: TestClient, db: Database, lista: str
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        sent = unquote_to_bytes(lista)
        body = b"produto.nome=Outra&produto.preco=5&lista=" + sent.replace(b"&", b"%26")
        form = {"content-type": "application/x-www-form-urlencoded"}
        writes = (("PUT", f"/produtos/{id}"), ("POST", "/produtos"), ("DELETE", f"/produtos/{id}"))
        for method, path in writes:
            response = client.request(method, path, content=body, headers=form)
            assert response.status_code == 400, (method, response.text)
        assert stored(db, id) == Stored("Caneca", "", 1000, 1) and count_products(db) == 1
