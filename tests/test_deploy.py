"""The deployment recipe of deploy/, brought up on loopback: three `catalogo serve` instances
behind the real HAProxy with deploy/haproxy.cfg as it ships, serving HTTPS with a certificate
made here, on one real PostgreSQL. Nothing acknowledged is lost and nothing is stale, whichever
instance a request reaches; plain HTTP only redirects to HTTPS."""

import csv
import datetime
import grp
import io
import ipaddress
import os
import pwd
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from catalogo.runtime.settings import Settings
from catalogo.storage import migrations
from tests import processes
from tests.databases import Database, unavailable
from tests.helpers import (
    JSON,
    add_token,
    add_user,
    all_at_once,
    bearer,
    create_via_form,
    eventually,
    form_on,
    post_form,
    sign_in,
)
from tests.http.middleware.test_outermost import access_lines
from tests.processes import (
    OwnPostgreSQL,
    catalogo,
    fetch,
    free_port,
    http_client,
    start_serving,
    stop,
)

pytestmark = pytest.mark.postgresql

HAPROXY_CFG = Path(__file__).parent.parent / "deploy" / "haproxy.cfg"


@dataclass
class Stack:
    database: str
    balancer: str  # https://
    plain: str  # http://, which redirects
    status: str
    instances: list[str]
    processes: list[subprocess.Popen[bytes]]
    logs: Path

    def db(self) -> "closing[Database]":
        return closing(Database(self.database))

    def servers(self) -> dict[tuple[str, str], dict[str, str]]:
        """HAProxy's own view of each server: its state (UP, DOWN) and counters."""
        text = fetch("GET", f"{self.status}/;csv").text.removeprefix("# ")
        return {(row["pxname"], row["svname"]): row for row in csv.DictReader(io.StringIO(text))}

    def restart(self, n: int) -> None:
        port = int(self.instances[n].rsplit(":", 1)[1])
        _, self.processes[n] = start_serving(self.database, _log(self.logs, n), port=port)
        eventually(lambda: self.servers()[("ready", f"catalogo{n + 1}")]["status"] == "UP")


