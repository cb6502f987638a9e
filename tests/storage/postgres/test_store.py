"""The PostgreSQL store: a server that stops, or a database removed, means a 503 at once, never
a hang or a 500, and the service comes back with the server, without a restart. A session the
server ends under load costs a read nothing and a write at most a 503, and loses or doubles no
write."""

import asyncio
import itertools
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from catalogo.domain.errors import StorageUnavailable
from catalogo.runtime.settings import Settings
from catalogo.storage import Storage, migrations, open_storage
from tests.databases import Database
from tests.helpers import JSON, ONLY_POSTGRESQL
from tests.processes import (
    OwnPostgreSQL,
    fetch,
    free_port,
    http_client,
    serving,
    start_serving,
    stop,
)
from tests.storage.test_storage import run

pytestmark = pytest.mark.postgresql

FORM_BODY = {"produto.nome": "Caneca", "produto.preco": "29,90"}


@pytest.fixture
def own_database(own_postgresql: OwnPostgreSQL) -> Iterator[str]:
    """A migrated database on the server that tests may stop."""
    server = own_postgresql.server()
    url = server.create()
    migrations.upgrade(Settings(database_url=url))
    yield url
    server.drop(url)


def test_with_the_server_stopped_every_request_is_a_503_and_it_comes_back_by_itself(
    own_postgresql: OwnPostgreSQL, own_database: str, tmp_path: Path
) -> None:
    with (
        serving(own_database, tmp_path) as (base, _),
        http_client(base, timeout=20) as client,  # a hang fails the test
    ):
        assert client.post("/produtos", data=FORM_BODY).status_code == 303
        own_postgresql.stop()
        try:
            answers = [
                client.get("/produtos"),
                client.get("/produtos/1", headers=JSON),
                client.post("/produtos", data=FORM_BODY),
                client.put("/produtos/1", json={"nome": "X", "preco": "1"}, headers=JSON),
                client.post("/produtos/1", data={"_method": "DELETE"}),
                client.get("/readyz"),
            ]
            health = client.get("/healthz")
        finally:
            own_postgresql.start()
        for answer in answers:
            assert (answer.status_code, answer.headers.get("retry-after")) == (503, "5")
        assert "Serviço indisponível" in answers[0].text
        assert answers[1].headers["content-type"] == "application/problem+json"
        assert health.status_code == 200

        assert client.get("/readyz").status_code == 200
        assert client.post("/produtos", data=FORM_BODY).status_code == 303
        assert client.get("/produtos/2").status_code == 200
    db = Database(own_database)
    assert db.execute("SELECT nome FROM produtos ORDER BY id").fetchall() == [("Caneca",)] * 2
    db.close()


def test_a_database_removed_under_the_service_is_a_503_not_an_error(
    own_postgresql: OwnPostgreSQL, own_database: str, tmp_path: Path
) -> None:
    with (
        serving(own_database, tmp_path) as (base, _),
        http_client(base, timeout=20) as client,
    ):
        assert client.get("/produtos").status_code == 200
        own_postgresql.server().drop(own_database)  # its sessions are ended, then it is gone
        answers = [
            client.get("/produtos"),
            client.get("/readyz"),
            client.post("/produtos", data=FORM_BODY),
        ]
    assert [(a.status_code, a.headers.get("retry-after")) for a in answers] == [(503, "5")] * 3


def test_a_server_that_is_not_there_is_unavailable_not_an_error() -> None:
    async def test(storage: Storage) -> None:
        with pytest.raises(StorageUnavailable, match=r"ConnectionRefused|Connect call failed"):
            await storage.get(1)

    run(f"postgresql://postgres@127.0.0.1:{free_port()}/catalogo", test)


# Under load: a few clients at once, as a storefront and a script would be, each request's
# product named after it, so that a lost or a doubled write shows by name.
KINDS = ("read", "create", "list", "keyed")
PARKED = "Parada"  # the one creation a test holds inside its transaction


@dataclass(frozen=True)
class Answer:
    kind: str
    nome: str
    status: int
    retry_after: str | None


