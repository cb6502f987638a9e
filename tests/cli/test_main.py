"""The real `catalogo serve` process, driven over a socket: restarts, kill -9, SIGTERM, two
workers, idle clients by the thousand."""

import asyncio
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from catalogo.cli.serve import STOP_TIMEOUT_S
from tests import workbooks
from tests.databases import Database
from tests.helpers import (
    ONLY_POSTGRESQL,
    ONLY_SQLITE,
    SENHA,
    all_at_once,
    create_via_form,
    eventually,
    eventually_in_loop,
    post_form,
    stored_names,
)
from tests.processes import (
    CATALOGO,
    address,
    catalogo,
    catalogo_usage,
    errors_logged,
    fetch,
    free_port,
    http_client,
    measured,
    serving,
    start_serving,
    stop,
)


def test_the_whole_flow_works_over_a_socket(database: str, tmp_path: Path, db: Database) -> None:
    with serving(database, tmp_path) as (base, _), http_client(base) as client:
        id = create_via_form(client, db, "Caneta", "9,90")
        listing = client.get("/produtos")
        assert "Produto «Caneta» adicionado." in listing.text
        assert client.get(f"/produtos/{id}").status_code == 200
        update = {"_method": "PUT", "produto.nome": "Lápis", "produto.preco": "1"}
        assert client.post(f"/produtos/{id}", data=update).status_code == 303
        assert client.post(f"/produtos/{id}", data={"_method": "DELETE"}).status_code == 303
        assert client.post(f"/produtos/{id}").status_code == 405
        head = client.head("/produtos")
        assert head.status_code == 200 and head.content == b""
    assert stored_names(db) == []


def test_acknowledged_writes_survive_a_restart_and_a_kill_9(
    database: str, tmp_path: Path, db: Database
) -> None:
    with serving(database, tmp_path) as (base, _), http_client(base) as client:
        create_via_form(client, db, "antes do reinício", "9,90")
    with serving(database, tmp_path) as (base, process), http_client(base) as client:
        assert "antes do reinício" in client.get("/produtos").text
        for n in range(20):
            create_via_form(client, db, f"p{n}", "9,90")
        stop(process, signal.SIGKILL)
    assert stored_names(db) == ["antes do reinício"] + [f"p{n}" for n in range(20)]
    with serving(database, tmp_path) as (base, _), http_client(base) as client:
        assert "p19" in client.get("/produtos").text


@pytest.mark.parametrize("workers", ["1", "2"])
def test_forty_simultaneous_creates_make_exactly_forty_products(
    database: str, tmp_path: Path, db: Database, workers: str
) -> None:
    with serving(database, tmp_path, "--workers", workers) as (base, _):

        def create(n: int, start: Callable[[], None]) -> int:
            with http_client(base, timeout=30) as client:
                start()
                return post_form(client, f"p{n}", "9,90").status_code

        statuses = all_at_once(40, create)
    assert statuses == [303] * 40
    assert sorted(stored_names(db)) == sorted(f"p{n}" for n in range(40))


STALLED_UPLOADS = 1100  # over the 1,024 connections Granian takes by default


