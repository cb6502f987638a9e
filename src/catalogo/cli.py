"""`catalogo serve`, `migrate`, `seed`, `usuarios`, `tokens` and `lixeira`: the only entry
point, the same locally and in CI.

SQLite migrates itself before any command, so that one command starts a new catalog.
PostgreSQL is migrated only by `catalogo migrate`, run once per deployment; the other commands
refuse a schema that is not current, since several instances must never race to change it.

Protected mode: while anyone may change the catalog (CATALOGO_AUTH unset and no user yet),
`serve` listens only on a loopback address; anything else is refused with the two ways out.
"""

import argparse
import asyncio
import contextlib
import getpass
import ipaddress
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import TypeVar

from catalogo import accounts, historia, migrations, produtos
from catalogo.accounts import ContaInvalida, Passwords
from catalogo.settings import TRASH_DAYS_MAX, Settings, SettingsError
from catalogo.storage import Storage, StorageUnavailable, UnknownUser, UserExists, open_storage

T = TypeVar("T")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="catalogo",
        description="Product catalog service. The store is chosen by CATALOGO_DATABASE_URL "
        "(default sqlite:///./catalogo.db).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="serve HTTP (Granian); SQLite is migrated first, PostgreSQL must be current"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument("--workers", type=int, default=1, help="worker processes")
    commands.add_parser("migrate", help="bring the database schema up to date, then exit")
    seed = commands.add_parser("seed", help="add N sample products (demos, benchmarks)")
    seed.add_argument("count", type=int, help="how many products to add")

    usuarios = commands.add_parser("usuarios", help="staff accounts").add_subparsers(
        dest="action", required=True
    )
    criar = usuarios.add_parser("criar", help="create a user (the first one turns sign-in on)")
    criar.add_argument("nome")
    criar.add_argument("--papel", required=True, choices=accounts.PAPEIS)
    criar.add_argument("--senha-stdin", action="store_true", help="read the password from stdin")
    usuarios.add_parser("listar", help="list users")
    desativar = usuarios.add_parser("desativar", help="deactivate a user: ends their sessions")
    desativar.add_argument("nome")
    senha = usuarios.add_parser("senha", help="set a user's password: ends their sessions")
    senha.add_argument("nome")
    senha.add_argument("--senha-stdin", action="store_true", help="read the password from stdin")

    tokens = commands.add_parser("tokens", help="API tokens").add_subparsers(
        dest="action", required=True
    )
    criar_token = tokens.add_parser("criar", help="create a token; it is printed once")
    criar_token.add_argument("--usuario", required=True, help="the user it acts as")
    criar_token.add_argument("--nome", required=True, help="a label: who or what uses it")
    criar_token.add_argument(
        "--papel", choices=accounts.TOKEN_PAPEIS, help="at most the user's (default: theirs)"
    )
    criar_token.add_argument("--expira", metavar="DIAS", help="days until it expires (1-3650)")
    tokens.add_parser("listar", help="list tokens (never their secrets)")
    revogar = tokens.add_parser("revogar", help="revoke a token: it stops working at once")
    revogar.add_argument("id", type=int)
    lixeira = commands.add_parser("lixeira", help="the trash: removed products").add_subparsers(
        dest="action", required=True
    )
    limpar = lixeira.add_parser(
        "limpar", help="delete for good the products removed over N days ago (events stay)"
    )
    limpar.add_argument(
        "--dias",
        type=_days,
        metavar="N",
        help="days a removal is kept (default: CATALOGO_LIXEIRA_DIAS, 30; 0 empties the trash)",
    )
    return parser