class Load:
    """Requests from `clients` threads, each with a connection of its own, for as long as the
    `with` block runs."""

    def __init__(self, base: str, clients: int = 6) -> None:
        self.base = base
        self.answers: list[Answer] = []  # list.append is atomic: the threads share it
        self._stopping = threading.Event()
        self._threads = ThreadPoolExecutor(clients)
        self._clients = [self._threads.submit(self._client, i) for i in range(clients)]

    def _client(self, i: int) -> None:
        with http_client(self.base, timeout=30) as client:  # a hang fails the test
            for n in itertools.count():
                if self._stopping.is_set():
                    return
                kind, nome = KINDS[(i + n) % len(KINDS)], f"c{i}-{n}"
                self.answers.append(Answer(kind, nome, *_send(client, kind, nome)))

    def wait_for(self, count: int, condition: Callable[[Answer], bool] = lambda _: True) -> None:
        """Returns once `count` more answers than now meet `condition`."""
        start = len(self.answers)
        deadline = time.monotonic() + 60
        while sum(map(condition, self.answers[start:])) < count:
            assert time.monotonic() < deadline, f"no {count} answers in 60 s: {self.tally()}"
            time.sleep(0.005)

    def __enter__(self) -> "Load":
        return self

    def __exit__(self, *failure: object) -> None:
        self._stopping.set()
        self._threads.shutdown()
        if failure[0] is None:
            for client in self._clients:
                client.result()  # a client's own error fails the test here

    def tally(self) -> Counter[tuple[str, int]]:
        return Counter((a.kind, a.status) for a in self.answers)


def _send(client: httpx2.Client, kind: str, nome: str) -> tuple[int, str | None]:
    if kind == "read":
        response = client.get("/produtos/1", headers=JSON)
    elif kind == "list":
        response = client.get("/produtos")
    else:
        key = {"idempotency-key": nome} if kind == "keyed" else {}
        response = client.post("/produtos", json={"nome": nome, "preco": "1"}, headers=JSON | key)
    return response.status_code, response.headers.get("retry-after")


def no_write_lost_or_doubled(answers: list[Answer], db: Database, base: str) -> None:
    """Every acknowledged creation is stored once, no creation is stored twice, and a keyed
    creation answered 503, retried with its key, is created (or found) then, never a 409."""
    unavailable = [a for a in answers if a.status == 503]
    assert {a.retry_after for a in unavailable} <= {"5"}
    with http_client(base, timeout=30) as client:
        retries = [a for a in answers if a.kind == "keyed" and a.status == 503]
        again = Counter(_send(client, "keyed", a.nome)[0] for a in retries)
    assert set(again) <= {201}, again
    stored = Counter(row[0] for row in db.execute("SELECT nome FROM produtos"))
    acknowledged = [a.nome for a in answers if a.status == 201] + [a.nome for a in retries]
    assert [n for n in acknowledged if stored[n] != 1] == []
    assert [n for n, count in stored.items() if count > 1] == []


def park_creations_of(db: Database, nome: str) -> None:
    """From now on, inserting a product named `nome` waits inside its transaction, in the
    database, until the test lets it go (`let_go`)."""
    db.execute("CREATE TABLE solto (x int)")
    db.execute(
        "CREATE FUNCTION espera() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF NEW.nome = '{nome}' THEN "
        "WHILE NOT EXISTS (SELECT 1 FROM solto) LOOP PERFORM pg_sleep(0.005); END LOOP; "
        "END IF; RETURN NEW; END $$"
    )
    db.execute(
        "CREATE TRIGGER espera BEFORE INSERT ON produtos FOR EACH ROW EXECUTE FUNCTION espera()"
    )


def wait_until_parked(db: Database) -> None:
    deadline = time.monotonic() + 30
    while not db.execute(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
        "AND query LIKE 'INSERT INTO produtos%' AND wait_event = 'PgSleep'"
    ).fetchone():
        assert time.monotonic() < deadline, "the creation never reached the database"
        time.sleep(0.005)


def let_go(db: Database) -> None:
    db.execute("INSERT INTO solto VALUES (1)")


def create_parked(base: str) -> "Future[tuple[int, str | None]]":
    """A keyed creation of PARKED, sent from a thread of its own; its answer, later."""

    def send() -> tuple[int, str | None]:
        with http_client(base, timeout=30) as client:
            return _send(client, "keyed", PARKED)

    threads = ThreadPoolExecutor(1)
    parked = threads.submit(send)
    threads.shutdown(wait=False)
    return parked


def end_sessions(db: Database) -> int:
    """Ends every session catalogo holds on the test's database, as an administrator, a
    failover or an idle timeout would, while the server stays up."""
    row = db.execute(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND application_name = 'catalogo'"
    ).fetchone()
    return int(row[0])


def wait_until_gone(db: Database) -> None:
    """Returns once the server has let go of every session of catalogo's: their processes have
    ended, and their transactions with them."""
    deadline = time.monotonic() + 30
    while db.execute(
        "SELECT 1 FROM pg_stat_activity "
        "WHERE datname = current_database() AND application_name = 'catalogo'"
    ).fetchone():
        assert time.monotonic() < deadline, "catalogo's sessions never ended"
        time.sleep(0.005)


@ONLY_POSTGRESQL
def test_a_claim_whose_session_has_ended_is_taken_over_at_once(database: str, db: Database) -> None:
    async def test(storage: Storage) -> None:
        assert (await storage.claim_key("k", "f")).state == "claimed"
        assert (await storage.claim_key("k", "f")).state == "in_progress"  # its session lives
        assert end_sessions(db) >= 1
        wait_until_gone(db)
        assert (await storage.claim_key("k", "f")).state == "claimed"

    run(database, test)