@ONLY_SQLITE
def test_idle_uploads_by_the_thousand_neither_stop_the_service_nor_write_anything(
    database: str, tmp_path: Path, db: Database
) -> None:
    """Each sends the headers and 10 bytes of a 100-byte body, then waits: while they are all
    still open a new client is served, and then each ends in a 408, logged as no error."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * STALLED_UPLOADS)), hard))
    env = {"CATALOGO_BODY_TIMEOUT_MS": "5000"}
    with serving(database, tmp_path, env=env) as (base, _):
        with http_client(base) as client:
            id = create_via_form(client, db)
        _, port = address(base)

        async def attack() -> tuple[list[int], int, list[str]]:
            opened: list[asyncio.StreamWriter] = []

            async def stalled() -> str:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(STALLED)
                await writer.drain()
                opened.append(writer)
                answer = await asyncio.wait_for(reader.read(), 30)
                writer.close()
                return answer.split(b"\r\n", 1)[0].decode()

            uploads = [asyncio.create_task(stalled()) for _ in range(STALLED_UPLOADS)]
            await eventually_in_loop(lambda: len(opened) >= STALLED_UPLOADS)
            fresh = await asyncio.to_thread(  # each on a new connection, as a new client's
                lambda: [
                    fetch("GET", base + path, timeout=20).status_code
                    for path in ("/healthz", f"/produtos/{id}")
                ]
            )
            ended_before = sum(upload.done() for upload in uploads)
            return fresh, ended_before, await asyncio.gather(*uploads)

        fresh, ended_before, ends = asyncio.run(attack())
    assert fresh == [200, 200] and ended_before == 0  # served while every upload still waited
    assert ends == ["HTTP/1.1 408 Request Timeout"] * STALLED_UPLOADS
    assert stored_names(db) == ["Caneta"]
    assert errors_logged(tmp_path / "serve.log") == []


STALLED = (
    b"POST /produtos HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nproduto.no"
)


@ONLY_SQLITE
def test_a_connection_that_never_sends_a_byte_is_closed_after_the_header_timeout(
    database: str, tmp_path: Path
) -> None:
    env = {"CATALOGO_HEADER_TIMEOUT_MS": "300"}
    with (
        serving(database, tmp_path, env=env) as (base, _),
        socket.create_connection(address(base), timeout=10) as silent,
    ):
        assert silent.recv(1) == b""  # closed by the server, long before our own timeout


def test_migrate_creates_the_schema_and_exits(empty_database: str) -> None:
    result = catalogo(empty_database, "migrate")
    assert result.returncode == 0, result.stderr
    db = Database(empty_database)
    assert stored_names(db) == []
    db.close()


@ONLY_SQLITE
def test_serve_migrates_a_new_sqlite_file_itself(empty_database: str, tmp_path: Path) -> None:
    with serving(empty_database, tmp_path) as (base, _):
        assert fetch("GET", f"{base}/readyz").status_code == 200


def test_a_command_on_a_new_sqlite_file_migrates_it_in_a_process_apart(tmp_path: Path) -> None:
    """So that `catalogo serve` forks workers that carry no Alembic (tests/http/test_app.py)."""
    seed_and_tell = (
        "import sys; from catalogo.cli.main import main; main(['seed', '2']); "
        "print(sorted(name.split('.')[0] for name in sys.modules))"
    )
    env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{tmp_path}/novo.db"}
    result = subprocess.run(
        [sys.executable, "-c", seed_and_tell], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("catalogo: 2 produtos adicionados\n")
    assert "'catalogo'" in result.stdout and "'alembic'" not in result.stdout


@ONLY_POSTGRESQL
@pytest.mark.parametrize("command", [["serve"], ["seed", "3"]])
def test_postgresql_is_never_migrated_unasked(empty_database: str, command: list[str]) -> None:
    result = catalogo(empty_database, *command)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "catalogo: o esquema do banco está vazio, esta versão do catalogo precisa da 0018: "
        "rode `catalogo migrate` antes"
    )
    db = Database(empty_database)
    assert db.tables() == []
    db.close()


@ONLY_POSTGRESQL
def test_serve_refuses_a_postgresql_schema_left_at_an_older_revision(
    database: str, db: Database
) -> None:
    db.execute("UPDATE alembic_version SET version_num = '0001'")
    result = catalogo(database, "serve")
    assert result.returncode == 1
    assert "na revisão 0001, esta versão do catalogo precisa da 0018" in result.stderr


@pytest.mark.parametrize("command", [["serve"], ["migrate"], ["seed", "1"]])
def test_an_unreachable_database_stops_the_command_with_a_message(command: list[str]) -> None:
    port = free_port()  # nothing listens there
    result = catalogo(f"postgresql://postgres@127.0.0.1:{port}/catalogo", *command)
    assert result.returncode == 1
    assert result.stderr.startswith("catalogo: o banco de dados não responde (")
    assert "Traceback" not in result.stderr


def test_a_bad_setting_stops_the_command_with_a_message_naming_it() -> None:
    env = measured({**os.environ, "CATALOGO_PAGE_SIZE": "lots"})
    result = subprocess.run(
        [CATALOGO, "migrate"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr.strip() == "catalogo: CATALOGO_PAGE_SIZE deve ser um número inteiro"


def test_seed_adds_that_many_valid_products(database: str, db: Database) -> None:
    result = catalogo(database, "seed", "25")
    assert result.stdout.strip() == "catalogo: 25 produtos adicionados"
    rows = db.execute(f"SELECT nome, {db.centavos} FROM produtos").fetchall()
    assert len(rows) == 25
    assert all(nome and 0 < centavos <= 99_999_999_999 for nome, centavos in rows)


def test_emptying_the_trash_deletes_only_removals_older_than_the_days_kept(
    database: str, db: Database
) -> None:
    catalogo(database, "seed", "4")
    day = 24 * 3600
    for id, removed_days_ago in ((1, 31), (2, 29), (3, 2)):
        at = time.time() - removed_days_ago * day
        db.execute("UPDATE produtos SET removido_em = ? WHERE id = ?", (at, id))
    default = catalogo(database, "removidos", "limpar")
    assert default.returncode == 0
    assert default.stdout.startswith(
        "catalogo: 1 produto removido apagado de vez (removidos antes de"
    )
    assert re.search(
        r"\d{4}-\d\d-\d\d \d\d:\d\d -0300\); o histórico fica$", default.stdout.rstrip()
    )
    assert catalogo(database, "removidos", "limpar", env={"CATALOGO_REMOVIDOS_DIAS": "10"}).stdout
    remaining = [row[0] for row in db.execute("SELECT id FROM produtos ORDER BY id")]
    assert remaining == [3, 4]
    assert catalogo(database, "removidos", "limpar", "--dias", "0").stdout.startswith(
        "catalogo: 1 produto removido apagado"
    )
    assert [row[0] for row in db.execute("SELECT id FROM produtos")] == [4]
    assert db.execute("SELECT count(*) FROM eventos WHERE produto_id = 1").fetchone()[0] == 1


def test_the_former_names_of_the_trash_command_and_its_setting_still_work(
    database: str, db: Database
) -> None:
    catalogo(database, "seed", "3")
    day = 24 * 3600
    for id, removed_days_ago in ((1, 20), (2, 5)):
        at = time.time() - removed_days_ago * day
        db.execute("UPDATE produtos SET removido_em = ? WHERE id = ?", (at, id))
    kept = catalogo(database, "lixeira", "limpar", env={"CATALOGO_LIXEIRA_DIAS": "10"})
    assert kept.stdout.startswith("catalogo: 1 produto removido apagado de vez")
    assert [row[0] for row in db.execute("SELECT id FROM produtos ORDER BY id")] == [2, 3]
    both = {"CATALOGO_REMOVIDOS_DIAS": "1", "CATALOGO_LIXEIRA_DIAS": "10"}
    refused = catalogo(database, "removidos", "limpar", env=both)
    assert refused.returncode == 1 and "têm valores diferentes" in refused.stderr
    assert [row[0] for row in db.execute("SELECT id FROM produtos ORDER BY id")] == [2, 3]


@pytest.mark.parametrize("dias", ["-1", "abc", "1.5", "36501", ""])
def test_emptying_the_trash_refuses_days_it_cannot_read_and_deletes_nothing(
    database: str, db: Database, dias: str
) -> None:
    catalogo(database, "seed", "1")
    db.execute("UPDATE produtos SET removido_em = 1 WHERE id = 1")
    refused = catalogo(database, "removidos", "limpar", "--dias", dias)
    assert refused.returncode == 2 and "--dias" in refused.stderr
    assert db.execute("SELECT count(*) FROM produtos").fetchone()[0] == 1


def _response(connection: socket.socket) -> tuple[int, bytes]:
    """One HTTP/1.1 response read off a raw connection: its status and body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536) or pytest.fail(f"connection closed: {data!r}")
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"(?i)content-length: *(\d+)", head)[1])  # type: ignore[index]
    while len(body) < length:
        body += connection.recv(65536) or pytest.fail("connection closed in the body")
    return int(head.split()[1]), body


