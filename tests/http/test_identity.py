"""What responses show of who asked (http/identity.py), on SQLite and PostgreSQL: the header of
every page, error pages included, and the cache headers that keep a person's page theirs."""

from starlette.testclient import TestClient

from tests.helpers import JSON, add_token, add_user, bearer, post_form, sign_in

SIGNED_IN_AS_ANA = 'ana <span class="papel">(leitor)</span></a>'


def test_a_fresh_install_shows_no_account_header_even_on_an_error_page(
    client: TestClient,
) -> None:
    missing = client.get("/produtos/999")
    assert missing.status_code == 404
    assert 'class="conta"' not in missing.text
    assert "cookie" not in missing.headers["vary"].lower()
    assert "private" not in missing.headers.get("cache-control", "")


def test_an_error_page_shows_who_is_signed_in_and_is_kept_for_them_alone(
    client: TestClient, database: str
) -> None:
    add_user(database, "ana", "leitor")
    sign_in(client, "ana")
    for refused, status in ((client.get("/produtos/999"), 404), (post_form(client), 403)):
        assert refused.status_code == status
        assert SIGNED_IN_AS_ANA in refused.text
        assert '<form method="post" action="/sair">' in refused.text
        assert refused.headers["cache-control"].startswith("private")
        assert refused.headers["vary"] == "Accept, Cookie"


def test_an_error_page_offers_a_visitor_the_way_to_sign_in_and_back(
    client: TestClient, database: str
) -> None:
    add_user(database, "ana", "leitor")
    missing = client.get("/produtos/999?lista=depois%3D5")
    assert missing.status_code == 404
    assert 'href="/entrar?proximo=/produtos/999%3Flista%3Ddepois%253D5">Entrar</a>' in missing.text
    assert missing.headers["vary"] == "Accept, Cookie"


def test_a_problem_for_a_token_is_private_to_it(client: TestClient, database: str) -> None:
    secret = add_token(database, add_user(database, "ana", "leitor"), "leitor")
    missing = client.get("/produtos/999", headers={**JSON, **bearer(secret)})
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.headers["cache-control"].startswith("private")
