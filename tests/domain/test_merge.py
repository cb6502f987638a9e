"""The three-way merge of an edit saved over a newer version: field by field (domain/merge.py), what
only one side changed is kept, equal changes agree, and only different changes to one field are
left to a person; then through the edit form (services.produtos.save_merged), on SQLite and
PostgreSQL, where only a field both changed differently is offered as a choice."""

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from catalogo.domain.historico import Fields, fields_json, parse_fields
from catalogo.domain.merge import merge
from catalogo.domain.produtos import Produto
from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from catalogo.storage import VersionConflict
from tests.databases import Database
from tests.helpers import (
    JSON,
    Stored,
    add_user,
    create_via_form,
    form_on,
    sign_in,
    storage_replaced,
    stored,
)


def product(nome: str = "Caneca", descricao: str = "Azul", preco: str = "10.00") -> Produto:
    return Produto(nome=nome, descricao=descricao, preco=Decimal(preco))


BASE = parse_fields(fields_json(product()))


def test_fields_only_the_other_side_changed_keep_their_saved_value() -> None:
    merged = merge(BASE, product(nome="Caneca grande"), product(preco="12.00"))
    assert merged.produto == product(nome="Caneca grande", preco="12.00")
    assert merged.theirs == ("preco",) and merged.conflicts == ()


def test_identical_changes_agree_and_name_no_one() -> None:
    merged = merge(BASE, product(preco="12.00"), product(preco="12.00"))
    assert merged.produto == product(preco="12.00")
    assert merged.theirs == () and merged.conflicts == ()


def test_different_changes_to_one_field_are_a_conflict_kept_at_this_persons_value() -> None:
    merged = merge(BASE, product(preco="15.00"), product(nome="Xícara", preco="12.00"))
    assert merged.conflicts == ("preco",) and merged.theirs == ("nome",)
    assert merged.produto == product(nome="Xícara", preco="15.00")


def test_a_price_written_otherwise_is_the_same_price() -> None:
    base: Fields = {"nome": "Caneca", "descricao": "Azul", "preco": "10.0"}
    merged = merge(base, product(preco="10"), product(preco="12.00"))
    assert merged.produto.preco == Decimal("12.00") and merged.conflicts == ()


def test_a_code_changed_on_one_side_only_is_kept_and_an_event_before_codes_had_none() -> None:
    base = parse_fields(fields_json(product()))
    assert base is not None and base["codigo"] is None
    theirs = product().model_copy(update={"codigo": "CAN-1"})
    merged = merge(base, product(nome="Xícara"), theirs)
    assert merged.produto.codigo == "CAN-1" and merged.theirs == ("codigo",)
    before_codes = {campo: value for campo, value in base.items() if campo != "codigo"}
    assert merge(before_codes, product(nome="Xícara"), theirs).produto.codigo == "CAN-1"


def test_without_a_base_every_field_that_differs_is_a_conflict() -> None:
    merged = merge(None, product(nome="A"), product(nome="B", preco="3.00"))
    assert merged.conflicts == ("nome", "preco") and merged.theirs == ()


TEXT = st.sampled_from(["Caneca", "Xícara", "Prato"])
PRICE = st.sampled_from(["10.00", "12.00", "15.50"])


@given(TEXT, TEXT, PRICE, TEXT, TEXT, PRICE)
def test_a_merge_never_loses_a_change_that_only_one_side_made(
    my_name: str, my_text: str, my_price: str, name: str, text: str, price: str
) -> None:
    base = parse_fields(fields_json(product("Caneca", "Caneca", "10.00")))
    ours, theirs = product(my_name, my_text, my_price), product(name, text, price)
    merged = merge(base, ours, theirs)
    assert base is not None
    for campo in ("nome", "descricao", "preco"):
        kept, mine, saved = (str(getattr(p, campo)) for p in (merged.produto, ours, theirs))
        original = str(Decimal(str(base[campo]))) if campo == "preco" else base[campo]
        if campo in merged.conflicts:
            assert mine != original and saved != original and mine != saved and kept == mine
        elif mine == original:
            assert kept == saved
        else:
            assert kept == mine and (saved in (original, mine))


def edit_form(client: TestClient, id: int) -> dict[str, str]:
    return form_on(client.get(f"/produtos/{id}").text, f"/produtos/{id}", "produto")


def saved_meanwhile(
    client: TestClient,
    id: int,
    preco: str = "11",
    nome: str = "Caneca",
    descricao: str | None = None,
) -> None:
    """Someone else saves the product from a form, after the form under test was opened."""
    fields = {"produto.nome": nome, "produto.preco": preco}
    if descricao is not None:
        fields["produto.descricao"] = descricao
    assert client.put(f"/produtos/{id}", data=fields).status_code == 303


def notice_after(client: TestClient, response: object) -> str:
    assert getattr(response, "status_code", None) == 303
    page = client.get("/produtos").text
    found = re.search(r'<p class="aviso" role="status"[^>]*>(.*?)</p>', page, re.S)
    assert found is not None
    return found.group(1)