def _unread(server_port: int, client: socket.socket) -> int:
    """Bytes the client sent that the server has not read yet (the server side's receive
    queue, from /proc/net/tcp)."""
    client_port = client.getsockname()[1]
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        local, remote = fields[1].split(":")[1], fields[2].split(":")[1]
        if (int(local, 16), int(remote, 16)) == (server_port, client_port):
            return int(fields[4].split(":")[1], 16)
    raise AssertionError("no such connection")


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@ONLY_SQLITE
@pytest.mark.parametrize("group", [True, False], ids=["to its process group", "to serve alone"])
def test_sigterm_finishes_the_request_under_way_refuses_new_ones_and_exits_0(
    database: str, db: Database, tmp_path: Path, group: bool
) -> None:
    """As systemd stops a unit (SIGTERM to every process of it), or as `kill` does (to serve's
    own process, which passes it on to its workers): a request whose body is still on its way
    when the signal comes is answered, and nothing else is let in."""
    log = tmp_path / "serve.log"
    base, process = start_serving(database, log, "--workers", "2")
    try:
        # Both workers up, so that the port refuses at once: a worker still starting keeps the
        # socket open (new connections wait on it) until it is ready, and then stops at once
        # (tests/runtime/test_serving.py stops serve while it starts).
        eventually(lambda: log.read_text().count("Started worker-") == 2)
        _, port = address(base)
        body = b'{"nome": "Caneca", "preco": "29.90"}'
        with socket.create_connection(address(base), timeout=10) as connection:
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert _response(connection)[0] == 200  # a worker has taken this connection
            connection.sendall(
                b"POST /produtos HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (len(body), body[:10])
            )
            eventually(lambda: _unread(port, connection) == 0)  # the worker has begun it
            if group:
                os.killpg(process.pid, signal.SIGTERM)
            else:
                process.send_signal(signal.SIGTERM)
            eventually(lambda: _refused(port))  # while the request is still under way
            assert process.poll() is None
            connection.sendall(body[10:])
            status, answer = _response(connection)
        assert (status, json.loads(answer)["nome"]) == (201, "Caneca")
        # 0: no worker was killed at STOP_TIMEOUT_S (the wait is longer, for a busy machine)
        assert process.wait(timeout=STOP_TIMEOUT_S + 30) == 0
    finally:
        stop(process, signal.SIGKILL)  # only if the test failed before it exited
    assert stored_names(db) == ["Caneca"]
    assert "Granian shutdown completed" in log.read_text()


