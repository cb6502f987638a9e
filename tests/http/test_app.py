"""The URL surface: every (method, path) pair answers with the status and Allow that
docs/behaviour.md lists, and no request at all gets a 500."""

import gc
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from starlette.routing import Route
from starlette.testclient import TestClient

from catalogo.domain.produtos import ID_MAXIMO, numbers_up_to
from catalogo.http.app import GC_THRESHOLDS, create_app
from catalogo.http.resources import Resource
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import (
    ONLY_SQLITE,
    create_via_form,
    post_form,
)

# The Allow header of each kind of path: the collection, the new-product form, one product.
COLLECTION_ALLOW = "GET, HEAD, POST, OPTIONS"
NEW_FORM_ALLOW = "GET, HEAD, OPTIONS"
ITEM_ALLOW = "GET, HEAD, PUT, DELETE, OPTIONS"
BIG = str(2**63)

# (method, path, expected status, expected Allow or None). {id} is an existing product.
TABLE = [
    ("GET", "/produtos", 200, None),
    ("HEAD", "/produtos", 200, None),
    ("PUT", "/produtos", 405, COLLECTION_ALLOW),
    ("DELETE", "/produtos", 405, COLLECTION_ALLOW),
    ("PATCH", "/produtos", 405, COLLECTION_ALLOW),
    ("OPTIONS", "/produtos", 204, COLLECTION_ALLOW),
    ("GET", "/produtos/novo", 200, None),
    ("HEAD", "/produtos/novo", 200, None),
    ("POST", "/produtos/novo", 405, NEW_FORM_ALLOW),
    ("PUT", "/produtos/novo", 405, NEW_FORM_ALLOW),
    ("DELETE", "/produtos/novo", 405, NEW_FORM_ALLOW),
    ("PATCH", "/produtos/novo", 405, NEW_FORM_ALLOW),
    ("GET", "/produtos/{id}", 200, None),
    ("HEAD", "/produtos/{id}", 200, None),
    ("POST", "/produtos/{id}", 405, ITEM_ALLOW),
    ("PATCH", "/produtos/{id}", 405, ITEM_ALLOW),
    ("OPTIONS", "/produtos/{id}", 204, ITEM_ALLOW),
    ("OPTIONS", "/produtos/novo", 204, NEW_FORM_ALLOW),
    ("GET", "/produtos/{id}/remocao", 404, None),  # the page that asked first is gone
    ("GET", "/produtos/{id}/restauracao", 405, "POST, OPTIONS"),
    ("PUT", "/produtos/{id}/restauracao", 405, "POST, OPTIONS"),
    ("OPTIONS", "/produtos/{id}/restauracao", 204, "POST, OPTIONS"),
    ("POST", "/produtos/999/restauracao", 404, None),
    ("POST", "/produtos/007/restauracao", 404, None),
    ("POST", "/produtos/{id}/restauracao%0A", 404, None),
    ("GET", "/produtos/{id}/historico", 200, None),
    ("HEAD", "/produtos/{id}/historico", 200, None),
    ("POST", "/produtos/{id}/historico", 405, NEW_FORM_ALLOW),
    ("OPTIONS", "/produtos/{id}/historico", 204, NEW_FORM_ALLOW),
    ("GET", "/produtos/999/historico", 404, None),
    ("GET", "/produtos/007/historico", 404, None),
    ("GET", f"/produtos/{BIG}/historico", 404, None),
    ("GET", "/produtos/removidos", 200, None),
    ("HEAD", "/produtos/removidos", 200, None),
    ("POST", "/produtos/removidos", 405, NEW_FORM_ALLOW),
    ("DELETE", "/produtos/removidos", 405, NEW_FORM_ALLOW),
    ("OPTIONS", "/produtos/removidos", 204, NEW_FORM_ALLOW),
    ("GET", "/produtos/eventos", 200, None),
    ("HEAD", "/produtos/eventos", 200, None),
    ("POST", "/produtos/eventos", 405, NEW_FORM_ALLOW),
    ("PUT", "/produtos/eventos", 405, NEW_FORM_ALLOW),
    ("OPTIONS", "/produtos/eventos", 204, NEW_FORM_ALLOW),
    ("GET", "/produtos/removidos%0A", 404, None),
    ("OPTIONS", "/", 204, "GET, HEAD, OPTIONS"),
    # The account URIs: a wrong method is 405 with Allow before anyone is asked to sign in.
    ("PUT", "/entrar", 405, "GET, HEAD, POST, OPTIONS"),
    ("GET", "/sair", 405, "POST, OPTIONS"),
    ("POST", "/conta", 405, "GET, HEAD, OPTIONS"),
    ("GET", "/conta/senha", 405, "POST, OPTIONS"),
    ("GET", "/conta/sessoes", 405, "DELETE, OPTIONS"),
    ("GET", "/conta/sessoes/1", 405, "DELETE, OPTIONS"),
    ("PATCH", "/usuarios", 405, "GET, HEAD, POST, OPTIONS"),
    ("GET", "/usuarios/maria", 405, "PUT, OPTIONS"),
    ("GET", "/tokens/1", 405, "DELETE, OPTIONS"),
    ("DELETE", "/tokens/007", 404, None),
    ("GET", "/produtos/999", 404, None),
    ("DELETE", "/produtos/999", 404, None),
    ("GET", "/produtos/0", 404, None),
    ("GET", "/produtos/-1", 404, None),
    ("GET", "/produtos/007", 404, None),
    ("GET", "/produtos/abc", 404, None),
    ("GET", "/produtos/1.5", 404, None),
    ("GET", f"/produtos/{BIG}", 404, None),
    ("PUT", f"/produtos/{BIG}", 404, None),
    ("DELETE", f"/produtos/{BIG}", 404, None),
    ("POST", f"/produtos/{BIG}", 404, None),
    ("GET", f"/produtos/{2**64}", 404, None),
    ("GET", "/produtos/" + "9" * 5000, 404, None),
    ("DELETE", "/produtos/" + "9" * 5000, 404, None),
    ("GET", "/produtos/%D9%A1", 404, None),
    # A route matches its whole path or nothing: `$` would also match before a final line feed.
    ("GET", "/produtos/{id}%0A", 404, None),
    ("PUT", "/produtos/{id}%0A", 404, None),
    ("DELETE", "/produtos/{id}%0A", 404, None),
    ("POST", "/produtos/{id}%0A", 404, None),
    ("GET", "/produtos/{id}%0D", 404, None),
    ("GET", "/produtos/{id}/historico%0A", 404, None),
    ("GET", "/produtos%0A", 404, None),
    ("POST", "/produtos%0A", 404, None),
    ("GET", "/produtos/novo%0A", 404, None),
    ("GET", "/healthz%0A", 404, None),
    ("GET", "/readyz%0A", 404, None),
    ("GET", "/docs%0A", 404, None),
    ("GET", "/openapi.json%0A", 404, None),
    ("GET", "/static/catalogo.css%0A", 404, None),
    ("GET", "/%0A", 404, None),
    ("GET", "/produtos/{id}%00", 404, None),
    ("GET", "/produtos/{id}%7F", 404, None),
    ("GET", "/nada", 404, None),
    ("GET", "/produtos/", 404, None),
    ("GET", "/produtos/{id}/", 404, None),
    ("POST", "/produtos/", 404, None),
    ("POST", "/nada", 404, None),
    ("POST", "/", 405, "GET, HEAD, OPTIONS"),
    ("GET", "/healthz", 200, None),
    ("POST", "/healthz", 405, "GET, HEAD, OPTIONS"),
    ("HEAD", "/readyz", 200, None),
    ("DELETE", "/readyz", 405, "GET, HEAD, OPTIONS"),
]


