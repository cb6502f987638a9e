"""Batches over HTTP, on SQLite and PostgreSQL: the confirmation says each product's old → new
price, confirming applies all of it or nothing once, a product that moved on since gives 409
and a fresh confirmation, "all N matching" a search is exactly those N, and undo gives every
product back."""

import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.testclient import TestClient

from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import (
    JSON,
    ONLY_POSTGRESQL,
    add_token,
    add_user,
    all_at_once,
    bearer,
    sign_in,
)
from tests.processes import http_client, serving

LOTE = "/produtos/lote"
PROBLEM = "application/problem+json"


def made(client: TestClient, nome: str, preco: str) -> dict[str, Any]:
    created = client.post("/produtos", json={"nome": nome, "preco": preco}, headers=JSON)
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def prices(db: Database) -> dict[int, Decimal]:
    column = "preco_centavos" if db.backend == "sqlite" else "preco"
    rows = db.execute(f"SELECT id, {column} FROM produtos WHERE removido_em IS NULL").fetchall()
    scale = Decimal("0.01") if db.backend == "sqlite" else Decimal(1)
    return {id: Decimal(value) * scale for id, value in rows}


def hidden(page: str) -> dict[str, str]:
    """The confirmation form's fields, as the browser would send them back."""
    form = page.split('class="confirmar-lote"')[1].split("</form>")[0]
    return dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))


class TestRepricing:
    def test_three_chosen_products_get_the_half_up_prices_the_confirmation_showed(
        self, client: TestClient, db: Database
    ) -> None:
        a, b, c = (made(client, n, p) for n, p in (("A", "10.00"), ("B", "10.05"), ("C", "0.15")))
        other = made(client, "Outro", "7.00")
        before = prices(db)
        ids = [str(p["id"]) for p in (a, b, c)]
        shown = client.post(LOTE, data={"acao": "reajustar", "percentual": "10", "id": ids})
        assert shown.status_code == 200 and shown.headers["cache-control"] == "no-store"
        for old, new in (
            ("R$ 10,00", "R$ 11,00"),
            ("R$ 10,05", "R$ 11,06"),
            ("R$ 0,15", "R$ 0,17"),
        ):
            assert re.search(
                rf"{re.escape(old)}</td><td class=\"num\"><ins>{re.escape(new)}", shown.text
            )
        assert "meio centavo para cima" in shown.text
        assert prices(db) == before  # a confirmation writes nothing
        confirmed = client.post(LOTE, data=hidden(shown.text))
        assert confirmed.status_code == 303 and confirmed.headers["location"] == "/produtos"
        after = prices(db)
        assert [after[p["id"]] for p in (a, b, c)] == [
            Decimal("11.00"),
            Decimal("11.06"),
            Decimal("0.17"),
        ]
        assert after[other["id"]] == Decimal("7.00")
        listing = client.get("/produtos").text
        assert "Reajuste de +10% em 3 produtos." in listing  # by how much, and where it is
        batch = re.search(r'<a href="(/produtos/lote/\w+)">Ver o lote</a>', listing)
        assert batch is not None
        page = client.get(batch.group(1)).text
        assert "<h1>Reajuste de +10% em 3 produtos</h1>" in page and "foi desfeito" not in page
        undo = re.search(r'action="(/produtos/lote/\w+/reversao)"', listing)
        assert undo is not None
        assert client.post(undo.group(1)).status_code == 303
        assert prices(db) == before
        assert "Lote desfeito: 3 produtos voltaram ao que eram." in client.get("/produtos").text
        page = client.get(batch.group(1)).text
        assert "<strong>Este lote foi desfeito</strong>" in page
        assert '<div class="eventos-desfeitos">' in page and "Desfazer</button>" not in page

    def test_a_concurrent_edit_between_confirmation_and_confirm_is_409_and_changes_nothing(
        self, client: TestClient, db: Database
    ) -> None:
        a, b = made(client, "A", "10.00"), made(client, "B", "20.00")
        asked = {"acao": "reajustar", "percentual": "10", "ids": [a["id"], b["id"]]}
        shown = client.post(LOTE, json=asked, headers=JSON).json()
        client.put(f"/produtos/{b['id']}", json={"nome": "B", "preco": "25.00"}, headers=JSON)
        before = prices(db)
        refused = client.post(
            LOTE,
            json={**asked, "selecao": shown["selecao"], "confirmar": True},
            headers=JSON,
        )
        assert refused.status_code == 409 and refused.headers["content-type"] == PROBLEM
        assert refused.json()["produtos"] == [b["id"]]
        fresh = {i["id"]: i["depois"] for i in refused.json()["lote"]["itens"]}
        assert fresh == {a["id"]: "11.00", b["id"]: "27.50"}
        assert prices(db) == before
        page = client.post(LOTE, data={**hidden_of(shown, asked), "confirmar": "1"})
        assert page.status_code == 409 and "confirmação refeita" in page.text

    def test_a_program_may_confirm_at_once_with_versions_and_a_key(
        self, client: TestClient, db: Database
    ) -> None:
        a = made(client, "A", "10.00")
        stale = client.post(
            LOTE,
            json={
                "acao": "definir",
                "preco": "19,90",
                "ids": [{"id": a["id"], "versao": 9}],
                "confirmar": True,
            },
            headers=JSON,
        )
        assert stale.status_code == 409 and prices(db)[a["id"]] == Decimal("10.00")
        keyed = {**JSON, "Idempotency-Key": "reajuste-1"}
        asked = {
            "acao": "definir",
            "preco": "19,90",
            "ids": [{"id": a["id"], "versao": 1}],
            "confirmar": True,
        }
        first = client.post(LOTE, json=asked, headers=keyed)
        again = client.post(LOTE, json=asked, headers=keyed)
        assert (first.status_code, again.status_code) == (200, 200)
        assert first.json()["lote"] == again.json()["lote"]
        assert again.headers["idempotent-replayed"] == "true"
        events = db.execute(
            "SELECT origem, lote FROM eventos WHERE produto_id = ? ORDER BY id", (a["id"],)
        ).fetchall()
        assert events[-1] == ("lote", first.json()["lote"]) and len(events) == 2
        shown = client.get(first.json()["links"]["self"], headers=JSON).json()
        assert shown["desfeito"] is False and [e["produto_id"] for e in shown["eventos"]] == [
            a["id"]
        ]
        assert "R$ 19,90" in client.get(first.json()["links"]["self"]).text