EVERY_ADDRESS = "0.0.0.0"  # noqa: S104 - what protected mode is about


def test_serve_refuses_a_public_address_while_anyone_may_change_the_catalog(
    database: str, tmp_path: Path
) -> None:
    refused = catalogo(database, "serve", "--host", EVERY_ADDRESS)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "catalogo: não vou servir em 0.0.0.0: quem o alcançasse poderia mudar o catálogo. "
        "Crie antes um usuário (catalogo usuarios criar NOME --papel admin), ou defina "
        "CATALOGO_AUTH=off para servi-lo aberto de propósito."
    )
    with serving(database, tmp_path, "--host", EVERY_ADDRESS, env={"CATALOGO_AUTH": "off"}):
        pass
    assert (
        catalogo(
            database,
            "usuarios",
            "criar",
            "maria",
            "--papel",
            "admin",
            "--senha-stdin",
            input=f"{SENHA}\n",
        ).returncode
        == 0
    )
    with (
        serving(database, tmp_path, "--host", EVERY_ADDRESS) as (base, _),
        http_client(base) as client,
    ):
        answer = post_form(client)
        assert answer.status_code == 401 and 'name="pendente"' in answer.text


def test_users_are_created_listed_and_refused_with_a_reason(database: str) -> None:
    def criar(nome: str, senha: str, *more: str) -> subprocess.CompletedProcess[str]:
        return catalogo(
            database, "usuarios", "criar", nome, "--papel", "editor", *more, input=f"{senha}\n"
        )

    assert (
        criar("Maria", SENHA, "--senha-stdin").stdout == "catalogo: usuário maria criado (editor)\n"
    )
    for nome, senha, more, said in [
        ("maria", SENHA, ["--senha-stdin"], "catalogo: já existe o usuário «maria»"),
        (
            "joana",
            "curta",
            ["--senha-stdin"],
            "catalogo: A senha deve ter pelo menos 12 caracteres.",
        ),
        ("jo ana", SENHA, ["--senha-stdin"], "catalogo: O nome do usuário tem de 1 a 64"),
        ("joana", SENHA, [], "catalogo: não há terminal onde pedir a senha: use --senha-stdin"),
    ]:
        result = criar(nome, senha, *more)
        assert result.returncode == 1 and result.stderr.startswith(said), result.stderr
    listed = catalogo(database, "usuarios", "listar").stdout.splitlines()
    assert len(listed) == 2 and listed[1].split()[:3] == ["maria", "editor", "sim"]


