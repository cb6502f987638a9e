"""The URIs around the product: health checks for load balancers, /healthz (the process) and
/readyz (the database too), and the /docs page as it depends on how it was reached."""

import dataclasses
import html
import re
from pathlib import Path

import httpx2
from starlette.testclient import TestClient

from catalogo.domain.errors import StorageUnavailable
from catalogo.http.app import create_app
from catalogo.runtime.settings import Settings
from tests.databases import Database
from tests.helpers import ONLY_SQLITE, FailingStorage, storage_replaced
from tests.processes import exchange, fetch, serving


def assert_healthy(response: httpx2.Response) -> None:
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers["cache-control"] == "no-store"


def test_healthz_answers_without_the_database(settings: Settings, db: Database) -> None:
    """With the schema gone, then with a database that answers nothing at all (every storage
    call fails, as when the server is down): /readyz says so each time, and /healthz is 200."""
    app = create_app(settings)
    with TestClient(app) as client:
        db.execute("DROP TABLE alembic_version")
        assert client.get("/readyz").status_code == 503
        assert_healthy(client.get("/healthz"))
        down = FailingStorage(StorageUnavailable("the database does not answer"))
        with storage_replaced(app, down):
            assert client.get("/readyz").status_code == 503
            assert client.get("/produtos").status_code == 503
            assert_healthy(client.get("/healthz"))


def test_readyz_is_200_on_a_current_schema(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "schema": "0018"}


def test_readyz_is_503_on_an_outdated_schema_and_says_what_to_do(
    client: TestClient, db: Database
) -> None:
    db.execute("UPDATE alembic_version SET version_num = '0001'")
    response = client.get("/readyz", headers={"accept": "application/json"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert "catalogo migrate" in response.json()["detail"]


def test_readyz_is_503_on_a_database_never_migrated(client: TestClient, db: Database) -> None:
    db.execute("DROP TABLE alembic_version")
    response = client.get("/readyz", headers={"accept": "application/json"})
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert "está vazio" in response.json()["detail"]
    assert "catalogo migrate" in response.json()["detail"]


def curl_address(page: str) -> str:
    """The address /docs' curl example posts to."""
    found = re.search(r"<pre><code>curl .*? (\S+)/produtos</code></pre>", page, re.DOTALL)
    assert found is not None, "no curl example"
    return html.unescape(found[1])


class TestTheDocsCurlExample:
    """/docs' curl example names the address the page was read from, so that it can be copied
    as it is: the scheme the client used and the Host it sent (one the allow-list let in)."""

    def test_names_the_host_and_port_the_request_came_to(self, settings: Settings) -> None:
        allowed = dataclasses.replace(settings, allowed_hosts=("127.0.0.1", "[::1]", ".example"))
        with TestClient(create_app(allowed)) as client:
            for host in ("127.0.0.1:8123", "[::1]:9000", "catalogo.example"):
                page = client.get("/docs", headers={"Host": host})
                assert page.status_code == 200
                assert curl_address(page.text) == f"http://{host}"
                assert "8000" not in page.text

    def test_says_https_when_the_page_came_over_https(self, settings: Settings) -> None:
        with TestClient(create_app(settings), base_url="https://testserver") as client:
            assert curl_address(client.get("/docs").text) == "https://testserver"

    def test_believes_x_forwarded_proto_only_from_a_trusted_balancer(
        self, settings: Settings
    ) -> None:
        https = {"X-Forwarded-Proto": "https"}
        with TestClient(create_app(settings)) as client:
            assert curl_address(client.get("/docs", headers=https).text) == "http://testserver"
        balanced = dataclasses.replace(settings, trusted_proxies=("testclient",))
        with TestClient(create_app(balanced)) as client:
            assert curl_address(client.get("/docs", headers=https).text) == "https://testserver"

    @ONLY_SQLITE
    def test_on_a_real_server_with_host_and_from_http_1_0_without_it(
        self, database: str, tmp_path: Path
    ) -> None:
        with serving(database, tmp_path) as (base, _):
            assert curl_address(fetch("GET", f"{base}/docs").text) == base
            hostless = exchange(base, b"GET /docs HTTP/1.0\r\n\r\n")
            assert hostless.status == 200
            assert curl_address(hostless.body) == base  # the address the server listens on


class TestTheDocsPage:
    def test_its_index_lists_no_options_and_says_options_once(self, client: TestClient) -> None:
        page = client.get("/docs").text
        index = page.split('<nav class="docs-indice"')[1].split("</nav>")[0]
        assert "OPTIONS" not in index
        assert 'href="#listarProdutos"' in index and 'href="#saude"' in index
        assert not re.search(r'<span class="metodo">OPTIONS</span>', page)
        assert page.count("<code>OPTIONS</code>, com 204 e o cabeçalho <code>Allow</code>") == 1

    def test_every_operation_is_in_the_index_with_its_details_folded(
        self, client: TestClient
    ) -> None:
        page = client.get("/docs").text
        index = page.split('<nav class="docs-indice"')[1].split("</nav>")[0]
        operations = re.findall(r'<a href="#([^"]+)"><span class="metodo">', index)
        assert len(operations) == 26
        for anchor in operations:
            section = page.split(f'<h3 id="{anchor}">')[1].split('<section class="operacao"')[0]
            summary = re.search(r'<p class="resumo">.+?</p>\s*<details class="detalhes">', section)
            assert summary is not None, anchor  # the summary shows, the details are folded
            assert "<summary>Detalhes<span" in section and "Respostas" in section
        assert '<details class="detalhes" open' not in page