@pytest.mark.parametrize(("method", "path", "status", "allow"), TABLE)
def test_each_method_and_path_gets_its_status_and_allow(
    client: TestClient,
    db: Database,
    method: str,
    path: str,
    status: int,
    allow: str | None,
) -> None:
    path = path.format(id=create_via_form(client, db))
    response = client.request(method, path)
    assert response.status_code == status
    assert response.headers.get("allow") == allow
    if status >= 400 and method != "HEAD":
        assert response.headers["vary"] == "Accept"
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert '<link rel="stylesheet" href="/static/catalogo.css">' in response.text


_EXAMPLES = {"produto_id": "1", "lote": "0" * 32, "id": "1", "str": "maria"}


def test_each_route_is_reached_at_its_own_path(client: TestClient) -> None:
    """A method no class answers gets the Allow of the class that refused it: each path's own."""
    routes = [route for route in client.app.routes if isinstance(route, Route)]  # type: ignore[attr-defined]
    for route in routes:
        path = re.sub(r"{\w+(?::(\w+))?}", lambda m: _EXAMPLES[m.group(1) or "str"], route.path)
        response = client.request("TRACE", path)
        assert response.status_code == 405, path
        resource: type[Resource] = route.endpoint  # type: ignore[assignment]
        assert response.headers["allow"] == ", ".join(resource.allowed), path