def test_a_token_printed_once_works_until_revoked_and_then_stops_at_once(
    database: str, tmp_path: Path
) -> None:
    catalogo(
        database, "usuarios", "criar", "maria", "--papel", "editor", "--senha-stdin", input=SENHA
    )
    too_much = catalogo(
        database, "tokens", "criar", "--usuario", "maria", "--nome", "ERP", "--papel", "admin"
    )
    assert too_much.returncode == 1
    assert too_much.stderr == "catalogo: maria é editor: um token seu pode ser no máximo isso.\n"
    made = catalogo(
        database, "tokens", "criar", "--usuario", "maria", "--nome", "ERP da loja", "--expira", "30"
    )
    token = made.stdout.strip()
    assert re.fullmatch(r"cat_[A-Za-z0-9_-]{43}", token)
    assert made.stderr.startswith("catalogo: token 1 de maria (editor), expira ")
    listed = catalogo(database, "tokens", "listar").stdout
    assert "ERP da loja" in listed and token not in listed and token[4:20] not in listed
    with serving(database, tmp_path) as (base, _), http_client(base) as client:
        headers = {"authorization": f"Bearer {token}", "accept": "application/json"}
        created = client.post("/produtos", json={"nome": "Caneca", "preco": "10"}, headers=headers)
        assert created.status_code == 201
        assert catalogo(database, "tokens", "revogar", "1").returncode == 0
        refused = client.post("/produtos", json={"nome": "Caneca", "preco": "10"}, headers=headers)
        assert refused.status_code == 401
    assert "revogado" in catalogo(database, "tokens", "listar").stdout


def test_deactivating_a_user_or_setting_their_password_ends_their_sessions(
    database: str, db: Database
) -> None:
    catalogo(
        database, "usuarios", "criar", "maria", "--papel", "editor", "--senha-stdin", input=SENHA
    )
    db.execute(
        "INSERT INTO sessions (usuario_id, secret_hash, created_at, expires_at, address, "
        "user_agent) VALUES (1, 'h', 0, 9e12, '', '')"
    )
    assert (
        catalogo(
            database, "usuarios", "senha", "maria", "--senha-stdin", input="outra senha bem longa"
        ).returncode
        == 0
    )
    assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
    assert catalogo(database, "usuarios", "desativar", "maria").returncode == 0
    assert "maria                    editor  não" in catalogo(database, "usuarios", "listar").stdout
    assert catalogo(database, "usuarios", "desativar", "ana").stderr == (
        "catalogo: não há usuário «ana»\n"
    )


def test_exportar_writes_the_lists_file_as_the_site_sends_it(
    database: str, db: Database, tmp_path: Path
) -> None:
    catalogo(database, "seed", "12")
    to_stdout = catalogo(database, "exportar", "--q", "caneca", "--ordem", "preco")
    assert to_stdout.returncode == 0, to_stdout.stderr
    lines = to_stdout.stdout.lstrip("\ufeff").splitlines()
    assert lines[0] == "id;codigo;nome;descricao;preco;versao;atualizado_em"
    names = [line.split(";")[2] for line in lines[1:] if line[:1].isdigit()]
    assert names and all(name.startswith("Caneca") for name in names)
    saida = tmp_path / "programas.csv"
    done = catalogo(database, "exportar", "--formato", "rfc4180", "--saida", str(saida))
    assert done.returncode == 0 and done.stdout == ""
    assert saida.read_bytes().startswith(b"id,codigo,nome,")
    assert (
        saida.read_bytes().count(b"\r\n") == 13
    )  # a header and 12 rows: descriptions break with LF
    planilha = tmp_path / "planilha.xlsx"
    assert (
        catalogo(database, "exportar", "--formato", "xlsx", "--saida", str(planilha)).returncode
        == 0
    )
    assert planilha.read_bytes().startswith(b"PK")


def test_exportar_refuses_what_the_list_refuses(database: str) -> None:
    refused = catalogo(database, "exportar", "--ordem", "cor")
    assert refused.returncode == 1 and "catalogo: ordem deve ser" in refused.stderr
    many = catalogo(database, "exportar", *[f"--codigo=C{n}" for n in range(101)])
    assert many.returncode == 1 and "no máximo 100 códigos" in many.stderr


