"""`catalogo`: the only entry point, the same locally and in CI; cli/parser.py holds every
command and its help, cli/files.py the spreadsheets, cli/database.py the backup and the copy to
PostgreSQL, cli/serve.py the server.

SQLite migrates itself before any command, so that one command starts a new catalog.
PostgreSQL is migrated only by `catalogo migrate`, run once per deployment; the other commands
refuse a schema that is not current, since several instances must never race to change it.

Protected mode: while anyone may change the catalog (CATALOGO_AUTH unset and no user yet),
`serve` listens only on a loopback address; anything else is refused with the two ways out.
"""

import argparse
import asyncio
import getpass
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from catalogo.cli import database, files
from catalogo.cli.files import plural
from catalogo.cli.parser import ALIASES, parser
from catalogo.cli.serve import may_listen, serve
from catalogo.domain import contas, historico, produtos
from catalogo.domain.contas import ContaInvalida, UnknownToken, UnknownUser, UserExists
from catalogo.domain.errors import (
    ImportRefused,
    ListingError,
    QueryTimeout,
    StorageUnavailable,
    TooManyRows,
)
from catalogo.domain.keyring import Keyring, new_key
from catalogo.domain.senhas import Passwords
from catalogo.runtime import time_zone
from catalogo.runtime.settings import Settings, SettingsError
from catalogo.services.contas import (
    change_password,
    create_user,
    deactivate,
    issue_token,
    revoke_token,
)
from catalogo.services.importacoes import ImportMoved
from catalogo.services.webhooks import reseal_secrets
from catalogo.storage import Storage, migrations, open_storage
from catalogo.storage.sqlite.store import schema_version_of

T = TypeVar("T")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ALIASES:
        argv = [ALIASES[argv[0]], *argv[1:]]
    args = parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        sys.exit(f"catalogo: {error}")
    time_zone.use(settings.time_zone)
    try:
        if args.command == "migrate":
            migrations.upgrade(settings)
        elif settings.database == "sqlite" and migrations.behind(
            schema_version_of(settings.sqlite_path)
        ):
            migrations.upgrade_apart(settings)  # here, so that workers start on a current schema
        if args.command == "serve":
            if not _with(settings, may_listen(settings, args.host)):
                sys.exit(
                    f"catalogo: não vou servir em {args.host}: quem o alcançasse poderia mudar "
                    "o catálogo. Crie antes um usuário (catalogo usuarios criar NOME --papel "
                    "admin), ou defina CATALOGO_AUTH=off para servi-lo aberto de propósito."
                )
            serve(settings, args.host, args.port, args.workers)
        elif args.command == "seed":
            added = _with(
                settings,
                lambda storage: storage.create_many(produtos.samples(args.count), historico.CLI),
            )
            print(
                f"catalogo: {added} {plural(added, 'produto adicionado', 'produtos adicionados')}"
            )
        elif args.command == "exportar":
            files.export(args, lambda work: _with(settings, work))
        elif args.command == "importar":
            files.import_file(args, lambda work: _with(settings, work))
        elif args.command == "desfazer":
            files.undo(args, lambda work: _with(settings, work))
        elif args.command == "usuarios":
            _usuarios(settings, args)
        elif args.command == "tokens":
            _tokens(settings, args)
        elif args.command == "webhooks":
            _webhooks(settings, args)
        elif args.command == "removidos":
            _purge(settings, settings.trash_days if args.dias is None else args.dias)
        elif args.command == "backup":
            database.take_backup(settings, args.destino)
        elif args.command == "copiar":
            database.copy_to(settings, args.para)
    except migrations.SchemaOutdated as error:
        sys.exit(f"catalogo: {error}")
    except (StorageUnavailable, OSError) as error:
        sys.exit(f"catalogo: o banco de dados não responde ({error})")
    except (
        ContaInvalida,
        UserExists,
        UnknownUser,
        UnknownToken,
        ListingError,
        ImportRefused,
    ) as error:
        sys.exit(f"catalogo: {_said(error)}")
    except ImportMoved:
        sys.exit(
            "catalogo: produtos da importação mudaram enquanto ela era lida; nada foi gravado: "
            "rode de novo"
        )
    except (TooManyRows, QueryTimeout) as error:
        sys.exit(f"catalogo: {error.message}")


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


# Refusals the terminal words as the pages do (_said).
_REFUSALS = (ContaInvalida, UserExists, UnknownUser, UnknownToken, ListingError, ImportRefused)


def _said(error: Exception) -> str:
    if isinstance(error, (UserExists, UnknownUser, UnknownToken)):
        return files.sentence(error.message)
    return str(error)