def test_a_405_page_speaks_plainly_and_the_problem_names_the_methods(client: TestClient) -> None:
    page = client.post("/produtos/novo")
    assert page.status_code == 405 and page.headers["allow"] == "GET, HEAD, OPTIONS"
    assert "Esta página não permite essa ação." in page.text and "POST" not in page.text
    problem = client.post("/produtos/novo", headers={"Accept": "application/json"}).json()
    assert (
        problem["detail"] == "Este endereço não aceita o método POST. Aceita: GET, HEAD, OPTIONS."
    )


def test_the_stylesheet_script_and_icon_ship_in_the_package(client: TestClient) -> None:
    for path in (
        "/static/catalogo.css",
        "/static/docs.js",
        "/static/favicon.svg",
    ):
        assert client.get(path).status_code == 200


def test_no_page_loads_anything_from_another_host(client: TestClient, db: Database) -> None:
    id = create_via_form(client, db)
    for path in ("/produtos", "/produtos/novo", f"/produtos/{id}", "/produtos/999"):
        html = client.get(path).text
        assert "http://" not in html and "https://" not in html and 'src="//' not in html


def test_while_an_app_serves_the_collector_runs_at_its_thresholds_then_as_it_was(
    settings: Settings,
) -> None:
    before = gc.get_threshold()
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200
        assert gc.get_threshold() == GC_THRESHOLDS
    assert gc.get_threshold() == before


def test_a_worker_loads_the_spreadsheet_libraries_only_when_a_spreadsheet_comes() -> None:
    """openpyxl and XlsxWriter are 27 MB of a worker's memory that most never use."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, catalogo.http.app; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "'openpyxl'" not in loaded and "'xlsxwriter'" not in loaded
    assert "'cryptography'" not in loaded  # 9 MB more, only with CATALOGO_WEBHOOKS_CHAVES
    assert "'catalogo.domain.planilhas'" in loaded and "'catalogo.domain.xlsx'" in loaded


@ONLY_SQLITE
def test_a_worker_on_a_current_database_never_loads_the_migration_libraries(
    settings: Settings,
) -> None:
    """Alembic and SQLAlchemy are some 30 MB of a worker's memory, there only to migrate."""
    serve_once = (
        "import sys; from starlette.testclient import TestClient; "
        "from catalogo.http.app import create_app; from catalogo.runtime.settings import Settings; "
        f"client = TestClient(create_app(Settings(database_url={settings.database_url!r}))); "
        "client.__enter__(); client.get('/produtos/1'); "
        "print(sorted(name.split('.')[0] for name in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", serve_once], capture_output=True, text=True, check=True
    ).stdout
    assert "'alembic'" not in loaded and "'sqlalchemy'" not in loaded
    assert "'catalogo'" in loaded