def hidden_of(shown: dict[str, Any], asked: dict[str, Any]) -> dict[str, str]:
    return {
        "acao": asked["acao"],
        "percentual": asked["percentual"],
        "selecao": shown["selecao"],
    }


def test_all_n_matching_a_search_removes_exactly_those_and_undo_brings_them_back(
    client: TestClient, db: Database
) -> None:
    canecas = [made(client, f"Caneca {n}", "10") for n in range(4)]
    copo = made(client, "Copo", "5")
    shown = client.post(LOTE, data={"acao": "remover", "busca": "q=caneca"})
    assert shown.status_code == 200 and "Remoção: 4 produtos" in shown.text
    late = made(client, "Caneca tardia", "10")  # matches the search, after the confirmation
    confirmed = client.post(LOTE, data=hidden(shown.text))
    assert confirmed.status_code == 303
    live = set(prices(db))
    assert live == {copo["id"], late["id"]}
    listing = client.get("/produtos").text
    assert "4 produtos removidos." in listing
    undo = re.search(r'action="/produtos/lote/(\w+)/reversao"', listing)
    assert undo is not None
    lote = undo.group(1)
    assert client.post(f"{LOTE}/{lote}/reversao", headers=JSON).json() == {
        "lote": lote,
        "desfeitos": 4,
    }
    assert set(prices(db)) == {p["id"] for p in canecas} | {copo["id"], late["id"]}
    twice = client.post(f"{LOTE}/{lote}/reversao", headers=JSON)
    assert twice.status_code == 409 and twice.json()["detail"] == "Este lote já foi desfeito."


def test_confirming_the_same_confirmation_twice_applies_it_once(
    client: TestClient, db: Database
) -> None:
    a = made(client, "A", "10.00")
    shown = client.post(LOTE, data={"acao": "reajustar", "percentual": "10", "id": str(a["id"])})
    form = hidden(shown.text)
    assert client.post(LOTE, data=form).status_code == 303
    assert client.post(LOTE, data=form).status_code == 303  # a double click
    assert prices(db)[a["id"]] == Decimal("11.00")