@ONLY_POSTGRESQL
def test_sessions_ended_under_load_cost_a_read_nothing_and_a_write_at_most_a_503(
    database: str, db: Database, tmp_path: Path
) -> None:
    park_creations_of(db, PARKED)
    with serving(database, tmp_path) as (base, _):
        assert fetch("POST", f"{base}/produtos", data=FORM_BODY).status_code == 303
        with Load(base) as load:
            parked = create_parked(base)
            wait_until_parked(db)
            ended = end_sessions(db)  # the parked creation's among them, mid-transaction
            let_go(db)
            for _ in range(30):
                load.wait_for(10)
                ended += end_sessions(db)
        tally = load.tally()
        assert ended >= 30 and len(load.answers) >= 300, (ended, tally)
        assert set(tally) <= {
            ("read", 200),
            ("list", 200),
            ("create", 201),
            ("create", 503),
            ("keyed", 201),
            ("keyed", 503),
        }, tally
        # It had not committed when its session ended, so it ran again on another.
        assert parked.result(timeout=30) == (201, None)
        no_write_lost_or_doubled([*load.answers, Answer("keyed", PARKED, 201, None)], db, base)


def test_a_server_stopped_under_load_answers_503_loses_nothing_and_holds_no_key(
    own_postgresql: OwnPostgreSQL, own_database: str, tmp_path: Path
) -> None:
    before = Database(own_database)
    park_creations_of(before, PARKED)
    with serving(own_database, tmp_path) as (base, _):
        assert fetch("POST", f"{base}/produtos", data=FORM_BODY).status_code == 303
        with Load(base) as load:
            load.wait_for(50)
            parked = create_parked(base)
            wait_until_parked(before)
            before.close()
            own_postgresql.stop()  # every session is ended, the parked one mid-transaction
            try:
                load.wait_for(20)  # answered while the server is down
            finally:
                own_postgresql.start()
            db = Database(own_database)
            let_go(db)
            load.wait_for(50, lambda answer: answer.status < 500)
        tally = load.tally()
        assert set(tally) <= {
            ("read", 200),
            ("read", 503),
            ("list", 200),
            ("list", 503),
            ("create", 201),
            ("create", 503),
            ("keyed", 201),
            ("keyed", 503),
        }, tally
        # Its claim is still there (the server was gone when the request gave up), but the
        # session that made it has ended: the retry takes it over.
        assert parked.result(timeout=30) == (503, "5")
        no_write_lost_or_doubled([*load.answers, Answer("keyed", PARKED, 503, "5")], db, base)
    db.close()


@ONLY_POSTGRESQL
def test_a_key_held_by_a_process_that_died_is_free_once_the_database_saw_it_go(
    database: str, db: Database, tmp_path: Path
) -> None:
    park_creations_of(db, PARKED)
    base, process = start_serving(database, tmp_path / "serve.log")
    parked = create_parked(base)
    wait_until_parked(db)
    stop(process, signal.SIGKILL)
    with pytest.raises(httpx2.TransportError):
        parked.result(timeout=30)
    let_go(db)  # its statement ends, and with nobody to read the answer, its session
    wait_until_gone(db)
    with serving(database, tmp_path) as (base, _), http_client(base, timeout=30) as client:
        assert _send(client, "keyed", PARKED) == (201, None)
    assert db.execute("SELECT count(*) FROM produtos WHERE nome = ?", (PARKED,)).fetchone() == (1,)


@ONLY_POSTGRESQL
def test_a_worker_starts_though_its_first_statement_runs_past_the_lists_time_budget(
    database: str, db: Database
) -> None:
    """CATALOGO_QUERY_TIMEOUT_MS bounds lists, not the start-up's schema check: a new session's
    first statement is its slowest, and here it waits on a lock for five budgets."""
    budget_ms = 10
    locker = Database(database)
    locker.execute("BEGIN")
    locker.execute("LOCK TABLE alembic_version IN ACCESS EXCLUSIVE MODE")

    async def test() -> None:
        settings = Settings(
            database_url=database, query_timeout_ms=budget_ms, lock_timeout_ms=60_000
        )
        storage = await open_storage(settings)
        try:
            checked = asyncio.create_task(migrations.require_current(storage))
            while (
                not checked.done()
                and not db.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
                    "AND application_name = 'catalogo' AND wait_event_type = 'Lock' "
                    "AND clock_timestamp() - query_start > ? * interval '1 ms'",
                    (5 * budget_ms,),
                ).fetchone()
            ):
                await asyncio.sleep(0.005)
            locker.execute("ROLLBACK")
            await checked
        finally:
            await storage.close()

    try:
        asyncio.run(test())
    finally:
        locker.close()