def test_an_app_on_a_new_sqlite_file_migrates_it_itself(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path}/novo/catalogo.db", allowed_hosts=("testserver",)
    )
    with TestClient(create_app(settings), follow_redirects=False) as client:
        assert client.get("/readyz").status_code == 200
        assert post_form(client, "Caneta", "2,50").status_code == 303


@given(st.integers(min_value=-10, max_value=2**64), st.booleans())
def test_the_id_pattern_matches_exactly_the_ids_from_1_to_2_63_minus_1(
    n: int, leading_zero: bool
) -> None:
    text = ("0" if leading_zero else "") + str(n)
    expected = not leading_zero and 1 <= n <= ID_MAXIMO
    assert (re.fullmatch(numbers_up_to(ID_MAXIMO), text) is not None) is expected


@given(st.integers(min_value=1, max_value=10**6), st.integers(min_value=0, max_value=2 * 10**6))
def test_the_id_pattern_is_exact_for_any_bound(bound: int, n: int) -> None:
    pattern = numbers_up_to(bound)
    for candidate in (n, bound, bound + 1, bound - 1):
        expected = 1 <= candidate <= bound
        assert (re.fullmatch(pattern, str(candidate)) is not None) is expected, (bound, candidate)


def multipart(parts: list[tuple[str, bytes]], nameless: bool) -> bytes:
    """A multipart body with boundary XX, sometimes with a part that lacks its name."""
    body = b"".join(
        b'--XX\r\nContent-Disposition: form-data; name="'
        + name.encode()
        + b'"\r\n\r\n'
        + value
        + b"\r\n"
        for name, value in parts
    )
    if nameless:
        body += b"--XX\r\nContent-Disposition: form-data\r\n\r\nx\r\n"
    return body + b"--XX--\r\n"


class TestNoInputGetsA500:
    """Whatever a client sends, the answer is a page with a status below 500."""

    PATHS = ("/", "/produtos", "/produtos/novo", "/produtos/1", "/produtos/0", "/x")
    TYPES = (
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=utf-8",
        "multipart/form-data",
        "multipart/form-data; boundary=XX",
        "multipart/form-data; boundary=",
        "application/json",
        "text/plain; charset=\xff",
        "",
    )
    FIELDS = ("_method", "produto.nome", "produto.descricao", "produto.preco", "produto.id")
    ODD_HEADER_VALUES = (
        "http://[",
        "null",
        "http://testserver",
        "same-origin",
        "cross-site",
        "aviso=removido%3Ax",
        "aviso=%FF%FE",
        "aviso=adicionado:",
        "²",
        "-1",
        "99999999999999999999",
        "testserver:99999",
    )

    @hypothesis_settings(
        max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]),
        path=st.one_of(
            st.sampled_from(PATHS),
            st.text(max_size=30).map(lambda t: "/produtos/" + urllib.parse.quote(t)),
        ),
        content_type=st.sampled_from(TYPES),
        extra=st.dictionaries(
            st.sampled_from(["origin", "sec-fetch-site", "cookie", "host", "content-length"]),
            st.one_of(st.sampled_from(ODD_HEADER_VALUES), st.text(max_size=20)),
        ),
        body=st.one_of(
            st.binary(max_size=300),
            st.dictionaries(st.sampled_from(FIELDS), st.text(max_size=40)).map(
                lambda d: urllib.parse.urlencode(d).encode()
            ),
            st.builds(
                multipart,
                st.lists(st.tuples(st.sampled_from(FIELDS), st.binary(max_size=20)), max_size=4),
                st.booleans(),
            ),
        ),
    )
    def test_random_requests_never_get_a_server_error(
        self,
        client: TestClient,
        method: str,
        path: str,
        content_type: str,
        extra: dict[str, str],
        body: bytes,
    ) -> None:
        headers = {k.encode(): v.encode("utf-8", "replace") for k, v in extra.items()}
        if content_type:
            headers[b"content-type"] = content_type.encode("latin-1")
        response = client.request(method, path, content=body, headers=headers)
        assert response.status_code < 500, response.text