def _days(value: str) -> int:
    """--dias: a whole number of days, as CATALOGO_LIXEIRA_DIAS takes it."""
    if not (value.isascii() and value.isdigit()) or int(value) > TRASH_DAYS_MAX:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to {TRASH_DAYS_MAX}")
    return int(value)


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        sys.exit(f"catalogo: {error}")
    try:
        if args.command == "migrate" or settings.database == "sqlite":
            migrations.upgrade(settings)  # once here, so that workers start on a current schema
        if args.command == "serve":
            if not _with(settings, _may_listen(settings, args.host)):
                sys.exit(
                    f"catalogo: refusing to serve on {args.host}: anyone who reaches it could "
                    "change the catalog. Create a user first (catalogo usuarios criar NOME "
                    "--papel admin), or set CATALOGO_AUTH=off to serve it open on purpose."
                )
            _serve(settings, args.host, args.port, args.workers)
        elif args.command == "seed":
            added = _with(
                settings,
                lambda storage: storage.create_many(produtos.exemplos(args.count), historia.CLI),
            )
            print(f"catalogo: added {added} products")
        elif args.command == "usuarios":
            _usuarios(settings, args)
        elif args.command == "tokens":
            _tokens(settings, args)
        elif args.command == "lixeira":
            _purge(settings, settings.trash_days if args.dias is None else args.dias)
    except migrations.SchemaOutdated as error:
        sys.exit(f"catalogo: {error}")
    except (StorageUnavailable, OSError) as error:
        sys.exit(f"catalogo: the database does not answer ({error})")
    except (ContaInvalida, UserExists, UnknownUser) as error:
        sys.exit(f"catalogo: {_said(error)}")


def _with(settings: Settings, work: Callable[[Storage], Awaitable[T]]) -> T:
    """`work` on the store, once its schema is known to be current."""

    async def run() -> T:
        storage = await open_storage(settings)
        try:
            await migrations.require_current(storage)
            return await work(storage)
        finally:
            await storage.close()

    return asyncio.run(run())


def _may_listen(settings: Settings, host: str) -> Callable[[Storage], Awaitable[bool]]:
    async def check(storage: Storage) -> bool:
        if settings.auth is not None or _loopback(host):
            return True
        return await storage.users_exist()

    return check


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _said(error: Exception) -> str:
    if isinstance(error, UserExists):
        return f"there is a user named {error} already"
    if isinstance(error, UnknownUser):
        return f"there is no user named {error}"
    return str(error)


def _usuarios(settings: Settings, args: argparse.Namespace) -> None:
    if args.action == "listar":
        users = _with(settings, lambda storage: storage.users())
        print(f"{'nome':<24} {'papel':<7} {'ativo':<5} criado em")
        for user in users:
            print(
                f"{user.nome:<24} {user.papel:<7} {'sim' if user.ativo else 'não':<5} "
                f"{_when(user.created_at)}"
            )
        return
    nome = accounts.ler_nome(args.nome)
    if args.action == "desativar":
        _with(settings, lambda storage: storage.update_user(nome, ativo=False))
        print(f"catalogo: {nome} deactivated; their sessions ended, their tokens stop working")
        return
    senha = _new_password(args.senha_stdin)
    passwords = Passwords()

    async def criar(storage: Storage) -> object:
        hashed = await passwords.hash(senha)
        return await storage.create_user(nome, args.papel, hashed, time.time())

    async def trocar(storage: Storage) -> object:
        return await storage.update_user(nome, password_hash=await passwords.hash(senha))

    if args.action == "criar":
        _with(settings, criar)
        print(f"catalogo: created {nome} ({args.papel})")
    else:
        _with(settings, trocar)
        print(f"catalogo: new password for {nome}; their sessions ended")


def _new_password(from_stdin: bool) -> str:
    """From stdin (one line), or typed twice at a prompt that does not echo it."""
    if from_stdin:
        return accounts.ler_senha(sys.stdin.readline().removesuffix("\n").removesuffix("\r"))
    if not sys.stdin.isatty():
        raise ContaInvalida("no terminal to ask for the password: pass --senha-stdin")
    senha = accounts.ler_senha(getpass.getpass("Senha: "))
    if getpass.getpass("Repita a senha: ") != senha:
        raise ContaInvalida("As senhas digitadas não são iguais.")
    return senha


