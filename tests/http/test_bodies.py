"""Strict bodies: forms and JSON in UTF-8, or a clear 400 or 415, and nothing written."""

import pytest
from starlette.testclient import TestClient

from tests.databases import Database
from tests.helpers import (
    Stored,
    count_products,
    create_via_form,
    stored,
)

URLENCODED = {"content-type": "application/x-www-form-urlencoded"}
FORM_BODY = {"produto.nome": "Caneca", "produto.preco": "30"}
JSON_BODY = {"content-type": "application/json", "accept": "application/json"}


class TestBodies:
    @pytest.mark.parametrize(
        "body",
        [b"produto.nome=%FF&produto.preco=1", b"produto.nome=\xff&produto.preco=1", b"%C3=1"],
    )
    def test_a_form_that_is_not_utf8_is_400(
        self, client: TestClient, db: Database, body: bytes
    ) -> None:
        response = client.post("/produtos", content=body, headers=URLENCODED)
        assert response.status_code == 400
        assert "não é UTF-8 válido" in response.text
        assert count_products(db) == 0

    def test_a_multipart_field_that_is_not_utf8_is_400(
        self, client: TestClient, db: Database
    ) -> None:
        response = client.post(
            "/produtos", files={"produto.nome": (None, b"\xff\xfe"), "produto.preco": (None, "1")}
        )
        assert response.status_code == 400
        assert count_products(db) == 0

    def test_a_broken_multipart_body_is_400(self, client: TestClient) -> None:
        response = client.post(
            "/produtos",
            content=b"--XX\r\nContent-Disposition: form-data\r\n\r\nabc",
            headers={"content-type": "multipart/form-data"},
        )
        assert response.status_code == 400
        assert "Formulário malformado" in response.text

    def test_a_file_upload_is_refused(self, client: TestClient, db: Database) -> None:
        response = client.post(
            "/produtos",
            data=FORM_BODY,
            files={"produto.descricao": ("a.txt", b"texto", "text/plain")},
        )
        assert response.status_code == 400
        assert "não aceita arquivos" in response.text
        assert count_products(db) == 0

    @pytest.mark.parametrize(
        "content_type",
        [
            "application/xml",
            "text/plain",
            "application/x-www-form-urlencoded; charset=latin-1",
            "application/json; charset=latin-1",
        ],
    )
    def test_a_body_that_is_neither_utf8_form_data_nor_json_is_415(
        self, client: TestClient, db: Database, content_type: str
    ) -> None:
        response = client.post(
            "/produtos",
            content=b"produto.nome=x&produto.preco=1",
            headers={"content-type": content_type},
        )
        assert response.status_code == 415
        assert count_products(db) == 0

    def test_a_post_with_no_body_at_all_is_415(self, client: TestClient) -> None:
        assert client.post("/produtos").status_code == 415

    @pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\x85"])
    def test_control_characters_are_422_and_name_the_character(
        self, client: TestClient, db: Database, char: str
    ) -> None:
        response = client.post(
            "/produtos", data={"produto.nome": f"a{char}b", "produto.preco": "1"}
        )
        assert response.status_code == 422
        assert f"U+{ord(char):04X}" in response.text
        assert count_products(db) == 0

    def test_too_many_fields_is_400(self, client: TestClient) -> None:
        body = "&".join(f"f{n}=1" for n in range(1001)).encode()
        assert client.post("/produtos", content=body, headers=URLENCODED).status_code == 400


class TestLoneSurrogates:
    """`\\ud800` is JSON syntax for no character at all: 400 whoever asks, nothing written."""

    @pytest.mark.parametrize(
        "body",
        [
            b'{"nome": "\\ud800", "preco": "1"}',
            b'{"nome": "Caneca", "descricao": "a\\udfffb", "preco": "1"}',
            b'{"nome": "Caneca", "preco": "1", "\\ud83d": 1}',
            b'{"nome": "Caneca", "preco": "1", "outro": [[{"x": "\\udc00"}]]}',
            b'{"nome": "\\ude00\\ud83d", "preco": "1"}',
        ],
    )
    @pytest.mark.parametrize("accept", ["text/html", "application/json"])
    def test_anywhere_in_a_json_body_is_400(
        self, client: TestClient, db: Database, body: bytes, accept: str
    ) -> None:
        id = create_via_form(client, db, "Antes", "2")
        json = {"content-type": "application/json", "accept": accept}
        for method, path in (("POST", "/produtos"), ("PUT", f"/produtos/{id}")):
            response = client.request(method, path, content=body, headers=json)
            assert response.status_code == 400, (method, response.text)
            assert "sem par: não é um caractere" in response.text
        assert stored(db, id) == Stored("Antes", "", 200, 1) and count_products(db) == 1

    def test_a_surrogate_pair_is_the_character_it_stands_for(
        self, client: TestClient, db: Database
    ) -> None:
        body = b'{"nome": "Caneca \\ud83d\\ude00", "preco": "1"}'
        created = client.post("/produtos", content=body, headers=JSON_BODY)
        assert created.status_code == 201
        assert created.json()["nome"] == "Caneca \N{GRINNING FACE}"


@pytest.mark.parametrize("digits", [101, 4301, 5000])
def test_a_json_number_with_too_many_digits_is_400_in_our_words(
    client: TestClient, db: Database, digits: int
) -> None:
    body = b'{"nome": "Caneca", "preco": ' + b"9" * digits + b"}"
    response = client.post("/produtos", content=body, headers=JSON_BODY)
    assert response.status_code == 400
    assert f"um número com {digits} algarismos é longo demais" in response.json()["detail"]
    assert "4300" not in response.text and count_products(db) == 0


@pytest.mark.parametrize("number", [b"1e5", b"2.5E-3", b"1.0E+1000000000000000000"])
def test_a_json_number_with_an_exponent_is_ignored_where_nothing_reads_it(
    client: TestClient, db: Database, number: bytes
) -> None:
    body = b'{"nome": "Caneca", "preco": "1", "peso": ' + number + b', "id": ' + number + b"}"
    created = client.post("/produtos", content=body, headers=JSON_BODY)
    assert created.status_code == 201 and created.json()["nome"] == "Caneca"


@pytest.mark.parametrize("member", [b"nome", b"preco", b"descricao", b"versao"])
def test_a_json_number_with_an_exponent_is_400_where_it_is_read(
    client: TestClient, db: Database, member: bytes
) -> None:
    members = {b"nome": b'"Caneca"', b"preco": b'"1"', member: b"1e2"}
    body = b"{" + b", ".join(b'"%s": %s' % pair for pair in members.items()) + b"}"
    response = client.post("/produtos", content=body, headers=JSON_BODY)
    assert response.status_code == 400
    assert "1e2 usa expoente" in response.json()["detail"]
    assert count_products(db) == 0
