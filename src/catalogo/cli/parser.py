"""The command line's commands, options and help, in Portuguese as the verbs are: the shop's
admin reads one language. argparse's own words (errors, "usage:") are given in Portuguese too,
through the one name its messages are looked up by (`_`, gettext's, where no catalog of ours
can be installed without a compiled file)."""

import argparse
import functools
import importlib.metadata
from typing import Any

from catalogo.cli import files
from catalogo.domain import contas, planilhas
from catalogo.runtime.settings import TRASH_DAYS_MAX

_PORTUGUESE = {
    "usage: ": "uso: ",
    "argument %(argument_name)s: %(message)s": "argumento %(argument_name)s: %(message)s",
    "positional arguments": "argumentos",
    "options": "opções",
    "show this help message and exit": "mostra esta ajuda e sai",
    "unrecognized arguments: %s": "argumentos que não conheço: %s",
    "not allowed with argument %s": "não combina com o argumento %s",
    "ignored explicit argument %r": "valor ignorado: %r",
    "the following arguments are required: %s": "faltam os argumentos: %s",
    "one of the arguments %s is required": "falta um dos argumentos %s",
    "expected one argument": "falta o valor",
    "expected at most one argument": "espera no máximo um valor",
    "expected at least one argument": "espera pelo menos um valor",
    "ambiguous option: %(option)s could match %(matches)s": (
        "opção ambígua: %(option)s pode ser %(matches)s"
    ),
    "unexpected option string: %s": "opção inesperada: %s",
    "invalid %(type)s value: %(value)r": "valor inválido: %(value)r",
    "invalid choice: %(value)r (choose from %(choices)s)": (
        "escolha inválida: %(value)r (escolha entre %(choices)s)"
    ),
    "%(prog)s: error: %(message)s\n": "%(prog)s: erro: %(message)s\n",
    "can't open '%(filename)s': %(error)s": "não consigo abrir '%(filename)s': %(error)s",
}
argparse._ = lambda message: _PORTUGUESE.get(message, message)  # type: ignore[attr-defined]


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="catalogo",
        formatter_class=_Formatter,
        add_help=False,
        description="Catálogo de produtos. O banco de dados é o de CATALOGO_DATABASE_URL "
        "(por padrão sqlite:///./catalogo.db).",
    )
    _help(parser)
    parser.add_argument(
        "--version",
        action="version",
        version=f"catalogo {importlib.metadata.version('catalogo')}",
        help="mostra a versão instalada e sai",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, title="comandos", metavar="COMANDO"
    )
    commands.add_parser = functools.partial(_subparser, commands)  # type: ignore[method-assign]
    serve = commands.add_parser(
        "serve",
        help="serve o site e a API por HTTP (Granian); o SQLite é migrado antes, o PostgreSQL "
        "deve estar em dia",
    )
    serve.add_argument("--host", default="127.0.0.1", help="endereço em que escutar")
    serve.add_argument("--port", type=int, default=8000, help="porta em que escutar")
    serve.add_argument("--workers", type=int, default=1, help="processos que atendem")
    commands.add_parser("migrate", help="põe o esquema do banco em dia, e sai")
    seed = commands.add_parser(
        "seed", help="adiciona N produtos de exemplo (demonstrações, benchmarks)"
    )
    seed.add_argument("count", type=int, metavar="N", help="quantos produtos adicionar")
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

    usuarios = _actions(commands.add_parser("usuarios", help="contas da equipe"))
    criar = usuarios.add_parser(
        "criar", help="cria um usuário (o primeiro liga a entrada com senha)"
    )
    criar.add_argument("nome", help="o nome com que ele entra")
    criar.add_argument("--papel", required=True, choices=contas.PAPEIS, help="o que ele pode")
    criar.add_argument("--senha-stdin", action="store_true", help="lê a senha da entrada padrão")
    usuarios.add_parser("listar", help="lista os usuários")
    desativar = usuarios.add_parser(
        "desativar", help="desativa um usuário: encerra as sessões dele"
    )
    desativar.add_argument("nome", help="o usuário")
    senha = usuarios.add_parser(
        "senha", help="troca a senha de um usuário: encerra as sessões dele"
    )
    senha.add_argument("nome", help="o usuário")
    senha.add_argument("--senha-stdin", action="store_true", help="lê a senha da entrada padrão")

    tokens = _actions(commands.add_parser("tokens", help="tokens da API"))
    criar_token = tokens.add_parser("criar", help="cria um token; ele é mostrado uma só vez")
    criar_token.add_argument("--usuario", required=True, help="o usuário em nome de quem ele age")
    criar_token.add_argument("--nome", required=True, help="um nome: quem ou o que o usa")
    criar_token.add_argument(
        "--papel", choices=contas.TOKEN_PAPEIS, help="no máximo o do usuário (por padrão: o dele)"
    )
    criar_token.add_argument("--expira", metavar="DIAS", help="dias até expirar (1 a 3650)")
    tokens.add_parser("listar", help="lista os tokens (nunca os segredos)")
    revogar = tokens.add_parser("revogar", help="revoga um token: ele deixa de valer na hora")
    revogar.add_argument("id", type=int, help="o número do token, que `tokens listar` mostra")
    chaves = _actions(
        commands.add_parser(
            "webhooks",
            help="os segredos dos webhooks, cifrados no banco (CATALOGO_WEBHOOKS_CHAVES)",
        )
    )
    chaves.add_parser("chave", help="mostra uma chave nova, para CATALOGO_WEBHOOKS_CHAVES")
    chaves.add_parser(
        "cifrar",
        help="cifra cada segredo com a primeira chave de CATALOGO_WEBHOOKS_CHAVES (os que "
        "estão às claras e os cifrados com outra chave da lista)",
    )
    removidos = _actions(commands.add_parser("removidos", help="os produtos removidos"))
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
    backup = commands.add_parser(
        "backup",
        help="copia o arquivo SQLite para outro, enquanto o serviço grava: uma cópia inteira, "
        "conferida (PRAGMA integrity_check)",
    )
    backup.add_argument("destino", metavar="ARQUIVO", help="o arquivo novo (não pode existir)")
    copiar = commands.add_parser(
        "copiar",
        help="copia o catálogo SQLite inteiro (produtos, histórico, usuários, tokens, "
        "importações, webhooks) para um PostgreSQL vazio, tudo ou nada, e confere",
    )
    copiar.add_argument(
        "--para",
        required=True,
        metavar="URL",
        help="o banco de destino, vazio: postgresql://usuario:senha@host:5432/banco",
    )
    return parser