def _tokens(settings: Settings, args: argparse.Namespace) -> None:
    if args.action == "listar":
        tokens = _with(settings, lambda storage: storage.tokens())
        print(
            f"{'id':>5} {'usuário':<20} {'papel':<7} {'criado em':<16} {'expira em':<16} "
            f"{'último uso':<16} {'estado':<8} nome"
        )
        for token in tokens:
            state = (
                "revogado"
                if token.revoked_at
                else (
                    "expirado" if token.expires_at and token.expires_at <= time.time() else "ativo"
                )
            )
            print(
                f"{token.id:>5} {token.usuario:<20} {token.papel:<7} "
                f"{_when(token.created_at):<16} {_when(token.expires_at):<16} "
                f"{_when(token.last_used_at):<16} {state:<8} {token.nome}"
            )
        return
    if args.action == "revogar":
        revoked = _with(settings, lambda storage: storage.revoke_token(args.id, time.time()))
        if revoked is None:
            sys.exit(f"catalogo: there is no token {args.id}")
        print(f"catalogo: token {args.id} ({revoked.nome}) revoked")
        return
    nome = accounts.ler_nome(args.usuario)
    rotulo = accounts.ler_rotulo(args.nome)
    dias = accounts.ler_dias(args.expira)

    async def criar(storage: Storage) -> tuple[accounts.Token, str]:
        found = await storage.user(nome)
        if found is None:
            raise UnknownUser(nome)
        papel = accounts.papel_de_token(found[0], args.papel)
        return await accounts.issue_token(storage, found[0], rotulo, papel, dias, time.time())

    token, secret = _with(settings, criar)
    print(
        f"catalogo: token {token.id} for {token.usuario} ({token.papel}), "
        f"expires {_when(token.expires_at) if token.expires_at else 'never'}; "
        "it is shown only now:",
        file=sys.stderr,
    )
    print(secret)


def _purge(settings: Settings, days: int) -> None:
    before = time.time() - days * 24 * 3600
    purged = _with(settings, lambda storage: storage.purge(before))
    print(
        f"catalogo: {purged} removed {'product' if purged == 1 else 'products'} deleted for "
        f"good (removed before {_when(before)} UTC); their history stays"
    )


def _when(moment: float | None) -> str:
    if moment is None:
        return "-"
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M")


# How long a worker may take to finish what it began once told to stop: over the app's own
# worst case (about 20 s, a database that does not answer), and with serving.DRAIN_S under
# systemd's TimeoutStopSec (30 s in deploy/).
STOP_TIMEOUT_S = 25


def _serve(settings: Settings, host: str, port: int, workers: int) -> None:
    """Granian serves until SIGTERM (or Ctrl-C), however it comes (serving.py): serve stops
    accepting, lets every worker finish the requests it has begun (within STOP_TIMEOUT_S),
    then runs the app's shutdown; this returns when all are done.

    It holds CATALOGO_MAX_CONNECTIONS at once: Granian's default of 1,024 (its backlog) let
    idle uploads take every slot, and then nothing else was accepted. A slot is held only for a
    while: the guard ends a slow body, and the header timeout a connection that sends no
    request, even one that never sends a byte (hyper times those only in HTTP/1-only mode; its
    HTTP/2 detection waits forever). Each slot costs a file descriptor: the soft limit is
    raised towards the hard one to hold them all."""
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings

    from catalogo import serving

    serving.hold_stop_signals()  # before the metrics' process, which inherits it
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.max_connections + 1024  # the database, the logs, the listening socket
    if soft != resource.RLIM_INFINITY and soft < wanted:
        soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    with _metrics_exported(settings, port):
        print(f"catalogo: serving http://{host}:{port}/produtos", flush=True)
        try:
            serving.serve(
                target="catalogo.app:create_app",
                address=host,
                port=port,
                workers=workers,
                interface=Interfaces.ASGI,
                http=HTTPModes.http1,
                http1_settings=HTTP1Settings(header_read_timeout=settings.header_timeout_ms),
                backlog=4096,  # the kernel keeps at most net.core.somaxconn of these
                backpressure=max(1, settings.max_connections // workers),
                workers_kill_timeout=STOP_TIMEOUT_S,
            )
        except serving.CannotListen as error:
            sys.exit(f"catalogo: {error}")


@contextlib.contextmanager
def _metrics_exported(settings: Settings, port: int) -> Iterator[None]:
    """With CATALOGO_METRICS_PORT set, the workers' metrics are served there (metrics.py) from a
    folder of this serve's own, removed when it stops."""
    if settings.metrics_port is None:
        yield
        return
    if settings.metrics_port == port:
        sys.exit("catalogo: CATALOGO_METRICS_PORT must be another port than the site's")
    folder = tempfile.mkdtemp(prefix="catalogo-metrics-")
    # Before prometheus_client is first imported: it chooses multiprocess mode on import, and
    # the workers forked from this process keep what was imported here.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    from catalogo import metrics

    try:
        with metrics.exporting(settings.metrics_host, settings.metrics_port, folder):
            print(
                f"catalogo: metrics on http://{settings.metrics_host}:{settings.metrics_port}"
                "/metrics",
                flush=True,
            )
            yield
    except metrics.CannotExport as error:
        sys.exit(f"catalogo: {error}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