def choices(html: str) -> dict[str, list[tuple[str, bool]]]:
    """Each field offered as a choice: its radio buttons' values, and which is checked."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for name, value, checked in re.findall(
        r'<input type="radio" name="produto\.(\w+)" value="([^"]*)"( checked)?>', html
    ):
        found.setdefault(name, []).append((value, bool(checked)))
    return found


@pytest.fixture
def other(settings: Settings) -> Iterator[TestClient]:
    """A second browser, on an instance of its own over the same database."""
    with TestClient(create_app(settings), follow_redirects=False) as client:
        yield client


class TestChangesToDifferentFields:
    def test_are_both_kept_with_no_question_and_a_notice_naming_what_and_whom(
        self, client: TestClient, other: TestClient, database: str, db: Database
    ) -> None:
        """The issue's scenario: Ana changes the price while Beto changes the name."""
        add_user(database, "ana", "editor")
        add_user(database, "beto", "editor")
        sign_in(client, "ana")
        sign_in(other, "beto")
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(other, id)
        ana = edit_form(client, id)
        assert client.post(f"/produtos/{id}", data={**ana, "produto.preco": "12,00"}).is_redirect
        saved = other.post(f"/produtos/{id}", data={**beto, "produto.nome": "Caneca azul"})
        assert notice_after(other, saved) == (
            "Produto «Caneca azul» atualizado. Mantido também o que ana mudou enquanto você "
            "editava: preço."
        )
        assert stored(db, id) == Stored("Caneca azul", "", 1200, 3)
        antes, depois, quem = db.execute(
            "SELECT antes, depois, quem FROM eventos WHERE produto_id = ? AND versao = 3", (id,)
        ).fetchone()
        assert '"nome":"Caneca"' in antes and '"preco":"12.00"' in antes
        assert '"nome":"Caneca azul"' in depois and quem == "beto"

    def test_identical_changes_agree_and_the_second_changes_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        saved_meanwhile(client, id, "10", nome="Caneca azul")
        saved = client.post(f"/produtos/{id}", data={**beto, "produto.nome": " Caneca azul"})
        assert notice_after(client, saved) == (
            "Nada mudou em «Caneca azul»: o que você enviou já era o que estava salvo."
        )
        assert stored(db, id) == Stored("Caneca azul", "", 1000, 2)

    def test_a_save_is_merged_again_when_the_product_moves_once_more(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        saved_meanwhile(client, id)
        conflict = client.post(f"/produtos/{id}", data={**beto, "produto.preco": "13"})
        assert conflict.status_code == 409
        chosen = form_on(conflict.text, f"/produtos/{id}", "produto")
        saved_meanwhile(client, id, descricao="Da Ana")
        saved = client.post(f"/produtos/{id}", data=chosen)
        assert saved.status_code == 303
        assert stored(db, id) == Stored("Caneca", "Da Ana", 1300, 4)

    def test_a_code_set_meanwhile_is_kept_beside_this_persons_new_name(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        assert beto["produto.codigo"] == ""
        code = {"produto.nome": "Caneca", "produto.preco": "10", "produto.codigo": "CAN-1"}
        assert client.put(f"/produtos/{id}", data=code).status_code == 303
        saved = client.post(f"/produtos/{id}", data={**beto, "produto.nome": "Caneca azul"})
        assert notice_after(client, saved) == (
            "Produto «Caneca azul» atualizado. Mantido também o que outra pessoa mudou enquanto "
            "você editava: código."
        )
        assert db.execute("SELECT nome, codigo FROM produtos").fetchone() == (
            "Caneca azul",
            "CAN-1",
        )

    def test_the_specs_form_without_a_code_field_merges_without_touching_the_code(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        assert client.put(
            f"/produtos/{id}", data={**edit_form(client, id), "produto.codigo": "C-9"}
        ).is_redirect
        spec = {k: v for k, v in edit_form(client, id).items() if k != "produto.codigo"}
        saved_meanwhile(client, id, "12")
        assert client.post(f"/produtos/{id}", data={**spec, "produto.nome": "Xícara"}).is_redirect
        assert db.execute("SELECT nome, codigo FROM produtos").fetchone() == ("Xícara", "C-9")


class TestChangesToOneField:
    def test_offer_only_that_field_with_both_values_and_merge_the_rest(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        saved_meanwhile(client, id, descricao="Da Ana")
        response = client.post(
            f"/produtos/{id}", data={**beto, "produto.nome": "Xícara", "produto.preco": "R$ 13"}
        )
        assert response.status_code == 409
        assert stored(db, id) == Stored("Caneca", "Da Ana", 1100, 2)
        assert response.text.count("<title>Conflito: ") == 1
        assert choices(response.text) == {"preco": [("13,00", True), ("11,00", False)]}
        assert "R$ 13,00" in response.text and "R$ 11,00" in response.text
        form = form_on(response.text, f"/produtos/{id}", "produto")
        assert form["produto.nome"] == "Xícara" and form["produto.descricao"] == "Da Ana"
        assert form["produto.versao"] == "2"
        assert 'id="produto-preco"' not in response.text  # the choice stands in for the input
        assert "O formulário já traz o que outra pessoa mudou e você não: descrição." in (
            response.text
        )

    def test_save_the_value_the_person_chooses(self, client: TestClient, db: Database) -> None:
        """Both change the price: Beto chooses Ana's, as saved already, so nothing changes."""
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        saved_meanwhile(client, id)
        response = client.post(f"/produtos/{id}", data={**beto, "produto.preco": "13"})
        chosen = {**form_on(response.text, f"/produtos/{id}", "produto"), "produto.preco": "11,00"}
        assert client.post(f"/produtos/{id}", data=chosen).status_code == 303
        assert stored(db, id) == Stored("Caneca", "", 1100, 2)

    def test_of_several_lines_offer_the_text_as_written(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        saved_meanwhile(client, id, "10", descricao="Da Ana")
        response = client.post(
            f"/produtos/{id}", data={**beto, "produto.descricao": "Do Beto\r\nduas linhas"}
        )
        assert choices(response.text) == {
            "descricao": [("Do Beto\nduas linhas", True), ("Da Ana", False)]
        }
        kept = form_on(response.text, f"/produtos/{id}", "produto")
        assert client.post(f"/produtos/{id}", data=kept).status_code == 303
        assert stored(db, id) == Stored("Caneca", "Do Beto\nduas linhas", 1000, 3)

    def test_without_the_version_opened_every_field_that_differs_is_a_choice(
        self, client: TestClient, db: Database
    ) -> None:
        """A product older than its history has no stored version to merge against."""
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        saved_meanwhile(client, id)
        db.execute("DELETE FROM eventos WHERE produto_id = ?", (id,))
        response = client.post(f"/produtos/{id}", data={**beto, "produto.nome": "Xícara"})
        assert response.status_code == 409
        assert set(choices(response.text)) == {"nome", "preco"}


class TestWhatStaysStrict:
    def test_json_with_a_stale_version_is_409_and_merges_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        client.put(f"/produtos/{id}", json={"nome": "Caneca", "preco": "11"}, headers=JSON)
        body = {"nome": "Xícara", "preco": "10", "versao": 1}
        assert client.put(f"/produtos/{id}", json=body, headers=JSON).status_code == 409
        assert stored(db, id) == Stored("Caneca", "", 1100, 2)

    def test_a_form_with_a_stale_if_match_is_412(self, client: TestClient, db: Database) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        saved_meanwhile(client, id)
        response = client.post(f"/produtos/{id}", data=beto, headers={"if-match": '"1-html"'})
        assert response.status_code == 412
        assert stored(db, id) == Stored("Caneca", "", 1100, 2)

    def test_a_product_removed_meanwhile_is_404_and_saved_nowhere(
        self, client: TestClient, db: Database
    ) -> None:
        id = create_via_form(client, db, "Caneca", "10")
        beto = edit_form(client, id)
        client.delete(f"/produtos/{id}")
        response = client.post(f"/produtos/{id}", data={**beto, "produto.nome": "Xícara"})
        assert response.status_code == 404 and "foi removido em" in response.text


class TestAStaleRemoval:
    def test_removes_nothing_and_says_what_changed_since_and_who_changed_it(
        self, client: TestClient, database: str, db: Database
    ) -> None:
        add_user(database, "ana", "editor")
        sign_in(client, "ana")
        id = create_via_form(client, db, "Caneca", "10")
        removal = form_on(client.get(f"/produtos/{id}").text, f"/produtos/{id}", "remover")
        saved_meanwhile(client, id, "12")
        response = client.post(f"/produtos/{id}", data=removal)
        assert response.status_code == 409
        assert "Nada foi removido. Desde então, ana alterou:" in response.text
        rows = re.findall(r'<tr class="difere"><th scope="row">(.*?)</th>(.*?)</tr>', response.text)
        assert rows == [("Preço", '<td class="texto">R$ 10,00</td><td class="texto">R$ 12,00</td>')]
        assert stored(db, id) == Stored("Caneca", "", 1200, 2)
        again = form_on(response.text, f"/produtos/{id}", "remover")
        assert again["produto.versao"] == "2"
        assert client.post(f"/produtos/{id}", data=again).status_code == 303
        assert stored(db, id) is None


class _AlwaysOvertaken:
    """The real store, except that every update finds someone else saved just before."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    async def update(self, id: int, produto: Produto, *args: Any) -> Produto:
        current = await self.real.get(id)
        raise VersionConflict(current.model_copy(update={"versao": current.versao + 1}))


def test_a_save_overtaken_at_every_attempt_leaves_the_choice_to_the_person(
    client: TestClient, db: Database
) -> None:
    id = create_via_form(client, db, "Caneca", "10")
    beto = edit_form(client, id)
    saved_meanwhile(client, id)
    app: Any = client.app
    with storage_replaced(app, _AlwaysOvertaken(app.shared.storage)):
        response = client.post(f"/produtos/{id}", data={**beto, "produto.nome": "Xícara"})
    assert response.status_code == 409
    assert set(choices(response.text)) == {"nome", "preco"}
    assert stored(db, id) == Stored("Caneca", "", 1100, 2)