# Former names of commands, still taken but not listed.
ALIASES = {"lixeira": "removidos"}


def _subparser(
    commands: "argparse._SubParsersAction[argparse.ArgumentParser]", name: str, **options: Any
) -> argparse.ArgumentParser:
    """A command, as the parser itself is made: Portuguese help, one -h."""
    made: argparse.ArgumentParser = argparse._SubParsersAction.add_parser(
        commands, name, formatter_class=_Formatter, add_help=False, **options
    )
    _help(made)
    return made


def _actions(command: argparse.ArgumentParser) -> Any:
    """The actions of a command that has them (`usuarios criar`)."""
    actions = command.add_subparsers(dest="action", required=True, title="ações", metavar="AÇÃO")
    actions.add_parser = functools.partial(_subparser, actions)  # type: ignore[method-assign]
    return actions


def _help(parser: argparse.ArgumentParser) -> None:
    parser._positionals.title = "argumentos"
    parser._optionals.title = "opções"
    parser.add_argument("-h", "--help", action="help", help="mostra esta ajuda e sai")


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, "uso: " if prefix is None else prefix)


def _days(value: str) -> int:
    """--dias: a whole number of days, as CATALOGO_REMOVIDOS_DIAS takes it."""
    if not (value.isascii() and value.isdigit()) or int(value) > TRASH_DAYS_MAX:
        raise argparse.ArgumentTypeError(f"deve ser um número inteiro de 0 a {TRASH_DAYS_MAX}")
    return int(value)
