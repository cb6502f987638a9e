"""The spec's reference flow, through HTTP on the real app and a real SQLite file."""

import dataclasses
import re

import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import (
    JSON,
    Stored,
    count_products,
    create_via_form,
    create_via_json,
    form_on,
    post_form,
    stored,
)

FORM_BODY = {
    "produto.nome": "Caderno",
    "produto.descricao": "Capa dura\r\n96 folhas",
    "produto.preco": "1.234,56",
}


class TestTheList:
    def test_an_empty_catalog_says_so_and_links_to_the_form(self, client: TestClient) -> None:
        response = client.get("/produtos")
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert "Nenhum produto cadastrado" in response.text
        assert 'href="/produtos/novo"' in response.text

    def test_each_product_shows_its_name_price_and_a_link_to_its_page(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneta <azul>", "1234567,8")
        page = client.get("/produtos").text
        assert f'<a href="/produtos/{id}">Caneta &lt;azul&gt;</a>' in page
        assert "R$ 1.234.567,80" in page

    def test_removal_is_a_form_post_with_method_delete_never_a_link(
        self, client: TestClient, db: Database
    ) -> None:
        """No question first: the notice after a removal offers Desfazer."""
        id = create_via_form(client, db)
        client.put(f"/produtos/{id}", data={"produto.nome": "Caneta", "produto.preco": "1"})
        for page in (client.get("/produtos").text, client.get(f"/produtos/{id}").text):
            form = re.search(
                rf'<form method="post" action="/produtos/{id}" class="remover">.*?</form>',
                page,
                re.S,
            )
            assert form is not None
            assert '<input type="hidden" name="_method" value="DELETE">' in form.group(0)
            assert '<input type="hidden" name="produto.versao" value="2">' in form.group(0)
            assert '<button type="submit" name="_method" value="DELETE"' in form.group(0)
            assert "_method=DELETE" not in page

    def test_two_gets_of_an_unchanged_list_are_byte_identical(
        self, client: TestClient, db: Database
    ) -> None:
        create_via_form(client, db)
        client.get("/produtos")  # the one that shows the notice
        assert client.get("/produtos").content == client.get("/produtos").content

    def test_the_root_leads_to_the_list(self, client: TestClient) -> None:
        response = client.get("/")
        assert response.status_code == 302
        assert response.headers["location"] == "/produtos"


class TestPaging:
    """page_size is 3 in the tests; the list is newest first."""

    def ids(self, html: str) -> list[int]:
        return [int(i) for i in re.findall(r'<td class="nome"><a href="/produtos/(\d+)[?"]', html)]

    def test_walking_next_then_prev_visits_every_product_once(
        self, client: TestClient, db: Database
    ) -> None:
        created = [create_via_form(client, db, f"P{n}") for n in range(8)]
        seen, url, pages = [], "/produtos", []
        while url:
            response = client.get(url)
            pages.append(response)
            seen += self.ids(response.text)
            found = re.search(r'<a rel="next" href="([^"]+)"', response.text)
            url = found.group(1).replace("&amp;", "&") if found else ""
        assert seen == sorted(created, reverse=True)
        assert [len(self.ids(p.text)) for p in pages] == [3, 3, 2]
        back = re.search(r'<a rel="prev" href="([^"]+)"', pages[-1].text)
        assert back is not None
        assert self.ids(client.get(back.group(1)).text) == self.ids(pages[1].text)

    def test_the_link_header_matches_the_links_in_the_page(
        self, client: TestClient, db: Database
    ) -> None:
        ids = [create_via_form(client, db) for _ in range(7)]
        response = client.get(f"/produtos?depois={ids[4]}")
        assert response.headers["link"] == (
            f'</produtos>; rel="prev", </produtos?depois={ids[1]}>; rel="next"'
        )
        assert '<a rel="prev" href="/produtos">' in response.text
        assert f'<a rel="next" href="/produtos?depois={ids[1]}">' in response.text

    def test_prev_from_deep_in_the_list_is_a_full_page(
        self, client: TestClient, db: Database
    ) -> None:
        ids = [create_via_form(client, db) for _ in range(10)]
        response = client.get(f"/produtos?depois={ids[2]}")
        assert self.ids(response.text) == [ids[1], ids[0]]
        assert f'rel="prev" href="/produtos?antes={ids[1]}"' in response.text
        antes = client.get(f"/produtos?antes={ids[1]}")
        assert self.ids(antes.text) == [ids[4], ids[3], ids[2]]

    def test_one_page_has_no_paging_links(self, client: TestClient, db: Database) -> None:
        create_via_form(client, db)
        response = client.get("/produtos")
        assert "link" not in response.headers
        assert 'rel="next"' not in response.text and 'rel="prev"' not in response.text

    def test_a_page_past_the_end_is_empty_and_links_back_to_the_first(
        self, client: TestClient, db: Database
    ) -> None:
        first = create_via_form(client, db)
        response = client.get(f"/produtos?depois={first}")
        assert response.status_code == 200
        assert "Não há produtos nesta página" in response.text
        assert response.headers["link"] == '</produtos>; rel="prev"'

    @pytest.mark.parametrize(
        "query",
        [
            "depois=abc",
            "depois=0",
            "depois=-1",
            "antes=1.5",
            f"depois={2**63}",
            "antes=1&depois=2",
            "depois=%D9%A1",
            "depois=007",
            "antes=%2B1",
        ],
    )
    def test_a_bad_cursor_is_a_400_that_says_what_is_wrong(
        self, client: TestClient, query: str
    ) -> None:
        response = client.get(f"/produtos?{query}")
        assert response.status_code == 400
        assert "antes" in response.text or "depois" in response.text


class TestCreation:
    def test_a_post_adds_one_product_and_sees_the_browser_back_to_the_list(
        self, client: TestClient, db: Database
    ) -> None:
        response = client.post("/produtos", data=FORM_BODY)
        assert response.status_code == 303
        assert response.headers["location"] == "/produtos"
        assert db.execute(f"SELECT nome, descricao, {db.centavos} FROM produtos").fetchall() == [
            ("Caderno", "Capa dura\n96 folhas", 123456)
        ]

    def test_multipart_form_data_works_like_urlencoded(
        self, client: TestClient, db: Database
    ) -> None:
        response = client.post("/produtos", files={k: (None, v) for k, v in FORM_BODY.items()})
        assert response.status_code == 303
        assert count_products(db) == 1

    def test_each_repetition_adds_one_more_product(self, client: TestClient, db: Database) -> None:
        for _ in range(3):
            assert client.post("/produtos", data=FORM_BODY).status_code == 303
        assert count_products(db) == 3

    def test_the_notice_shows_once_then_is_gone(self, client: TestClient) -> None:
        client.post("/produtos", data=FORM_BODY)
        first = client.get("/produtos")
        assert "Produto «Caderno» adicionado." in first.text
        assert first.headers["cache-control"] == "no-store"
        second = client.get("/produtos")
        assert "adicionado" not in second.text
        assert second.headers["cache-control"] == "no-cache"

    @pytest.mark.parametrize(
        ("base", "secure"), [("http://testserver", False), ("https://testserver", True)]
    )
    def test_the_notice_cookie_is_http_only_same_site_and_secure_over_https(
        self, settings: Settings, base: str, secure: bool
    ) -> None:
        with TestClient(create_app(settings), base_url=base, follow_redirects=False) as client:
            cookie = client.post("/produtos", data=FORM_BODY).headers["set-cookie"]
        assert cookie.startswith("aviso=adicionado%3A1%3ACaderno; ")
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
        assert ("Secure" in cookie) is secure

    def test_behind_a_trusted_balancer_over_https_the_notice_cookie_is_secure_too(
        self, settings: Settings
    ) -> None:
        balanced = dataclasses.replace(settings, trusted_proxies=("testclient",))
        with TestClient(create_app(balanced), follow_redirects=False) as client:
            forwarded = {"x-forwarded-proto": "https"}
            cookie = client.post("/produtos", data=FORM_BODY, headers=forwarded).headers[
                "set-cookie"
            ]
        assert cookie.startswith("aviso=") and cookie.endswith("; Secure")

    def test_an_id_in_the_body_is_ignored(self, client: TestClient, db: Database) -> None:
        response = client.post("/produtos", data={**FORM_BODY, "produto.id": "777"})
        assert response.status_code == 303
        assert db.execute("SELECT id, nome FROM produtos").fetchall() == [(1, "Caderno")]

    def test_invalid_input_shows_the_form_again_with_what_was_typed_and_writes_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        response = client.post(
            "/produtos",
            data={"produto.nome": "  ", "produto.descricao": "<i>x</i>", "produto.preco": "1.234"},
        )
        assert response.status_code == 422
        assert 'action="/produtos"' in response.text
        assert "&lt;i&gt;x&lt;/i&gt;</textarea>" in response.text
        assert 'value="1.234"' in response.text
        assert 'id="erro-nome">Preencha este campo.' in response.text
        assert 'id="erro-preco">«1.234» é ambíguo' in response.text
        assert 'id="erro-descricao"' not in response.text
        assert count_products(db) == 0

    def test_missing_fields_are_named(self, client: TestClient, db: Database) -> None:
        response = client.post("/produtos", data={"outro": "x"})
        assert response.status_code == 422
        assert response.text.count('class="erro"') == 2
        assert count_products(db) == 0


class TestTheForms:
    def test_the_new_form_posts_the_three_fields_to_the_collection(
        self, client: TestClient
    ) -> None:
        page = client.get("/produtos/novo").text
        assert '<form method="post" action="/produtos"' in page
        for campo in ("nome", "descricao", "preco"):
            assert f'name="produto.{campo}"' in page
        assert "_method" not in page

    def test_the_new_form_carries_the_field_rules(self, client: TestClient) -> None:
        page = client.get("/produtos/novo").text
        assert re.search(r'name="produto.nome"[^>]*required="required" maxlength="200"', page)
        assert re.search(r'<textarea[^>]*name="produto.descricao"[^>]*maxlength="5000"', page)

    def test_the_edit_page_posts_put_to_the_product_with_its_values_and_no_hidden_id(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Lápis", "1234,5")
        page = client.get(f"/produtos/{id}").text
        form = re.search(
            rf'<form method="post" action="/produtos/{id}" class="produto".*?</form>', page, re.S
        )
        assert form is not None
        html = form.group(0)
        assert '<input type="hidden" name="_method" value="PUT">' in html
        assert '<button type="submit" name="_method" value="PUT"' in html
        assert 'value="Lápis"' in html and 'value="1234,50"' in html
        assert "<textarea" in html
        assert "produto.id" not in page and 'name="id"' not in page
        assert f'<form method="post" action="/produtos/{id}" class="remover">' in page

    def test_the_edit_pages_heading_carries_the_name_and_its_breadcrumb_the_number(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca azul")
        page = client.get(f"/produtos/{id}").text
        assert "<title>Editar «Caneca azul» · Catálogo</title>" in page
        assert '<h1 class="nome-produto">Editar «Caneca azul»</h1>' in page
        assert f'<span aria-current="page">Nº {id}</span></nav>' in page

    def test_a_long_name_is_shortened_in_the_title_and_the_notice_never_in_the_heading(
        self, client: TestClient, db: Database
    ) -> None:
        nome = "Caneca " + "muito comprida " * 12 + "fim"
        id = create_via_form(client, db, nome)
        page = client.get(f"/produtos/{id}").text
        assert f'<h1 class="nome-produto">Editar «{nome}»</h1>' in page
        title = page.split("<title>")[1].split("</title>")[0]
        assert title.endswith("…» · Catálogo") and len(title) < 100
        client.post(
            f"/produtos/{id}",
            data={"_method": "PUT", "produto.nome": nome + "!", "produto.preco": "1"},
        )
        notice = client.get("/produtos").text.split('role="status"')[1].split("</p>")[0]
        assert "…» atualizado." in notice and "fim" not in notice

    def test_the_forms_leave_checking_to_the_server_and_the_new_one_focuses_nome(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        new, edit = client.get("/produtos/novo").text, client.get(f"/produtos/{id}").text
        assert 'class="produto" accept-charset="utf-8" novalidate>' in new
        assert 'class="produto" accept-charset="utf-8" novalidate>' in edit
        assert new.count("autofocus") == 1 and re.search(r'id="produto-nome"[^>]* autofocus>', new)
        assert "autofocus" not in edit

    def test_a_refused_form_says_so_in_its_title_and_its_summary_links_each_bad_field(
        self, client: TestClient
    ) -> None:
        page = client.post("/produtos", data={"produto.nome": "", "produto.preco": "1.234"})
        assert page.status_code == 422
        assert "<title>Erro: Novo produto · Catálogo</title>" in page.text
        summary = page.text.split('<div class="resumo-erros"')[1].split("</div>")[0]
        assert summary.startswith(' tabindex="-1" autofocus')
        assert "Corrija os campos abaixo para salvar" in summary
        assert '<li><a href="#produto-nome">Nome: Preencha este campo.</a></li>' in summary
        assert '<li><a href="#produto-preco">Preço: ' in summary
        assert page.text.count("autofocus") == 1
        only_the_price = client.post("/produtos", data={"produto.nome": "ok", "produto.preco": "x"})
        assert only_the_price.text.count("autofocus") == 1


class TestUpdate:
    @pytest.mark.parametrize("how", ["override", "put"])
    def test_an_update_changes_the_fields_and_sees_the_browser_back(
        self, client: TestClient, db: Database, how: str
    ) -> None:
        id = create_via_form(client, db)
        if how == "override":
            response = client.post(f"/produtos/{id}", data={**FORM_BODY, "_method": "PUT"})
        else:
            response = client.put(f"/produtos/{id}", data=FORM_BODY)
        assert response.status_code == 303
        assert response.headers["location"] == "/produtos"
        assert stored(db, id) == Stored("Caderno", "Capa dura\n96 folhas", 123456, 2)
        assert "Produto «Caderno» atualizado." in client.get("/produtos").text

    def test_saving_an_untouched_form_changes_nothing_and_says_so(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Régua", "5")
        untouched = form_on(client.get(f"/produtos/{id}").text, f"/produtos/{id}")
        response = client.post(f"/produtos/{id}", data=untouched)
        assert response.status_code == 303
        assert stored(db, id) == Stored("Régua", "", 500, 1)
        assert _events(db, id) == 1
        assert "Nada mudou em «Régua»" in client.get("/produtos").text

    def test_an_edit_that_only_spells_the_same_values_otherwise_changes_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Régua", "5")
        same = {"produto.nome": "  Re\u0301gua ", "produto.preco": "R$ 5,00", "_method": "PUT"}
        assert client.post(f"/produtos/{id}", data=same).status_code == 303
        assert stored(db, id) == Stored("Régua", "", 500, 1)
        assert _events(db, id) == 1

    def test_an_unchanged_json_update_is_200_with_the_product_at_its_version(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Régua", "5")
        body = {"nome": "Régua", "descricao": "", "preco": "5.00"}
        response = client.put(f"/produtos/{id}", json=body, headers=JSON)
        assert response.status_code == 200
        assert response.json()["versao"] == 1 and response.headers["etag"] == '"1-json"'
        assert _events(db, id) == 1

    def test_the_browser_form_sends_method_twice_and_that_is_fine(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        body = "_method=PUT&produto.nome=Novo&produto.preco=3&_method=PUT"
        response = client.post(
            f"/produtos/{id}",
            content=body,
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert response.status_code == 303
        assert stored(db, id) == Stored("Novo", "", 300, 2)

    def test_an_invalid_update_shows_the_form_again_and_changes_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Régua", "5")
        response = client.put(
            f"/produtos/{id}", data={"produto.nome": "x" * 201, "produto.preco": "0"}
        )
        assert response.status_code == 422
        assert f'action="/produtos/{id}"' in response.text
        assert "Use no máximo 200 caracteres." in response.text
        assert "O preço deve ser maior que zero." in response.text
        assert stored(db, id) == Stored("Régua", "", 500, 1)

    def test_an_id_in_the_body_never_moves_the_update(
        self, client: TestClient, db: Database
    ) -> None:
        a, b = create_via_form(client, db, "A"), create_via_form(client, db, "B")
        client.put(f"/produtos/{a}", data={**FORM_BODY, "produto.id": str(b)})
        assert stored(db, b) == Stored("B", "", 250, 1)
        assert stored(db, a) == Stored("Caderno", "Capa dura\n96 folhas", 123456, 2)

    @pytest.mark.parametrize("data", [FORM_BODY, {"produto.nome": ""}])
    def test_updating_an_unknown_product_is_404(
        self, client: TestClient, data: dict[str, str]
    ) -> None:
        response = client.put("/produtos/99", data=data)
        assert response.status_code == 404
        assert "Não há produto com o número 99" in response.text


class TestNamesThatLie:
    """A name must look like what it is: not empty, in its own order, on one line, one spelling."""

    def test_a_name_of_only_invisible_characters_is_refused_like_an_empty_one(
        self, client: TestClient, db: Database
    ) -> None:
        response = post_form(client, "\u200b\ufeff \u2060\u00ad\u3164\u2800")
        assert response.status_code == 422
        assert 'id="erro-nome">Preencha este campo.</p>' in response.text
        assert count_products(db) == 0

    @pytest.mark.parametrize(
        ("nome", "mensagem"),
        [
            ("Caneca \u202eazul", "muda a direção do texto (código U+202E)"),
            ("Caneca azul\u2066", "muda a direção do texto (código U+2066)"),
            ("Caneca\u2028azul", "tem uma quebra de linha (código U+2028)"),
        ],
    )
    def test_an_update_to_a_name_that_lies_says_why_beside_it_and_changes_nothing(
        self, client: TestClient, db: Database, nome: str, mensagem: str
    ) -> None:
        id = create_via_form(client, db, "Caneca", "2")
        response = client.put(f"/produtos/{id}", data={"produto.nome": nome, "produto.preco": "3"})
        assert response.status_code == 422
        assert re.search(f'id="erro-nome">[^<]*{re.escape(mensagem)}', response.text)
        assert stored(db, id) == Stored("Caneca", "", 200, 1)

    def test_text_is_stored_in_one_spelling_without_invisible_ends(
        self, client: TestClient, db: Database
    ) -> None:
        for nome, descricao in [
            ("Caf\u00e9 com p\u00e3o", "Quente\nDo dia"),
            ("\u200bCafe\u0301 com pa\u0303o\ufeff", "Quente\u2028Do dia"),
        ]:
            form = {"produto.nome": nome, "produto.descricao": descricao, "produto.preco": "9"}
            assert client.post("/produtos", data=form).status_code == 303
        assert (
            db.execute("SELECT nome, descricao FROM produtos").fetchall()
            == [("Caf\u00e9 com p\u00e3o", "Quente\nDo dia")] * 2
        )
        assert "Produto «Caf\u00e9 com p\u00e3o» adicionado." in client.get("/produtos").text


class TestRemoval:
    @pytest.mark.parametrize("how", ["override", "delete"])
    def test_a_removal_deletes_the_product_and_sees_the_browser_back(
        self, client: TestClient, db: Database, how: str
    ) -> None:
        id = create_via_form(client, db, "Borracha")
        if how == "override":
            response = client.post(f"/produtos/{id}", data={"_method": "DELETE"})
        else:
            response = client.delete(f"/produtos/{id}")
        assert response.status_code == 303
        assert stored(db, id) is None
        assert "Produto «Borracha» removido." in client.get("/produtos").text
        assert client.get(f"/produtos/{id}").status_code == 404

    def test_removing_twice_is_404_the_second_time(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        assert client.delete(f"/produtos/{id}").status_code == 303
        assert client.delete(f"/produtos/{id}").status_code == 404

    def test_a_removed_id_is_never_given_to_another_product(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db)
        client.delete(f"/produtos/{id}")
        assert create_via_form(client, db) > id


class TestShow:
    def test_an_unknown_product_is_a_404_page_in_the_site_layout(self, client: TestClient) -> None:
        response = client.get("/produtos/42")
        assert response.status_code == 404
        assert "<h1>Produto não encontrado</h1>" in response.text
        assert "Não há produto com o número 42" in response.text

    def test_head_answers_like_get_without_a_body(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db)
        client.get("/produtos")
        for path in ("/produtos", "/produtos/novo", f"/produtos/{id}"):
            get, head = client.get(path), client.head(path)
            assert head.status_code == 200
            assert head.content == b""
            assert head.headers["content-length"] == str(len(get.content))


def test_a_get_never_writes_to_the_database(client: TestClient, db: Database) -> None:
    ids = [create_via_form(client, db) for _ in range(5)]
    client.get("/produtos")  # lets the notice cookie go
    before = db.writes()
    for path in (
        "/produtos",
        f"/produtos?depois={ids[2]}",
        f"/produtos?antes={ids[0]}",
        "/produtos/novo",
        f"/produtos/{ids[0]}",
        "/produtos/999",
    ):
        client.get(path)
        client.head(path)
    assert db.writes() == before


def _events(db: Database, id: int) -> int:
    return int(db.execute("SELECT count(*) FROM eventos WHERE produto_id = ?", (id,)).fetchone()[0])


class TestCodigo:
    """The shop's own code on the pages: a field before the name, a column on the list."""

    def test_the_forms_ask_for_the_code_before_the_name(
        self, client: TestClient, db: Database
    ) -> None:
        novo = client.get("/produtos/novo").text
        assert re.search(r'name="produto.codigo"[^>]*maxlength="60"', novo)
        assert novo.index('name="produto.codigo"') < novo.index('name="produto.nome"')
        response = client.post("/produtos", data={**FORM_BODY, "produto.codigo": " CAD-96 "})
        assert response.status_code == 303
        id = int(db.execute("SELECT max(id) FROM produtos").fetchone()[0])
        editar = client.get(f"/produtos/{id}").text
        assert form_on(editar, f"/produtos/{id}", "produto")["produto.codigo"] == "CAD-96"

    def test_the_list_shows_each_products_code_and_finds_it_by_its_words(
        self, client: TestClient
    ) -> None:
        client.post("/produtos", data={**FORM_BODY, "produto.codigo": "CAD-96"})
        client.post("/produtos", data={**FORM_BODY, "produto.nome": "Lápis"})
        lista = client.get("/produtos").text
        assert '<th scope="col" class="codigo">Código</th>' in lista
        assert (
            '<td class="codigo" title="CAD-96">CAD-96</td>' in lista
            and '<td class="codigo"></td>' in lista
        )
        found = client.get("/produtos?q=cad-96").text
        assert "CAD-96" in found and "Lápis" not in found

    def test_a_taken_code_shows_the_form_again_naming_the_product_that_holds_it(
        self, client: TestClient, db: Database
    ) -> None:
        client.post("/produtos", data={**FORM_BODY, "produto.codigo": "CAD-96"})
        holder = int(db.execute("SELECT max(id) FROM produtos").fetchone()[0])
        client.post(f"/produtos/{holder}", data={"_method": "DELETE"})
        response = client.post(
            "/produtos", data={**FORM_BODY, "produto.nome": "Outro", "produto.codigo": "cad-96"}
        )
        assert response.status_code == 422
        assert f"é do produto nº {holder}, que está em Removidos" in response.text
        assert "restauracao" not in response.text  # a clerk's words, not the API's
        assert 'href="#produto-codigo"' in response.text and 'value="Outro"' in response.text
        assert count_products(db) == 0

    def test_a_program_is_given_the_address_that_restores_a_removed_product_holding_the_code(
        self, client: TestClient, db: Database
    ) -> None:
        caneca = {"nome": "Caneca", "preco": "12.50"}
        holder = int(str(create_via_json(client, {**caneca, "codigo": "CAD-96"})["id"]))
        live = int(str(create_via_json(client, {**caneca, "codigo": "CAD-97"})["id"]))
        client.delete(f"/produtos/{holder}")
        created = client.post("/produtos", json={**caneca, "codigo": "cad-96"}, headers=JSON)
        assert created.status_code == 422
        assert created.json()["restauracao"] == f"/produtos/{holder}/restauracao"
        assert "Removidos" in created.json()["errors"]["produto.codigo"]
        edited = client.put(f"/produtos/{live}", json={**caneca, "codigo": "CAD-96"}, headers=JSON)
        assert edited.status_code == 422
        assert edited.json()["restauracao"] == f"/produtos/{holder}/restauracao"
        taken = client.post("/produtos", json={**caneca, "codigo": "CAD-97"}, headers=JSON)
        assert taken.status_code == 422 and "restauracao" not in taken.json()
        restored = client.post(created.json()["restauracao"], headers=JSON)
        assert restored.status_code == 200 and restored.json()["codigo"] == "CAD-96"
        assert count_products(db) == 2

    def test_the_specs_form_without_the_field_keeps_the_code_and_a_blank_field_clears_it(
        self, client: TestClient, db: Database
    ) -> None:
        client.post("/produtos", data={**FORM_BODY, "produto.codigo": "CAD-96"})
        id = int(db.execute("SELECT max(id) FROM produtos").fetchone()[0])
        renamed = {**FORM_BODY, "_method": "PUT", "produto.nome": "Caderno novo"}
        assert client.post(f"/produtos/{id}", data=renamed).status_code == 303
        assert db.execute("SELECT codigo FROM produtos").fetchone() == ("CAD-96",)
        cleared = {**renamed, "produto.codigo": ""}
        assert client.post(f"/produtos/{id}", data=cleared).status_code == 303
        assert db.execute("SELECT codigo, codigo_chave FROM produtos").fetchone() == (None, None)
