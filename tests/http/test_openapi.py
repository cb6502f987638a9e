"""The API description: served, true to the behaviour (schemathesis), and readable at /docs."""

import dataclasses
import functools
import itertools
import os
import re
import shutil
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import httpx2
import hypothesis
import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck
from requests.structures import CaseInsensitiveDict
from schemathesis.specs.openapi.checks import (
    ignored_auth,
    negative_data_rejection,
    positive_data_acceptance,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from catalogo.domain import busca, contas
from catalogo.domain.contas import Papel
from catalogo.domain.planilhas import XLSX
from catalogo.http import openapi
from catalogo.http.app import create_app
from catalogo.http.identity import Mode
from catalogo.http.resources.ops import InicioResource
from catalogo.http.resources.produtos import ProdutoResource
from catalogo.runtime.settings import Settings
from catalogo.storage import migrations
from tests.databases import POSTGRESQL_URL, Database, PostgreSQLServer
from tests.helpers import JSON, add_token, add_user, bearer, eventually, sign_in

# One app per backend for the whole run: schemathesis generates its tests when this module is
# collected (its from_fixture loader does not work with pytest 9), so each app is made here, on
# a database named here: a file of its own, and a PostgreSQL database. The fixtures below make
# and migrate each before the first request starts its app, and open the connection through
# which every example starts from an empty catalog (`_afresh`).
_ACCEPTANCE_CHECKS: list[Any] = [positive_data_acceptance, negative_data_rejection, ignored_auth]
_FOLDER = Path(tempfile.mkdtemp(prefix="catalogo-openapi-"))
_POSTGRESQL_DATABASE = f"catalogo_openapi_{os.getpid()}"
_URLS = {
    "sqlite": f"sqlite:///{_FOLDER / 'catalogo.db'}",
    "postgresql": urllib.parse.urlsplit(POSTGRESQL_URL)
    ._replace(path=f"/{_POSTGRESQL_DATABASE}")
    .geturl(),
}
_DATABASES: dict[str, Database] = {}
# An import may be sent as an xlsx body: what schemathesis sends for it, a zip's first bytes
# and anything after them (the server must refuse what is no workbook, with a 422).
schemathesis.openapi.media_type(
    XLSX, hypothesis.strategies.binary(max_size=200).map(lambda tail: b"PK\x03\x04" + tail)
)


@pytest.fixture(scope="module")
def openapi_sqlite() -> Iterator[None]:
    migrations.upgrade(Settings(database_url=_URLS["sqlite"]))
    _DATABASES["sqlite"] = Database(_URLS["sqlite"])
    yield
    _DATABASES.pop("sqlite").close()
    shutil.rmtree(_FOLDER, ignore_errors=True)


@pytest.fixture(scope="module")
def openapi_postgresql(postgresql: PostgreSQLServer) -> Iterator[None]:
    url = postgresql.create(name=_POSTGRESQL_DATABASE)
    migrations.upgrade(Settings(database_url=url))
    _DATABASES["postgresql"] = Database(url)
    yield
    _DATABASES.pop("postgresql").close()
    postgresql.drop(url)


# Every example runs as an editor's token, once a user exists: what the description says of
# each operation is checked as a signed-in client meets it. Left out: schemathesis's
# ignored_auth check, which spoils one of the two schemes each operation accepts (the session
# cookie) and expects a refusal while the other (the token) is still valid; refusals are
# tests/http/test_access.py's, one per mode, credential and role.
_TOKEN = contas.new_token()


def _afresh(backend: str) -> None:
    """Every example starts from an empty catalog, ids from 1, whatever the examples before it
    did: Hypothesis replays examples, and one that meets other data the second time around
    gets other answers (and, stateful, other links to follow: FlakyStrategyDefinition). Then
    the one user and `_TOKEN`, written straight into the database: hashing a password for
    each example would be most of the run."""
    db = _DATABASES[backend]
    db.wipe()
    db.execute(
        "INSERT INTO usuarios (nome, papel, password_hash, created_at) "
        "VALUES ('maria', 'editor', 'no password', 0)"
    )
    db.execute(
        "INSERT INTO tokens (usuario_id, nome, papel, secret_hash, created_at, last_used_at) "
        "SELECT id, 'schemathesis', 'editor', ?, 0, 9e12 FROM usuarios",
        (contas.digest(_TOKEN),),
    )


def _signed(case: "schemathesis.Case") -> None:  # type: ignore[type-arg]
    if case.headers is None:
        case.headers = CaseInsensitiveDict()
    case.headers["Authorization"] = f"Bearer {_TOKEN}"


def _schema(backend: str) -> Any:
    """The description as the app serves it once a user exists (CATALOGO_AUTH unset: writes),
    which `_afresh` makes sure of before every example."""
    app = create_app(
        Settings(database_url=_URLS[backend], allowed_hosts=("testserver",), access_log=False)
    )
    document = openapi.Description(app.routes).document("writes").content
    schema = schemathesis.openapi.from_dict(orjson.loads(orjson.dumps(document)))
    schema.app = app
    schema.location = "/openapi.json"
    return schema


def _conformance(backend: str) -> Callable[..., None]:
    @_schema(backend).parametrize()  # type: ignore[untyped-decorator]
    @hypothesis.settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    def test(case: schemathesis.Case) -> None:  # type: ignore[type-arg]
        """No 5xx, and every status, content type, header and body as the description says.

        Left out: schemathesis's data-acceptance checks. The description gives prices in their
        canonical form while the server also reads `1.234,56`; and schemathesis 4.32 generates
        some "valid" form values that break the string patterns, then expects them accepted.
        """
        _afresh(backend)
        if case.headers and "Idempotency-Key" in case.headers:
            # Generated keys repeat across examples, and a reused key with another body is 422
            # by design (test_resources_idempotency.py), no failure of the description: each
            # example has an empty catalog, so one fixed key is always a new one.
            case.headers["Idempotency-Key"] = "key-0"
        _signed(case)
        case.call_and_validate(excluded_checks=_ACCEPTANCE_CHECKS)

    return test  # type: ignore[no-any-return]


def _workflow(backend: str) -> type:
    class Workflow(_schema(backend).as_state_machine()):  # type: ignore[misc]
        """Stateful: create, then follow the description's links to read, update and remove."""

        def setup(self) -> None:
            _afresh(backend)
            self.keys = itertools.count()

        def before_call(self, case: schemathesis.Case) -> None:  # type: ignore[type-arg]
            if case.headers and "Idempotency-Key" in case.headers:
                case.headers["Idempotency-Key"] = f"key-{next(self.keys)}"  # each call its own
            _signed(case)

        def validate_response(
            self,
            response: "schemathesis.Response",
            case: schemathesis.Case,  # type: ignore[type-arg]
            additional_checks: object = None,
            **kwargs: object,
        ) -> None:
            case.validate_response(response, excluded_checks=_ACCEPTANCE_CHECKS)

    test_case: type = Workflow.TestCase
    test_case.settings = hypothesis.settings(  # type: ignore[attr-defined]
        max_examples=25,
        stateful_step_count=6,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    return test_case


def _marked(test: Any, *marks: pytest.MarkDecorator) -> Any:
    return functools.reduce(lambda marked, mark: mark(marked), marks, test)


_ON_SQLITE = [pytest.mark.usefixtures("openapi_sqlite")]
_ON_POSTGRESQL = [pytest.mark.postgresql, pytest.mark.usefixtures("openapi_postgresql")]
test_every_operation_conforms_to_the_description_on_sqlite = _marked(
    _conformance("sqlite"), *_ON_SQLITE
)
test_every_operation_conforms_to_the_description_on_postgresql = _marked(
    _conformance("postgresql"), *_ON_POSTGRESQL
)
TestWorkflowOnSQLite = _marked(_workflow("sqlite"), *_ON_SQLITE)
TestWorkflowOnPostgreSQL = _marked(_workflow("postgresql"), *_ON_POSTGRESQL)


def test_the_description_is_openapi_3_1_with_links_between_operations(
    client: TestClient,
) -> None:
    document = client.get("/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    post = document["paths"]["/produtos"]["post"]
    assert set(post["requestBody"]["content"]) == {
        "application/json",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    }
    assert set(post["responses"]["201"]["links"]) == {
        "ObterProduto",
        "AtualizarProduto",
        "RemoverProduto",
    }


def test_the_description_carries_the_field_rules_of_the_model(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    nome = schemas["ProdutoEntrada"]["properties"]["nome"]
    assert (nome["minLength"], nome["maxLength"]) == (1, 200)
    assert schemas["ProdutoEntrada"]["properties"]["descricao"]["maxLength"] == 5000
    assert schemas["ProdutoEntrada"]["required"] == ["nome", "preco"]


def test_the_docs_say_in_words_the_text_rules_a_pattern_cannot(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    nome = schemas["ProdutoEntrada"]["properties"]["nome"]
    assert "\\u202a-\\u202e" in nome["pattern"] and "\\u2028\\u2029" in nome["pattern"]
    assert (
        "NFC" in nome["description"] and "um nome só deles conta como vazio" in nome["description"]
    )
    assert "U+202A a U+202E" in nome["description"]
    page = client.get("/docs").text
    assert "um nome só deles conta como vazio" in page
    assert "gravadas como <code>\\n</code>" in page


def test_the_docs_page_ships_everything_it_loads_under_the_sites_own_policy(
    client: TestClient,
) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    policy = client.get("/produtos").headers["content-security-policy"]
    assert page.headers["content-security-policy"] == policy
    assert not re.search(r'(?:src|href)="(?!/|#)', page.text)
    for asset in re.findall(r'(?:src|href)="(/[^"]+)"', page.text):
        assert client.get(asset).status_code == 200, asset


def test_the_docs_page_groups_the_operations_and_shows_real_examples(client: TestClient) -> None:
    page = client.get("/docs").text
    headings = re.findall(r'<h2 id="[^"]+">(.*?)</h2>', page)
    assert headings == [
        "Experimentar daqui",
        "Produtos",
        "Páginas",
        "Histórico",
        "Lotes",
        "Importações",
        "Webhooks",
        "Operação",
    ]
    produtos = page.split('<h2 id="produtos">')[1].split('<h2 id="p')[0]
    assert "OPTIONS" not in produtos and "/healthz" not in produtos
    assert "&#34;nome&#34;: &#34;Caneca de cerâmica azul 300 ml&#34;" in produtos
    assert re.search(r"<dt><code>preco</code> <span class=\"onde\">obrigatório</span>", produtos)
    assert "<code>application/problem+json</code>" in page and "swagger" not in page.lower()


def test_the_docs_page_offers_to_try_every_json_operation_and_no_page_for_people(
    client: TestClient,
) -> None:
    page = client.get("/docs").text
    tried = re.findall(r'<form class="experimentar" data-method="(\w+)" data-path="([^"]+)"', page)
    assert tried == [
        ("GET", "/produtos"),
        ("POST", "/produtos"),
        ("POST", "/produtos/{id}/restauracao"),
        ("GET", "/produtos/{id}"),
        ("PUT", "/produtos/{id}"),
        ("DELETE", "/produtos/{id}"),
        ("GET", "/produtos/{id}/historico"),
        ("GET", "/produtos/removidos"),
        ("GET", "/produtos/eventos"),
        ("POST", "/produtos/lote"),
        ("GET", "/produtos/lote/{id}"),
        ("POST", "/produtos/lote/{id}/reversao"),
        ("GET", "/produtos/importacoes"),
        ("GET", "/produtos/importacoes/{id}"),
        ("POST", "/produtos/importacoes/{id}/confirmacao"),
        ("POST", "/produtos/importacoes/{id}/reversao"),
        ("GET", "/webhooks"),
        ("POST", "/webhooks"),
        ("GET", "/webhooks/{id}"),
        ("DELETE", "/webhooks/{id}"),
        ("POST", "/webhooks/{id}/reenvio"),
        ("GET", "/healthz"),
        ("GET", "/readyz"),
    ]
    assert '<input id="obterProduto-id" name="id" data-in="path"' in page
    assert '<input id="atualizarProduto-If-Match" name="If-Match" data-in="header"' in page
    assert '<script src="/static/docs.js" defer></script>' in page


def test_every_example_in_the_description_is_valid_for_its_operation(client: TestClient) -> None:
    for example in (
        openapi.parts.STORED_EXAMPLE,
        {k: v for k, v in openapi.parts.STORED_EXAMPLE.items() if k not in ("id", "versao")},
    ):
        body = {k: v for k, v in example.items() if k != "id"}
        created = client.post("/produtos", json=body, headers={"Accept": "application/json"})
        assert created.status_code == 201, created.text
        freed = {"nome": "x", "preco": "1", "codigo": None}  # the next example takes the code
        assert client.put(created.headers["location"], json=freed).status_code == 200


def test_every_page_links_to_the_docs(client: TestClient) -> None:
    assert '<a href="/docs">Documentação da API</a>' in client.get("/produtos").text


_JSON = {"Accept": "application/json"}


def _query_parameters(
    document: dict[str, Any], operation: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Each query parameter's schema by the name it has in a URL: an exploded object's
    properties (the cursors, a component of their own) by their own names."""
    found: dict[str, dict[str, Any]] = {}
    for parameter in operation["parameters"]:
        schema = parameter["schema"]
        if "$ref" in schema:
            schema = document["components"]["schemas"][schema["$ref"].rpartition("/")[2]]
        if parameter["in"] == "query" and schema.get("type") == "object":
            found.update(schema["properties"])
        elif parameter["in"] == "query":
            found[parameter["name"]] = schema
    return found


def test_the_list_describes_its_search_filters_orders_cursors_and_count(
    client: TestClient,
) -> None:
    document = client.get("/openapi.json").json()
    operation = document["paths"]["/produtos"]["get"]
    query = _query_parameters(document, operation)
    assert set(query) == {
        "q",
        "ordem",
        "preco_min",
        "preco_max",
        "id",
        "codigo",
        "formato",
        "depois",
        "antes",
    }
    assert query["ordem"]["enum"] == list(busca.ORDENS)
    ids = next(p for p in operation["parameters"] if p["name"] == "id")
    assert (ids["style"], ids["explode"], ids["schema"]["type"]) == ("form", True, "array")
    # A number in the id orders, an opaque token in the others: both are strings.
    assert query["depois"]["type"] == query["antes"]["type"] == "string"
    assert [p["name"] for p in operation["parameters"] if p["in"] == "header"] == ["Prefer"]
    applied = operation["responses"]["200"]["headers"]["Preference-Applied"]
    assert applied["schema"]["enum"] == ["count=exact"]
    pagina = document["components"]["schemas"]["Pagina"]
    assert "total" in pagina["properties"] and "total" not in pagina["required"]


def test_the_limits_the_list_describes_are_the_ones_it_keeps(client: TestClient) -> None:
    """`q`'s maxLength, `id`'s maxItems and a cursor's maxLength, as the description gives
    them: a request at each limit is read, one past it is refused."""
    document = client.get("/openapi.json").json()
    query = _query_parameters(document, document["paths"]["/produtos"]["get"])

    def status(**params: Any) -> int:
        return client.get("/produtos", params=params, headers=_JSON).status_code

    longest = query["q"]["maxLength"]
    assert (status(q="a" * longest), status(q="a" * (longest + 1))) == (200, 400)
    most = query["id"]["maxItems"]
    ids = [str(id) for id in range(1, most + 2)]
    assert (status(id=ids[:most]), status(id=ids)) == (200, 400)
    # Tokens of no query at all, so both are refused; only the longer one for its length.
    cursor = query["depois"]["maxLength"]
    for length, too_long in ((cursor, False), (cursor + 1, True)):
        params = {"ordem": "nome", "depois": "A" * length}
        refused = client.get("/produtos", params=params, headers=_JSON)
        assert refused.status_code == 400
        assert ("longo demais" in refused.json()["detail"]) is too_long


def test_a_count_is_given_only_when_asked_for_and_says_it_was(client: TestClient) -> None:
    for nome in ("Pão de queijo", "pao doce", "Caneca"):
        client.post("/produtos", json={"nome": nome, "preco": "10"}, headers=_JSON)
    counted = client.get("/produtos?q=PAO", headers={**_JSON, "Prefer": "count=exact"})
    assert counted.headers["Preference-Applied"] == "count=exact"
    assert counted.json()["total"] == 2
    plain = client.get("/produtos?q=PAO", headers=_JSON)
    assert "total" not in plain.json() and "Preference-Applied" not in plain.headers


# What the description says each operation asks of the client, against what the server does,
# in each mode: over HTTP to the real app, anonymous, with a bad token, and with a token and a
# session of each role.
_BAD_TOKEN = bearer("cat_" + "x" * 43)
_HTML = {"accept": "text/html"}


@dataclasses.dataclass
class _Staff:
    """A token and a session of each role, made through the app's own store and /entrar."""

    tokens: dict[Papel, str]
    sessions: dict[Papel, str]

    @classmethod
    def made(cls, client: TestClient, database: str) -> "_Staff":
        tokens: dict[Papel, str] = {}
        sessions: dict[Papel, str] = {}
        for papel in contas.PAPEIS:
            usuario = add_user(database, nome=papel, papel=papel)
            if papel in contas.TOKEN_PAPEIS:
                tokens[papel] = add_token(database, usuario, papel)
            assert sign_in(client, nome=papel).status_code == 303
            sessions[papel] = client.cookies["sessao"]
            client.cookies.clear()
        return cls(tokens, sessions)

    def as_token(self, papel: Papel) -> dict[str, str]:
        return bearer(self.tokens[papel])

    def as_session(self, papel: Papel) -> dict[str, str]:
        return {"cookie": f"sessao={self.sessions[papel]}", **JSON}


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Each (method, path, operation) of the document; HEAD goes with GET, as the server has it."""
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                yield method.upper(), path, operation
                if method == "get":
                    yield "HEAD", path, operation


def _role(security: list[dict[str, list[str]]]) -> Papel | None:
    """The one role the requirements name, if any."""
    (named,) = {tuple(roles) for requirement in security for roles in requirement.values()}
    return cast(Papel, named[0]) if named else None


def _refused_for_credentials(response: httpx2.Response) -> bool:
    """401, or a browser sent to /entrar."""
    location = response.headers.get("location", "")
    return response.status_code == 401 or (
        response.status_code == 303 and location.startswith("/entrar")
    )


def _described_as_served(client: TestClient, mode: str, headers: dict[str, str]) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/openapi.json", headers=headers).json()
    assert document["info"]["x-catalogo-auth"] == mode
    return document


_AN_IMPORT = "0" * 32  # an import's id, of none there is: refused or let through, then 404


def _check_every_operation(
    client: TestClient, db: Database, document: dict[str, Any], staff: _Staff | None
) -> None:
    """For every operation: an anonymous request (a program's, a browser's) is refused for
    want of credentials exactly when the document says one is needed, with a status it lists;
    a bad token is refused exactly where credentials are read (401 listed); a token and a
    session of the role it names are let through, and one of the role below is refused with a
    403 it lists."""
    db.insert("Caneta", 250)
    (id,) = db.execute("SELECT max(id) FROM produtos").fetchone()
    for method, path, operation in _operations(document):
        named = _AN_IMPORT if path.startswith(("/produtos/importacoes/", "/produtos/lote/")) else id
        url, security, listed = path.format(id=named), operation["security"], operation["responses"]
        where = f"{method} {path}"
        needed = bool(security)
        for headers in (JSON, _HTML):
            anonymous = client.request(method, url, headers=headers)
            assert _refused_for_credentials(anonymous) is needed, (where, anonymous.status_code)
            assert not needed or str(anonymous.status_code) in listed, where
        bad = client.request(method, url, headers=_BAD_TOKEN)
        assert (bad.status_code == 401) is ("401" in listed), (where, bad.status_code)
        role = _role(security) if security else None
        if role is None or staff is None:
            continue
        for signed in (staff.as_token(role), staff.as_session(role)):
            let = client.request(method, url, headers=signed)
            assert let.status_code not in (401, 403), (where, let.status_code, let.text)
        below = contas.PAPEIS.index(role) - 1
        if below >= 0:
            lesser = staff.as_token(contas.PAPEIS[below])
            refused = client.request(method, url, headers=lesser)
            assert refused.status_code == 403 and "403" in listed, (where, refused.status_code)


def _docs_of(client: TestClient, operation_id: str) -> str:
    """The /docs page's section for one operation."""
    page = client.get("/docs").text
    return page.split(f'<h3 id="{operation_id}">')[1].split("</section>")[0]


def _app(settings: Settings, auth: Mode | None) -> TestClient:
    return TestClient(create_app(dataclasses.replace(settings, auth=auth)), follow_redirects=False)


@pytest.mark.parametrize("mode", ["off", "writes", "all"])
def test_in_each_mode_the_description_asks_for_the_credentials_the_server_does(
    settings: Settings, database: str, db: Database, mode: Mode
) -> None:
    with _app(settings, mode) as client:
        staff = _Staff.made(client, database)
        document = _described_as_served(client, mode, staff.as_token("leitor"))
        _check_every_operation(client, db, document, staff)


def test_unset_the_description_asks_nothing_until_the_first_user_then_what_writes_asks(
    settings: Settings, database: str, db: Database
) -> None:
    with _app(settings, None) as client:
        before = _described_as_served(client, "off", JSON)
        _check_every_operation(client, db, before, None)
        assert "Quem pode: Qualquer um; um token enviado precisa ser válido." in _docs_of(
            client, "criarProduto"
        )
        staff = _Staff.made(client, database)
        eventually(lambda: client.get("/openapi.json").json()["info"]["x-catalogo-auth"] != "off")
        after = _described_as_served(client, "writes", JSON)
        _check_every_operation(client, db, after, staff)
        assert "Quem pode: Papel editor ou acima (token ou sessão)." in _docs_of(
            client, "criarProduto"
        )


def test_every_route_allows_in_its_405_what_options_and_the_description_list(
    settings: Settings, database: str
) -> None:
    """A method no resource defines (PATCH) gets 405; its Allow, OPTIONS' Allow and the
    operations the description has for the path (HEAD with GET) are one list. Routes left out
    of the description are the ones LEFT_OUT names."""
    add_user(database, papel="admin")  # OPTIONS of the admins' pages needs an admin
    app = create_app(settings)
    with TestClient(app, follow_redirects=False) as client:
        assert sign_in(client).status_code == 303
        paths = client.get("/openapi.json").json()["paths"]
        left_out = {path for named in openapi.LEFT_OUT.values() for path in named}
        for route in app.routes:
            if not isinstance(route, Route):
                assert isinstance(route, Mount) and route.path in left_out  # /static: files
                continue
            nested = ("/produtos/importacoes/", "/produtos/lote/")
            named = _AN_IMPORT if route.path_format.startswith(nested) else 1
            url = route.path_format.format(id=named, nome="maria")
            refused, answered = client.patch(url), client.options(url)
            assert (refused.status_code, answered.status_code) == (405, 204), url
            allow = answered.headers["allow"]
            assert refused.headers["allow"] == allow, url
            if route.path_format in left_out:
                assert route.path_format not in paths
                continue
            assert route.path_format in paths, f"{url}: neither described nor left out"
            described = {m.upper() for m in paths[route.path_format] if m != "parameters"}
            with_head = described | ({"HEAD"} if "GET" in described else set())
            assert set(allow.split(", ")) == with_head, url


def test_a_description_that_disagrees_with_the_routes_stops_the_app_being_made() -> None:
    routes = create_app(Settings(database_url="sqlite:///never-opened.db")).routes

    class Patched(ProdutoResource):
        async def patch(self, request: Request) -> Response:
            return Response(status_code=204)

    wrong = {
        "/produtos/eventos: described, but no route": [
            r for r in routes if getattr(r, "path", "") != "/produtos/eventos"
        ],
        "/nada: a route neither described nor in LEFT_OUT": [
            *routes,
            Route("/nada", InicioResource),
        ],
        "/produtos/{id}: describes ['DELETE', 'GET', 'PUT'], answers ['DELETE', 'GET', 'PATCH', "
        "'PUT']": [
            Route("/produtos/{id:produto_id}", Patched)
            if getattr(r, "endpoint", None) is ProdutoResource
            else r
            for r in routes
        ],
    }
    openapi.Description(routes)  # as they are: no error
    for message, changed in wrong.items():
        with pytest.raises(openapi.Drift, match=re.escape(message)):
            openapi.Description(changed)