def test_a_price_that_would_fall_below_a_cent_is_left_out_and_named(client: TestClient) -> None:
    tiny, fine = made(client, "Bala", "0.01"), made(client, "Pote", "100.00")
    shown = client.post(
        LOTE,
        json={"acao": "reajustar", "percentual": "-99,99", "ids": [tiny["id"], fine["id"]]},
        headers=JSON,
    ).json()
    assert [i["id"] for i in shown["recusados"]] == [tiny["id"]]
    assert [(i["id"], i["depois"]) for i in shown["itens"]] == [(fine["id"], "0.01")]


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ({"acao": "apagar", "ids": [1]}, "acao deve ser"),
        ({"acao": "reajustar", "percentual": "dez", "ids": [1]}, "não é um percentual"),
        ({"acao": "reajustar", "percentual": "0", "ids": [1]}, "0% não muda nada"),
        ({"acao": "reajustar", "percentual": "-100", "ids": [1]}, "de -99,99 a 1000"),
        ({"acao": "definir", "preco": "1.234", "ids": [1]}, "ambíguo"),
        ({"acao": "remover"}, "Selecione ao menos um produto"),
        ({"acao": "remover", "ids": [999999]}, "Não há o produto 999999"),
        ({"acao": "remover", "ids": ["1"]}, "não é o número de um produto"),
        ({"acao": "remover", "ids": 5}, "ids deve ser uma lista"),
        ({"acao": "remover", "busca": "q=nada-aqui"}, "Nenhum produto nesta busca"),
        ({"acao": "remover", "busca": "preco_min=abc"}, "busca:"),
        ({"acao": "remover", "selecao": "1:x", "confirmar": True}, "selecao malformada"),
        ({"acao": "remover", "selecao": "9999999999999999999:1", "confirmar": True}, "malformada"),
    ],
)
def test_what_cannot_be_done_is_422_with_what_would_be_and_writes_nothing(
    client: TestClient, db: Database, asked: dict[str, Any], said: str
) -> None:
    made(client, "A", "10.00")
    refused = client.post(LOTE, json=asked, headers=JSON)
    assert refused.status_code == 422, refused.text
    assert said in refused.json()["detail"]
    assert prices(db) == {1: Decimal("10.00")}


def test_a_batch_over_the_cap_is_refused_with_the_cap(database: str) -> None:
    base = Settings(database_url=database, allowed_hosts=("testserver",), access_log=False)
    with TestClient(create_app(Settings(**{**base.__dict__, "batch_max": 2}))) as client:
        ids = [made(client, f"P{n}", "1")["id"] for n in range(3)]
        refused = client.post(LOTE, json={"acao": "remover", "ids": ids}, headers=JSON)
        assert refused.status_code == 422 and "até 2 produtos" in refused.json()["detail"]
        search = client.post(LOTE, json={"acao": "remover", "busca": "q=p"}, headers=JSON)
        assert search.status_code == 422 and "Refine a busca" in search.json()["detail"]


def test_editors_only_once_users_exist(client: TestClient, database: str) -> None:
    made(client, "A", "10.00")
    maria = add_user(database, "maria", "editor")
    lia = add_user(database, "lia", "leitor")
    assert client.post(LOTE, json={"acao": "remover", "ids": [1]}, headers=JSON).status_code == 401
    reader = client.post(
        LOTE,
        json={"acao": "remover", "ids": [1]},
        headers=bearer(add_token(database, lia, "leitor")),
    )
    assert reader.status_code == 403
    editor = client.post(
        LOTE, json={"acao": "remover", "ids": [1]}, headers=bearer(add_token(database, maria))
    )
    assert editor.status_code == 200
    sign_in(client, "maria")
    assert client.post(LOTE, data={"acao": "remover", "id": "1"}).status_code == 200


def test_an_imports_id_is_no_batch_and_a_batch_id_sent_is_not_taken(
    client: TestClient, db: Database
) -> None:
    made(client, "A", "10.00")
    staged = client.post(
        "/produtos/importacoes",
        files={"arquivo": ("a.csv", b"id;preco\r\n1;12,00\r\n")},
        headers=JSON,
    ).json()
    client.post(staged["links"]["confirmacao"], headers=JSON)
    imported = staged["id"]
    assert client.get(f"{LOTE}/{imported}", headers=JSON).status_code == 404
    assert client.post(f"{LOTE}/{imported}/reversao", headers=JSON).status_code == 404
    asked = {"acao": "definir", "preco": "30", "ids": [1], "lote": imported, "confirmar": True}
    done = client.post(LOTE, json=asked, headers=JSON)
    assert done.status_code == 200 and done.json()["lote"] != imported
    assert prices(db) == {1: Decimal("30.00")}
    assert db.execute("SELECT estado FROM importacoes").fetchall() == [("aplicada",)]


def test_the_list_offers_all_n_of_a_search_only_within_the_cap(database: str) -> None:
    base = Settings(database_url=database, allowed_hosts=("testserver",), access_log=False)
    with TestClient(create_app(Settings(**{**base.__dict__, "batch_max": 2}))) as client:
        for n in range(3):
            made(client, f"Caneca {n}", "1")
        assert "desta busca" not in client.get("/produtos?q=caneca").text
        made(client, "Copo", "1")
        assert "Aplicar ao único produto desta busca" in client.get("/produtos?q=copo").text