def _usuarios(settings: Settings, args: argparse.Namespace) -> None:
    if args.action == "listar":
        users = _with(settings, lambda storage: storage.users())
        print(f"{'nome':<24} {'papel':<7} {'ativo':<5} criado em")
        for user in users:
            print(
                f"{user.nome:<24} {user.papel:<7} {'sim' if user.ativo else 'não':<5} "
                f"{_when(user.criado_em)}"
            )
        return
    nome = contas.parse_nome(args.nome)
    if args.action == "desativar":
        _with(settings, lambda storage: deactivate(storage, nome))
        print(
            f"catalogo: {nome} desativado; as sessões dele acabaram, os tokens dele não valem mais"
        )
        return
    senha = _new_password(args.senha_stdin)
    passwords = Passwords()
    if args.action == "criar":
        _with(settings, lambda s: create_user(s, passwords, nome, args.papel, senha))
        print(f"catalogo: usuário {nome} criado ({args.papel})")
    else:
        _with(settings, lambda s: change_password(s, passwords, nome, senha))
        print(f"catalogo: senha de {nome} trocada; as sessões dele acabaram")


def _new_password(from_stdin: bool) -> str:
    """From stdin (one line), or typed twice at a prompt that does not echo it."""
    if from_stdin:
        return contas.parse_senha(sys.stdin.readline().removesuffix("\n").removesuffix("\r"))
    if not sys.stdin.isatty():
        raise ContaInvalida("não há terminal onde pedir a senha: use --senha-stdin")
    senha = contas.parse_senha(getpass.getpass("Senha: "))
    if getpass.getpass("Repita a senha: ") != senha:
        raise ContaInvalida(contas.PASSWORDS_DIFFER)
    return senha


def _tokens(settings: Settings, args: argparse.Namespace) -> None:
    if args.action == "listar":
        tokens = _with(settings, lambda storage: storage.tokens())
        print(
            f"{'id':>5} {'usuário':<20} {'papel':<7} {'criado em':<22} {'expira em':<22} "
            f"{'último uso':<22} {'estado':<8} nome"
        )
        for token in tokens:
            state = token.state(time.time())
            print(
                f"{token.id:>5} {token.usuario:<20} {token.papel:<7} "
                f"{_when(token.criado_em):<22} {_when(token.expira_em):<22} "
                f"{_when(token.usado_em):<22} {state:<8} {token.nome}"
            )
        return
    if args.action == "revogar":
        revoked = _with(settings, lambda storage: revoke_token(storage, args.id))
        print(f"catalogo: token {args.id} ({revoked.nome}) revogado")
        return
    token, secret = _with(
        settings,
        lambda s: issue_token(s, args.usuario, args.nome, args.papel, args.expira),
    )
    print(
        f"catalogo: token {token.id} de {token.usuario} ({token.papel}), "
        f"expira {_when(token.expira_em) if token.expira_em else 'nunca'}; "
        "ele só é mostrado agora:",
        file=sys.stderr,
    )
    print(secret)


def _webhooks(settings: Settings, args: argparse.Namespace) -> None:
    if args.action == "chave":
        print(new_key())
        return
    if not settings.webhook_keys:
        sys.exit(
            "catalogo: CATALOGO_WEBHOOKS_CHAVES está vazia: ponha nela uma chave "
            "(`catalogo webhooks chave` cria uma) e rode de novo"
        )
    keyring = Keyring(settings.webhook_keys)
    sealed, unopenable = _with(settings, lambda s: reseal_secrets(s, keyring))
    said = plural(sealed, "segredo cifrado", "segredos cifrados")
    print(f"catalogo: {sealed} {said} com a primeira chave")
    if unopenable:
        sys.exit(
            "catalogo: nenhuma chave abre o segredo dos webhooks "
            f"{', '.join(map(str, unopenable))}: devolva à lista a chave com que foram "
            "cifrados, ou apague-os e crie outros"
        )


def _purge(settings: Settings, days: int) -> None:
    before = time.time() - days * 24 * 3600
    purged = _with(settings, lambda storage: storage.purge(before))
    gone = plural(purged, "produto removido apagado", "produtos removidos apagados")
    print(
        f"catalogo: {purged} {gone} de vez (removidos antes de {_when(before)}); o histórico fica"
    )


def _when(moment: float | None) -> str:
    """A moment in the shop's zone (CATALOGO_FUSO_HORARIO), with its offset: an operator on a
    server kept in UTC reads it right."""
    if moment is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M %z", time.localtime(moment))
