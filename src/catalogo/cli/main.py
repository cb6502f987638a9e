"""`catalogo serve`, `migrate`, `seed`, `exportar`, `usuarios`, `tokens` and `removidos` (once
`lixeira`, a name still taken): the only entry point, the same locally and in CI.

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
from datetime import UTC, datetime
from typing import TypeVar

from catalogo.cli import files
from catalogo.cli.files import plural
from catalogo.cli.serve import may_listen, serve
from catalogo.domain import contas, historico, planilhas, produtos
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
from catalogo.runtime.settings import TRASH_DAYS_MAX, Settings, SettingsError
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
from catalogo.storage.migrations import HEAD
from catalogo.storage.sqlite.store import schema_version_of

T = TypeVar("T")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="catalogo",
        description="Catálogo de produtos. O banco de dados é o de CATALOGO_DATABASE_URL "
        "(por padrão sqlite:///./catalogo.db).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="serve HTTP (Granian); o SQLite é migrado antes, o PostgreSQL deve estar em dia",
    )
    serve.add_argument("--host", default="127.0.0.1", help="endereço em que escutar")
    serve.add_argument("--port", type=int, default=8000, help="porta em que escutar")
    serve.add_argument("--workers", type=int, default=1, help="processos que atendem")
    commands.add_parser("migrate", help="põe o esquema do banco em dia, e sai")
    seed = commands.add_parser(
        "seed", help="adiciona N produtos de exemplo (demonstrações, benchmarks)"
    )
    seed.add_argument("count", type=int, help="quantos produtos adicionar")
    exportar = commands.add_parser(
        "exportar", help="grava a lista de produtos (ou uma busca) num arquivo, como o site"
    )
    exportar.add_argument(
        "--formato",
        choices=("csv", "rfc4180", "xlsx"),
        default="csv",
        help="csv: o Excel em português (;, vírgula nos centavos); rfc4180: para programas; "
        "xlsx: uma planilha (padrão: csv)",
    )
    exportar.add_argument("--saida", metavar="ARQUIVO", help="onde gravar (padrão: a saída)")
    for name, meaning in files.LIST_OPTIONS.items():
        exportar.add_argument(f"--{name.replace('_', '-')}", dest=name, help=meaning)
    exportar.add_argument("--codigo", action="append", default=[], help="só este código")
    importar = commands.add_parser(
        "importar",
        help="lê uma planilha (CSV ou xlsx) e diz o que mudaria no catálogo; com --confirmar, "
        "grava tudo ou nada",
    )
    importar.add_argument("arquivo", help="o CSV (das exportações, ou com ; , ou tab) ou o xlsx")
    importar.add_argument(
        "--codificacao",
        choices=planilhas.CODIFICACOES,
        default="utf-8",
        help="a do CSV, se não for UTF-8 (padrão: utf-8, com ou sem BOM)",
    )
    importar.add_argument(
        "--confirmar",
        action="store_true",
        help="grava o que o relatório diz, numa só transação, se nenhuma linha tiver erro",
    )
    desfazer = commands.add_parser(
        "desfazer", help="desfaz uma importação, se nenhum dos produtos dela mudou desde então"
    )
    desfazer.add_argument("lote", help="o número da importação, que `importar` mostrou")

    usuarios = commands.add_parser("usuarios", help="contas da equipe").add_subparsers(
        dest="action", required=True
    )
    criar = usuarios.add_parser(
        "criar", help="cria um usuário (o primeiro liga a entrada com senha)"
    )
    criar.add_argument("nome")
    criar.add_argument("--papel", required=True, choices=contas.PAPEIS)
    criar.add_argument("--senha-stdin", action="store_true", help="lê a senha da entrada padrão")
    usuarios.add_parser("listar", help="lista os usuários")
    desativar = usuarios.add_parser(
        "desativar", help="desativa um usuário: encerra as sessões dele"
    )
    desativar.add_argument("nome")
    senha = usuarios.add_parser(
        "senha", help="troca a senha de um usuário: encerra as sessões dele"
    )
    senha.add_argument("nome")
    senha.add_argument("--senha-stdin", action="store_true", help="lê a senha da entrada padrão")

    tokens = commands.add_parser("tokens", help="tokens da API").add_subparsers(
        dest="action", required=True
    )
    criar_token = tokens.add_parser("criar", help="cria um token; ele é mostrado uma só vez")
    criar_token.add_argument("--usuario", required=True, help="o usuário em nome de quem ele age")
    criar_token.add_argument("--nome", required=True, help="um nome: quem ou o que o usa")
    criar_token.add_argument(
        "--papel", choices=contas.TOKEN_PAPEIS, help="no máximo o do usuário (por padrão: o dele)"
    )
    criar_token.add_argument("--expira", metavar="DIAS", help="dias até expirar (1 a 3650)")
    tokens.add_parser("listar", help="lista os tokens (nunca os segredos)")
    revogar = tokens.add_parser("revogar", help="revoga um token: ele deixa de valer na hora")
    revogar.add_argument("id", type=int)
    chaves = commands.add_parser(
        "webhooks", help="os segredos dos webhooks, cifrados no banco (CATALOGO_WEBHOOKS_CHAVES)"
    ).add_subparsers(dest="action", required=True)
    chaves.add_parser("chave", help="mostra uma chave nova, para CATALOGO_WEBHOOKS_CHAVES")
    chaves.add_parser(
        "cifrar",
        help="cifra cada segredo com a primeira chave de CATALOGO_WEBHOOKS_CHAVES (os que "
        "estão às claras e os cifrados com outra chave da lista)",
    )
    removidos = commands.add_parser(
        "removidos", aliases=["lixeira"], help="os produtos removidos (lixeira, o nome antigo)"
    ).add_subparsers(dest="action", required=True)
    limpar = removidos.add_parser(
        "limpar", help="apaga de vez os produtos removidos há mais de N dias (o histórico fica)"
    )
    limpar.add_argument(
        "--dias",
        type=_days,
        metavar="N",
        help="dias que um produto removido é guardado (padrão: CATALOGO_REMOVIDOS_DIAS, 30; 0 "
        "apaga todos)",
    )
    return parser


def _days(value: str) -> int:
    """--dias: a whole number of days, as CATALOGO_REMOVIDOS_DIAS takes it."""
    if not (value.isascii() and value.isdigit()) or int(value) > TRASH_DAYS_MAX:
        raise argparse.ArgumentTypeError(f"deve ser um número inteiro de 0 a {TRASH_DAYS_MAX}")
    return int(value)


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        sys.exit(f"catalogo: {error}")
    try:
        if args.command == "migrate":
            migrations.upgrade(settings)
        elif settings.database == "sqlite" and schema_version_of(settings.sqlite_path) != HEAD:
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
        elif args.command in ("removidos", "lixeira"):
            _purge(settings, settings.trash_days if args.dias is None else args.dias)
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
            f"{'id':>5} {'usuário':<20} {'papel':<7} {'criado em':<16} {'expira em':<16} "
            f"{'último uso':<16} {'estado':<8} nome"
        )
        for token in tokens:
            state = token.state(time.time())
            print(
                f"{token.id:>5} {token.usuario:<20} {token.papel:<7} "
                f"{_when(token.criado_em):<16} {_when(token.expira_em):<16} "
                f"{_when(token.usado_em):<16} {state:<8} {token.nome}"
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
        f"expira {_when(token.expira_em) + ' UTC' if token.expira_em else 'nunca'}; "
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
        f"catalogo: {purged} {gone} de vez (removidos antes de {_when(before)} UTC); "
        "o histórico fica"
    )


def _when(moment: float | None) -> str:
    if moment is None:
        return "-"
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M")