@ONLY_POSTGRESQL
def test_the_same_confirmation_sent_to_two_instances_at_once_applies_once_and_both_say_so(
    database: str, db: Database, tmp_path: Path
) -> None:
    """A double click that a balancer sends to two instances of one PostgreSQL, 50 times: the
    price moves once (+5%, never +10.25%), and both answers say the batch was applied (JSON:
    200 with the same batch; a browser: 303 to the list with its notice), never a 409 that
    invites confirming again. Odd trials confirm as a program, even ones as a browser."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with (
        serving(database, tmp_path / "a") as (first, _),
        serving(database, tmp_path / "b") as (second, _),
        http_client(first) as a,
        http_client(second) as b,
    ):
        for trial in range(50):
            made = a.post("/produtos", json={"nome": f"P{trial}", "preco": "100.00"}, headers=JSON)
            id = made.json()["id"]
            asked = {"acao": "reajustar", "percentual": "5", "ids": [id]}
            plan = b.post(LOTE, json=asked, headers=JSON).json()
            if trial % 2:
                confirm: dict[str, Any] = {
                    "json": {**asked, "selecao": plan["selecao"], "confirmar": True},
                    "headers": JSON,
                }
            else:
                form = {"acao": "reajustar", "percentual": "5", "selecao": plan["selecao"]}
                confirm = {"data": {**form, "confirmar": "1"}}

            def send(
                i: int, start: Callable[[], None], confirm: dict[str, Any] = confirm
            ) -> httpx2.Response:
                start()
                return (a, b)[i].post(LOTE, **confirm)

            answers = all_at_once(2, send)
            if trial % 2:
                assert [r.status_code for r in answers] == [200, 200], [r.text for r in answers]
                assert {r.json()["lote"] for r in answers} == {plan["lote"]}
            else:
                assert [r.status_code for r in answers] == [303, 303], [r.text for r in answers]
            assert prices(db)[id] == Decimal("105.00"), trial
            events = db.execute(
                "SELECT count(*) FROM eventos WHERE produto_id = ? AND origem = 'lote'", (id,)
            ).fetchone()
            assert events == (1,), trial


class TestAMistakeInTheListsForm:
    """A browser's bulk form sent with a mistake comes back as any invalid form here: the
    same list, what was chosen and typed kept, the message beside its field (422)."""

    def test_keeps_the_list_the_ticks_and_the_values_with_the_message_beside_the_field(
        self, client: TestClient, db: Database
    ) -> None:
        for nome in ("Pote P", "Pote M", "Pote G"):
            made(client, nome, "7")
        ids = [row[0] for row in db.execute("SELECT id FROM produtos ORDER BY id").fetchall()]
        lista = client.get("/produtos?q=pote").text
        listing = re.search(r'name="lista" value="([^"]+)"', lista)
        assert listing is not None
        sent = client.post(
            "/produtos/lote",
            data={"acao": "definir", "preco": "", "id": [ids[0], ids[2]], "lista": listing[1]},
        )
        assert sent.status_code == 422
        page = sent.text
        assert page.count('<td class="nome">') == 3  # the same list, not one red line
        assert f'value="{ids[0]}" form="lote" checked' in page
        assert f'value="{ids[1]}" form="lote" aria-label' in page
        assert f'value="{ids[2]}" form="lote" checked' in page
        assert '<option value="definir" selected>' in page
        assert 'aria-invalid="true" aria-describedby="lote-erro" autofocus>' in page
        assert (
            '<span class="erro" id="lote-erro">Informe o novo preço (por exemplo, 29,90).' in page
        )
        assert 'value="pote"' in page and '<details class="dobra lote-dobra" open>' in page
        assert sent.headers["cache-control"] == "no-store"
        assert prices(db) == {id: Decimal("7.00") for id in ids}

    def test_says_a_bad_percentage_beside_it_in_the_fields_words_and_no_search_means_no_clear(
        self, client: TestClient
    ) -> None:
        made(client, "Pote", "7")
        sent = client.post("/produtos/lote", data={"acao": "reajustar", "percentual": "dez"})
        assert sent.status_code == 422
        assert 'id="lote-percentual" name="percentual"' in sent.text and 'value="dez"' in sent.text
        assert "«dez» não é um percentual" in sent.text
        assert ">Limpar</a>" not in sent.text
        program = client.post(
            "/produtos/lote", json={"acao": "definir", "preco": "x", "ids": [1]}, headers=JSON
        )
        assert program.status_code == 422 and program.json()["detail"].startswith("Novo preço: ")