def certificate(folder: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 and localhost with its key, in one PEM file as
    HAProxy takes it; the tests' clients trust it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "catalogo de teste")])
    now = datetime.datetime.now(datetime.UTC)
    made = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = made.public_bytes(serialization.Encoding.PEM)
    path = folder / "catalogo.pem"
    path.write_bytes(
        pem
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    processes._TLS.load_verify_locations(cadata=pem.decode())
    return path


def _log(logs: Path, n: int) -> Path:
    return logs / f"catalogo{n + 1}.log"


def _start_instances(
    database: str, logs: Path, ports: list[int]
) -> list[tuple[str, subprocess.Popen[bytes]]]:
    """Starts one `catalogo serve` per port, all at once (each takes a second or so to start),
    and waits until each answers; if one does not, stops the others."""
    with ThreadPoolExecutor(len(ports)) as pool:
        futures = [
            pool.submit(start_serving, database, _log(logs, n), port=port)
            for n, port in enumerate(ports)
        ]
    started = [f.result() for f in futures if f.exception() is None]
    failed = [error for f in futures if (error := f.exception()) is not None]
    if failed:
        for _, process in started:
            stop(process)
        raise failed[0]
    return started


@pytest.fixture(scope="module")
def stack(
    own_postgresql: OwnPostgreSQL, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    if haproxy is None:
        unavailable("HAProxy is not installed: apt-get install haproxy, to test deploy/")
    logs = tmp_path_factory.mktemp("deploy")
    server = own_postgresql.server()
    database = server.create()
    migrations.upgrade(Settings(database_url=database))
    ports = [free_port() for _ in range(3)]
    started = _start_instances(database, logs, ports)
    balancer, plain, status = free_port(), free_port(), free_port()
    env = {
        **os.environ,
        "CATALOGO_LB_BIND": f"127.0.0.1:{balancer}",
        "CATALOGO_LB_HTTP": f"127.0.0.1:{plain}",
        "CATALOGO_LB_CERT": str(certificate(logs)),
        "CATALOGO_LB_STATUS": f"127.0.0.1:{status}",
        "CATALOGO_LB_USER": pwd.getpwuid(os.getuid()).pw_name,
        "CATALOGO_LB_GROUP": grp.getgrgid(os.getgid()).gr_name,
        **{f"CATALOGO_APP{n + 1}": f"127.0.0.1:{port}" for n, port in enumerate(ports)},
    }
    with (logs / "haproxy.log").open("wb") as log:
        lb = subprocess.Popen(
            [haproxy, "-db", "-f", str(HAPROXY_CFG)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    stack = Stack(
        database,
        f"https://127.0.0.1:{balancer}",
        f"http://127.0.0.1:{plain}",
        f"http://127.0.0.1:{status}",
        [base for base, _ in started],
        [process for _, process in started],
        logs,
    )
    try:
        eventually(lambda: _all_up(stack))
        yield stack
    finally:
        stop(lb)
        for process in stack.processes:
            stop(process)
        server.drop(database)


def _all_up(stack: Stack) -> bool:
    try:
        servers = stack.servers()
    except httpx2.TransportError:
        return False
    states = [row["status"] for (px, sv), row in servers.items() if sv.startswith("catalogo")]
    return states == ["UP"] * 6


def _served(stack: Stack) -> dict[str, int]:
    """How many requests each instance has been given so far."""
    return {sv: int(row["stot"]) for (px, sv), row in stack.servers().items() if px == "ready"}


def test_the_site_is_served_over_https_and_plain_http_only_redirects_there(stack: Stack) -> None:
    with http_client(stack.balancer) as client:
        page = client.get("/produtos")
        assert page.status_code == 200 and page.http_version == "HTTP/1.1"
        assert page.headers["strict-transport-security"] == "max-age=63072000"
    port = stack.plain.rsplit(":", 1)[1]
    for method in ("GET", "POST", "PUT"):
        moved = fetch(method, f"{stack.plain}/produtos/1?lista=q%3Dx", data={"produto.nome": "x"})
        assert moved.status_code == 301, method
        assert moved.headers["location"] == f"https://127.0.0.1:{port}/produtos/1?lista=q%3Dx"
        assert "strict-transport-security" not in moved.headers and not moved.content


def test_what_one_instance_writes_every_other_reads_at_once(stack: Stack) -> None:
    first, *others = stack.instances
    created = fetch("POST", f"{first}/produtos", json={"nome": "Caneca", "preco": "29.90"})
    assert created.status_code == 201
    path = created.headers["location"]
    for base in [*others, stack.balancer]:
        assert fetch("GET", f"{base}{path}", headers=JSON).json() == created.json()
        assert "Caneca" in fetch("GET", f"{base}/produtos").text

    updated = fetch(
        "PUT",
        f"{others[0]}{path}",
        json={"nome": "Caneca azul", "preco": "31"},
        headers={**JSON, "if-match": created.headers["etag"]},
    )
    assert updated.status_code == 200
    for base in [first, others[1], stack.balancer]:
        seen = fetch("GET", f"{base}{path}", headers=JSON)
        assert (seen.json()["nome"], seen.headers["etag"]) == ("Caneca azul", '"2-json"')


def test_an_import_staged_on_one_instance_is_shown_confirmed_and_undone_on_the_others(
    stack: Stack,
) -> None:
    first, second, third = stack.instances
    made = fetch("POST", f"{first}/produtos", json={"nome": "Caneca", "preco": "10"}, headers=JSON)
    caneca = made.json()["id"]
    planilha = f"id;nome;preco\r\n{caneca};;12,00\r\n;Pão;3,00\r\n".encode()
    staged = fetch(
        "POST",
        f"{first}/produtos/importacoes",
        files={"arquivo": ("lote.csv", planilha)},
        headers=JSON,
    )
    assert staged.status_code == 201, staged.text
    path = staged.headers["location"]
    shown = fetch("GET", f"{second}{path}", headers=JSON).json()
    assert shown["resumo"]["novos"] == 1 and shown["resumo"]["alterados"] == 1
    confirmed = fetch("POST", f"{third}{path}/confirmacao", headers=JSON)
    assert confirmed.status_code == 200 and confirmed.json()["estado"] == "aplicada"
    again = fetch("POST", f"{stack.balancer}{path}/confirmacao", headers=JSON)
    assert again.status_code == 200  # applied once, whichever instance is asked again
    assert fetch("GET", f"{first}/produtos/{caneca}", headers=JSON).json()["preco"] == "12.00"
    undone = fetch("POST", f"{second}{path}/reversao", headers=JSON)
    assert undone.status_code == 200 and undone.json()["estado"] == "desfeita"
    assert fetch("GET", f"{third}/produtos/{caneca}", headers=JSON).json()["preco"] == "10.00"


def test_the_balancers_request_id_is_in_its_log_the_instances_log_and_the_answer(
    stack: Stack,
) -> None:
    """HAProxy gives each request a UUID of its own, in place of one a client made up."""
    with http_client(stack.balancer) as client:
        response = client.get("/produtos/999999", headers={**JSON, "x-request-id": "forjado-1"})
    assert response.status_code == 404
    request_id = response.headers["x-request-id"]
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", request_id
    )
    assert response.json()["request_id"] == request_id  # the instance's problem details

    def instance_line() -> list[dict[str, object]]:
        logs = [_log(stack.logs, n) for n in range(len(stack.instances))]
        return [
            line for log in logs for line in access_lines(log) if line["request_id"] == request_id
        ]

    eventually(lambda: len(instance_line()) == 1)
    assert instance_line()[0]["path"] == "/produtos/999999"
    eventually(lambda: request_id in (stack.logs / "haproxy.log").read_text())
    [balancer_line] = [
        line for line in (stack.logs / "haproxy.log").read_text().splitlines() if request_id in line
    ]
    assert balancer_line.endswith(f'"GET /produtos/999999 HTTP/1.1" {request_id}')
    assert " 404 " in balancer_line and "forjado-1" not in balancer_line


def test_thirty_creates_at_once_through_the_balancer_make_exactly_thirty_products(
    stack: Stack,
) -> None:
    with stack.db() as db:
        before = db.execute("SELECT count(*) FROM produtos").fetchone()[0]
    served = {
        name: int(row["stot"]) for (px, name), row in stack.servers().items() if px == "ready"
    }

    def create(n: int, start: Callable[[], None]) -> int:
        with http_client(stack.balancer, timeout=30) as client:
            start()
            return post_form(client, f"lote {n}", "9,90").status_code

    statuses = all_at_once(30, create)
    assert statuses == [303] * 30
    with stack.db() as db:
        rows = db.execute("SELECT nome FROM produtos WHERE nome LIKE 'lote %'").fetchall()
        assert sorted(r[0] for r in rows) == sorted(f"lote {n}" for n in range(30))
        assert db.execute("SELECT count(*) FROM produtos").fetchone()[0] == before + 30
    after = _served(stack)
    assert all(after[n] > served[n] for n in served)  # the balancer spread them


def test_editors_on_different_instances_never_lose_an_update(stack: Stack) -> None:
    """Each editor adds 1 to the price, read-modify-write with If-Match, retrying on 412."""
    created = fetch(
        "POST", f"{stack.instances[0]}/produtos", json={"nome": "Contador", "preco": "1"}
    )
    path = created.headers["location"]
    rounds = 15
    conflicts = [0 for _ in stack.instances]

    def edit(n: int, together: Callable[[], None]) -> None:
        with http_client(stack.instances[n], headers=JSON, timeout=30) as client:
            done = 0
            while done < rounds:
                current = client.get(path)
                if done == conflicts[n] == 0:
                    together()  # the first round starts from one version, so they collide
                preco = int(float(current.json()["preco"])) + 1
                saved = client.put(
                    path,
                    json={"nome": "Contador", "preco": str(preco)},
                    headers={"if-match": current.headers["etag"]},
                )
                assert saved.status_code in (200, 412), saved.text
                done += saved.status_code == 200
                conflicts[n] += saved.status_code == 412

    all_at_once(len(stack.instances), edit)
    final = fetch("GET", f"{stack.balancer}{path}", headers=JSON)
    assert final.json()["preco"] == f"{1 + 3 * rounds}.00"
    assert final.json()["versao"] == 1 + 3 * rounds
    assert sum(conflicts) > 0  # the editors did collide, and were told so


def test_two_editors_on_different_instances_changing_different_fields_keep_both(
    stack: Stack,
) -> None:
    """The history issue's scenario through the pages: Ana changes the price on one
    instance while Beto, who opened the same version on another, changes the name."""
    with http_client(stack.instances[0]) as ana, http_client(stack.instances[1]) as beto:
        assert post_form(ana, "Caneca do cenário", "10").status_code == 303
        (id,) = stack_ids(stack, "Caneca do cenário")
        beto_form = form_on(beto.get(f"/produtos/{id}").text, f"/produtos/{id}", "produto")
        ana_form = form_on(ana.get(f"/produtos/{id}").text, f"/produtos/{id}", "produto")
        assert ana.post(f"/produtos/{id}", data={**ana_form, "produto.preco": "12"}).is_redirect
        saved = beto.post(f"/produtos/{id}", data={**beto_form, "produto.nome": "Caneca azul"})
        assert saved.status_code == 303
        assert "Mantido também o que outra pessoa mudou" in beto.get("/produtos").text
    final = fetch("GET", f"{stack.balancer}/produtos/{id}", headers=JSON).json()
    assert (final["nome"], final["preco"], final["versao"]) == ("Caneca azul", "12.00", 3)


def stack_ids(stack: Stack, nome: str) -> list[int]:
    with stack.db() as db:
        return [row[0] for row in db.execute("SELECT id FROM produtos WHERE nome = ?", (nome,))]


def test_a_feed_reader_beside_8_writers_on_two_instances_sees_every_event_once_in_order(
    stack: Stack,
) -> None:
    """Writers on two instances create, change and remove products while a reader on a third
    follows /produtos/eventos; in the end it has seen exactly the events stored, in id order.
    Without the lock (writers' shared hold, or the reader's exclusive instant), it skips some."""
    with stack.db() as db:
        (start,) = db.execute("SELECT coalesce(max(id), 0) FROM eventos").fetchone()
    writing = threading.Event()
    writing.set()
    seen: list[int] = []

    def read() -> None:
        after = start
        with http_client(stack.instances[2], headers=JSON, timeout=30) as reader:
            while True:
                last_round = not writing.is_set()
                page = reader.get(f"/produtos/eventos?depois={after}&limite=50").json()
                seen.extend(e["id"] for e in page["eventos"])
                after = int(page["links"]["next"].split("depois=")[1].split("&")[0])
                if last_round and not page["eventos"]:
                    return

    def write(n: int, together: Callable[[], None]) -> None:
        with http_client(stack.instances[n % 2], headers=JSON, timeout=30) as writer:
            together()
            for round in range(25):
                created = writer.post("/produtos", json={"nome": f"w{n}-{round}", "preco": "1"})
                path = created.headers["location"]
                writer.put(path, json={"nome": f"w{n}-{round}", "preco": "2"})
                if round % 5 == 0:
                    writer.delete(path)

    with ThreadPoolExecutor(1) as pool:
        reading = pool.submit(read)
        all_at_once(8, write)
        writing.clear()
        reading.result(timeout=120)
    with stack.db() as db:
        stored = [
            row[0]
            for row in db.execute("SELECT id FROM eventos WHERE id > ? ORDER BY id", (start,))
        ]
    assert len(stored) == 8 * (25 * 2 + 5)
    assert seen == stored


def test_stopping_an_instance_loses_no_acknowledged_write_and_traffic_goes_around_it(
    stack: Stack,
) -> None:
    """Writers create without pause, as scripts do: with an Idempotency-Key, sending again when a
    connection breaks. An instance stops (SIGTERM, as systemd stops a unit) in the middle."""
    acknowledged: list[str] = []
    answers: list[int] = []
    broken: list[httpx2.TransportError] = []
    stopping, done = threading.Event(), threading.Event()

    def keep_creating(writer: int) -> None:
        with http_client(stack.balancer, timeout=30) as client:
            n = 0
            while not done.is_set():
                nome = f"escritor {writer} nº {n}"
                for _ in range(5):
                    try:
                        response = client.post(
                            "/produtos",
                            data={"produto.nome": nome, "produto.preco": "9,90"},
                            headers={"idempotency-key": f"{writer}-{n}"},
                        )
                        break
                    except httpx2.TransportError as erro:  # no answer: the write may or may not
                        broken.append(erro)  # have happened, and the key makes resending safe
                else:
                    pytest.fail(f"five broken connections in a row: {broken[-5:]}")
                answers.append(response.status_code)
                if response.status_code == 303:
                    acknowledged.append(nome)
                n += 1
                if n == 20:
                    stopping.set()

    writers = [threading.Thread(target=keep_creating, args=(w,)) for w in range(4)]
    for writer in writers:
        writer.start()
    try:
        stopping.wait(timeout=30)
        stop(stack.processes[1])
        eventually(lambda: stack.servers()[("ready", "catalogo2")]["status"].startswith("DOWN"))
        went_down = len(acknowledged)
        eventually(lambda: len(acknowledged) >= went_down + 40)  # the others take it all
    finally:
        done.set()
        for writer in writers:
            writer.join()

    assert set(answers) == {303}
    with stack.db() as db:
        rows = db.execute("SELECT nome FROM produtos WHERE nome LIKE 'escritor %'").fetchall()
    assert sorted(r[0] for r in rows) == sorted(acknowledged)  # each once: none lost, none twice
    with http_client(stack.balancer) as client:
        statuses = [post_form(client, f"depois {n}", "9,90").status_code for n in range(10)]
    assert statuses == [303] * 10
    stack.restart(1)


def test_with_the_database_down_the_site_answers_503_and_comes_back_by_itself(
    stack: Stack, own_postgresql: OwnPostgreSQL
) -> None:
    with http_client(stack.balancer, timeout=30) as client:
        own_postgresql.stop()
        try:
            eventually(lambda: stack.servers()[("ready", "BACKEND")]["status"] == "DOWN")
            page = client.get("/produtos")
            problem = client.post("/produtos", json={"nome": "X", "preco": "1"}, headers=JSON)
        finally:
            own_postgresql.start()
        assert (page.status_code, page.headers["retry-after"]) == (503, "5")
        assert "Serviço indisponível" in page.text  # the app's own page, not HAProxy's
        assert (problem.status_code, problem.headers["retry-after"]) == (503, "5")
        assert problem.headers["content-type"] == "application/problem+json"

        eventually(lambda: client.get("/produtos").status_code == 200)
        with stack.db() as db:
            create_via_form(client, db, "de volta", "9,90")


def test_a_session_works_through_every_instance_and_a_revoked_token_stops_on_all_at_once(
    stack: Stack,
) -> None:
    maria = add_user(stack.database, "maria", "editor")
    token = add_token(stack.database, maria)
    try:
        with http_client(stack.instances[0]) as first:
            assert sign_in(first).status_code == 303
            session = first.cookies["sessao"]
        for base in [*stack.instances, stack.balancer]:
            with http_client(base, cookies={"sessao": session}) as browser:
                assert post_form(browser).headers["location"] == "/produtos", base
            with http_client(base) as program:
                assert program.get("/produtos", headers=bearer(token)).status_code == 200
        assert catalogo(stack.database, "tokens", "revogar", "1").returncode == 0
        for base in [*stack.instances, stack.balancer]:
            with http_client(base) as program:
                assert program.get("/produtos", headers=bearer(token)).status_code == 401, base
    finally:
        # Back to a catalog with no user, which the other tests of the stack write to as
        # anyone: the rows go, and each instance starts again, forgetting that users exist.
        with stack.db() as db:
            for table in ("tokens", "sessions", "login_attempts", "usuarios"):
                db.execute(f"DELETE FROM {table}")
        for n in range(len(stack.instances)):
            stop(stack.processes[n])
            stack.restart(n)