def test_importar_says_what_a_file_would_change_writes_nothing_and_fails_on_an_error(
    database: str, db: Database, tmp_path: Path
) -> None:
    catalogo(database, "seed", "3")
    exported = tmp_path / "lista.csv"
    catalogo(database, "exportar", "--saida", str(exported))
    same = catalogo(database, "importar", str(exported))
    assert same.returncode == 0, same.stderr
    assert same.stdout.splitlines()[0] == (
        "catalogo: 0 novos, 0 alterados, 3 inalterados, 0 erros (nada foi gravado)"
    )
    windows = tmp_path / "windows.csv"
    windows.write_bytes("nome;preco;cor\r\nPão;1,50;azul\r\nCopo;1.234;\r\n".encode("cp1252"))
    refused = catalogo(database, "importar", str(windows))
    assert refused.returncode == 1 and "salve como «CSV UTF-8»" in refused.stderr
    report = catalogo(database, "importar", str(windows), "--codificacao", "windows-1252")
    assert report.returncode == 1
    assert report.stdout.splitlines() == [
        "catalogo: 1 novo, 0 alterados, 0 inalterados, 1 erro (nada foi gravado)",
        "  linha 2: novo, «Pão»",
        "  linha 3, preço: «1.234» é ambíguo: se são milhares, escreva 1234,00; os centavos "
        "vão depois da vírgula, com no máximo duas casas.",
        "  colunas ignoradas: cor",
    ]
    assert db.execute("SELECT count(*) FROM produtos").fetchone() == (3,)


def test_importar_confirmar_writes_all_of_a_clean_file_as_one_batch(
    database: str, db: Database, tmp_path: Path
) -> None:
    planilha = tmp_path / "nova.csv"
    planilha.write_text("codigo;nome;preco\r\nCAN-1;Caneca;10,00\r\nCOP-1;Copo;5,00\r\n")
    done = catalogo(database, "importar", str(planilha), "--confirmar")
    assert done.returncode == 0, done.stderr
    assert "2 novos" in done.stdout and "gravada" in done.stdout
    assert db.execute(
        "SELECT count(*), count(DISTINCT lote) FROM eventos WHERE origem = 'importacao'"
    ).fetchone() == (2, 1)
    planilha.write_text("codigo;nome;preco\r\ncan-1;Caneca grande;;\r\nPRA-1;Prato;1.234\r\n")
    refused = catalogo(database, "importar", str(planilha), "--confirmar")
    assert refused.returncode == 1 and "nada foi gravado" in refused.stdout
    assert db.execute("SELECT nome FROM produtos ORDER BY id").fetchall() == [
        ("Caneca",),
        ("Copo",),
    ]


@ONLY_SQLITE
def test_importar_refuses_each_bomb_with_what_it_is_in_bounded_cpu_and_memory(
    database: str, tmp_path: Path
) -> None:
    """The files tests/domain/test_xlsx.py reads, through the command: its peak memory against what
    a small file's import takes, and its CPU seconds (the kernel's count for the process, not
    the wall clock), with ten times what each takes here to spare."""
    small = tmp_path / "pequena.csv"
    small.write_text("nome;preco\r\nCaneca;1,00\r\n")
    done, baseline = catalogo_usage(database, "importar", str(small))
    assert done.returncode == 0, done.stderr
    for name, (_, _, says) in workbooks.BOMBS.items():
        bomb = tmp_path / "bomba.xlsx"
        bomb.write_bytes(workbooks.bomb(name))
        refused, used = catalogo_usage(database, "importar", str(bomb))
        assert refused.returncode == 1, (name, refused.stdout)
        assert says in refused.stderr, name
        assert used.cpu_s < baseline.cpu_s + 10, (name, used)
        assert used.peak_mib < baseline.peak_mib + 64, (name, used, baseline)


def test_desfazer_undoes_an_import_once_and_says_why_it_will_not_again(
    database: str, db: Database, tmp_path: Path
) -> None:
    catalogo(database, "seed", "1")
    planilha = tmp_path / "lote.csv"
    planilha.write_text("id;nome;preco\r\n1;Trocado;1,00\r\n;Novo;2,00\r\n")
    done = catalogo(database, "importar", str(planilha), "--confirmar")
    lote = re.search(r"importação (\w+) gravada", done.stdout)
    assert lote is not None, done.stdout
    undone = catalogo(database, "desfazer", lote.group(1))
    assert undone.returncode == 0, undone.stderr
    assert "2 produtos voltaram" in undone.stdout
    live = "SELECT nome FROM produtos WHERE removido_em IS NULL"
    assert db.execute(live).fetchall() == [("Caderno verde nº 1",)]  # as seeded; Novo removed
    again = catalogo(database, "desfazer", lote.group(1))
    assert again.returncode == 1 and "nada foi desfeito" in again.stderr
    unknown = catalogo(database, "desfazer", "nenhum")
    assert unknown.returncode == 1 and "não há importação nenhum" in unknown.stderr
