"""The one-time notice's cookie is the client's to send: whatever it holds, a page shows a
notice it can read or none, and never fails."""

import urllib.parse

import pytest
from starlette.testclient import TestClient

LOTE = "a" * 32


@pytest.mark.parametrize(
    "value",
    [
        f"lote:{LOTE}:reajustar:{'9' * 5000}:8",  # past int()'s 4,300 digits
        f"lote:{LOTE}:reajustar:²:8",  # a digit to str.isdigit, not to int()
        f"lote:{LOTE}:definir:3:1e999",
        f"lote:{LOTE}:reajustar:3:{'1' * 40}",
        f"lote-desfeito:{'9' * 5000}",
        "lote-desfeito:٣",
        f"importacao:{LOTE}:1:²",
        f"importacao:{LOTE}:{'9' * 5000}:1:1",
        "importacao-desfeita:²",
        "conta:criado:Maria Bonita:admin",
        "conta:alterado:ana:chefe:sim",
    ],
)
def test_a_forged_notice_shows_nothing_or_a_short_one_never_an_error(
    client: TestClient, value: str
) -> None:
    client.cookies.set("aviso", urllib.parse.quote(value, safe=""))
    for path in ("/produtos", "/produtos/removidos"):
        page = client.get(path)
        assert page.status_code == 200, (path, page.text[-300:])
        assert "9" * 100 not in page.text


def test_a_batchs_notice_says_by_how_much_and_an_old_one_what_it_did(client: TestClient) -> None:
    client.cookies.set("aviso", urllib.parse.quote(f"lote:{LOTE}:reajustar:3:8", safe=""))
    assert "Reajuste de +8% em 3 produtos." in client.get("/produtos").text
    client.cookies.set("aviso", urllib.parse.quote(f"lote:{LOTE}:reajustar:3", safe=""))
    assert "3 produtos reajustados." in client.get("/produtos").text
