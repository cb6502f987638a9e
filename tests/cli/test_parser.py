"""The command line speaks one language to the shop's admin: every command's help, argparse's
own words and its errors in Portuguese; former names work but are not listed."""

from typing import Any

import pytest

from catalogo.cli.main import main
from catalogo.cli.parser import parser

ENGLISH = ("usage:", "show this help", "positional arguments", "options:", "error:", "invalid")


def helped(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as ended:
        parser().parse_args([*argv, "--help"])
    assert ended.value.code == 0
    return capsys.readouterr().out


def commands() -> list[list[str]]:
    """Every command and action, as typed."""
    found = []
    top: Any = parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
    for name, command in top.choices.items():
        found.append([name])
        if command._subparsers is not None:
            for action in command._subparsers._group_actions[0].choices:
                found.append([name, action])
    return found


def test_every_commands_help_is_in_portuguese(capsys: pytest.CaptureFixture[str]) -> None:
    every = commands()
    assert ["usuarios", "criar"] in every and ["copiar"] in every and ["backup"] in every
    for argv in [[], *every]:
        text = helped(capsys, *argv)
        assert text.startswith("uso: catalogo"), argv
        assert "mostra esta ajuda e sai" in text, argv
        said = [word for word in ENGLISH if word in text.lower()]
        assert not said, f"{argv}: {said}"


def test_a_former_name_works_but_is_not_listed(capsys: pytest.CaptureFixture[str]) -> None:
    text = helped(capsys)
    assert "removidos" in text and "lixeira" not in text
    with pytest.raises(SystemExit):
        main(["lixeira", "limpar", "--help"])
    assert capsys.readouterr().out.startswith("uso: catalogo removidos limpar")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["seed", "muitos"], "catalogo seed: erro: argumento N: valor inválido: 'muitos'"),
        (["voar"], "catalogo: erro: argumento COMANDO: escolha inválida: 'voar'"),
        (["usuarios", "criar", "ana"], "faltam os argumentos: --papel"),
        (["serve", "--porta", "1"], "argumentos que não conheço: --porta 1"),
        (["removidos", "limpar", "--dias", "-1"], "deve ser um número inteiro de 0 a 36500"),
        (["copiar"], "faltam os argumentos: --para"),
    ],
)
def test_a_mistake_is_named_in_portuguese(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    error = capsys.readouterr().err
    assert said in error and "uso: catalogo" in error


def test_the_version_is_the_installed_release(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("catalogo 0.")
