"""The product: its field rules and its price, pure and free of I/O.

`Produto` is the one definition of a valid product. The server check, the HTML input
attributes (`ATRIBUTOS_HTML`) and any schema are read from it, so they cannot drift apart.

Its price is read and written by domain/precos.py.
"""

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Annotated, Any

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from catalogo.domain import text
from catalogo.domain.precos import CENTAVO, PRECO_MAXIMO, PrecoInvalido, format_preco, parse_preco
from catalogo.domain.text import as_datetime

ID_MAXIMO = 2**63 - 1  # ids and versions alike: PostgreSQL's bigint, SQLite's INTEGER


def numbers_up_to(maximum: int) -> str:
    """A regex for the whole numbers 1..maximum written without leading zeros.

    Digit by digit, as one writes "less than" by hand: shorter numbers, then numbers that
    agree with `maximum` up to some digit and are smaller there, then `maximum` itself.
    """
    digits = str(maximum)
    parts = [f"[1-9][0-9]{{0,{len(digits) - 2}}}"]
    for i, digit in enumerate(digits):
        smaller, lowest = int(digit) - 1, 1 if i == 0 else 0
        if smaller >= lowest:
            parts.append(f"{digits[:i]}[{lowest}-{smaller}][0-9]{{{len(digits) - i - 1}}}")
    parts.append(digits)
    return "(?:" + "|".join(parts) + ")"


# The one spelling of "an id or a version": in routes, ETags, cursors, forms and the API schema.
ID_PATTERN = numbers_up_to(ID_MAXIMO)
_ID = re.compile(ID_PATTERN, re.ASCII)


def parse_id(texto: str) -> int | None:
    """An id or version written as digits, or None: never int() on 5,000 digits."""
    return int(texto) if _ID.fullmatch(texto) else None


def format_field(campo: str, valor: Any) -> str:
    """A field's value as pages show it beside another: prices as `R$ 1.234,56`."""
    if valor is None:
        return "(sem código)"  # the one field that may be empty
    return format_preco(valor) if campo == "preco" else str(valor)


def _text_field(uma_linha: bool) -> Any:
    """Text as people see it (domain/text.py); a refused character gets a message naming it."""

    def parse(valor: Any) -> Any:
        if not isinstance(valor, str):
            return valor
        try:
            return text.read(valor, one_line=uma_linha)
        except text.RefusedCharacter as recusa:
            raise PydanticCustomError(
                recusa.kind, _MENSAGENS[recusa.kind], {"codigo": recusa.code}
            ) from None

    return BeforeValidator(parse)


def _parse_codigo(valor: Any) -> Any:
    """A code as a shop types it: one line, trimmed, NFC; blank is no code (None), but a code
    of only invisible characters is refused, never silently dropped."""
    if not isinstance(valor, str):
        return valor
    try:
        codigo = text.read(valor, one_line=True)
    except text.RefusedCharacter as recusa:
        raise PydanticCustomError(
            recusa.kind, _MENSAGENS[recusa.kind], {"codigo": recusa.code}
        ) from None
    if not codigo and valor.strip():
        raise PydanticCustomError("codigo_invisivel", _MENSAGENS["codigo_invisivel"])
    return codigo or None


def _price_field(valor: Any) -> Any:
    """Text as people type it, or an exact JSON number (read as Decimal, never as a float)."""
    if isinstance(valor, str):
        try:
            return parse_preco(valor)
        except PrecoInvalido as erro:
            raise PydanticCustomError("preco_invalido", str(erro)) from None
    if isinstance(valor, bool) or not isinstance(valor, int | Decimal):
        raise PydanticCustomError("preco_invalido", "Informe o preço como número ou texto.")
    return valor


# The same rules as JSON Schema, for the API description (ECMA-262 patterns): no refused
# character, and a name that does not start or end with a space. What a pattern cannot say
# (NFC, trimming, a name of only invisible characters) the descriptions say in words.
_NOME_MAXIMO, _DESCRICAO_MAXIMO, CODIGO_MAXIMO = 200, 5000, 60
_UMA_LINHA = text.REFUSED_IN_ONE_LINE
_NOME_SEM_RECUSADOS_NEM_BORDAS = f"^[^\\s{_UMA_LINHA}](?:[^{_UMA_LINHA}]*[^\\s{_UMA_LINHA}])?$"
_NOME = {
    "pattern": _NOME_SEM_RECUSADOS_NEM_BORDAS,
    "description": f"Texto de 1 a {_NOME_MAXIMO} caracteres, contados depois de normalizado "
    "(NFC) e aparado: espaços e caracteres invisíveis (U+200B, U+FEFF, U+00AD, …) saem das "
    "pontas, e um nome só deles conta como vazio. Recusa caracteres de controle, quebras de "
    "linha (também U+2028 e U+2029) e os controles de direção do texto (U+061C, U+200E, "
    "U+200F, U+202A a U+202E, U+2066 a U+2069).",
}
_CODIGO = {
    "description": f"O código da loja (SKU, cProd da NF-e, a chave do ERP): de 1 a "
    f"{CODIGO_MAXIMO} caracteres numa linha, contados depois de normalizado (NFC) e aparado; "
    "recusa os mesmos caracteres que `nome`. Único no catálogo sem distinguir maiúsculas, "
    "contando os produtos removidos. Vazio ou null: sem código. Numa escrita que não o cita, "
    "o código gravado fica.",
    "anyOf": [
        {"type": "string", "pattern": _NOME_SEM_RECUSADOS_NEM_BORDAS, "maxLength": CODIGO_MAXIMO},
        {"type": "null"},
    ],
    "examples": ["CAN-AZ-300"],
}
_DESCRICAO = {
    "pattern": f"^[^{text.REFUSED_IN_LINES}]*$",
    "description": f"Texto de até {_DESCRICAO_MAXIMO} caracteres, contados depois de "
    "normalizado (NFC) e aparado nas pontas. Quebras de linha são mantidas e gravadas como "
    "`\\n` (também CRLF, CR, U+2028 e U+2029); outros caracteres de controle são recusados.",
}
_PRECO_CANONICO = "^(?!0+(?:\\.0{1,2})?$)[0-9]{1,9}(?:\\.[0-9]{1,2})?$"
# What precos.parse_preco reads, as a pattern: spaces around (those both str.strip and
# ECMA-262's \s know); an optional `R$`; then digits with one decimal
# separator (`,` or `.`) and one or two decimals; or thousands grouped by one separator, with
# decimals after the other (`1.234,56`, `1,234.56`) or in two groups or more (`1.234.567`),
# never one group alone (`1.234` is ambiguous); at least one digit that is not 0, and at most
# nine before the decimals (the maximum). tests/domain/test_produtos.py checks every string it
# matches is read, and that the forms it leaves out are refused.
_ESPACO = "[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*"
_PRECO_DIGITADO = (
    f"^{_ESPACO}(?:[Rr]\\${_ESPACO})?(?=[^1-9]*[1-9])"
    "(?:0*[0-9]{0,9}(?:[.,][0-9]{1,2})?"
    "|[0-9]{1,3}(?:\\.[0-9]{3}){2}|[0-9]{1,3}(?:,[0-9]{3}){2}"
    "|[0-9]{1,3}(?:\\.[0-9]{3}){1,2},[0-9]{1,2}|[0-9]{1,3}(?:,[0-9]{3}){1,2}\\.[0-9]{1,2})"
    f"{_ESPACO}$"
)
_PRECO_NA_ENTRADA = {
    "description": "Texto ou número, maior que zero e até 999999999.99. O texto como se "
    "digita: 1234.56, 1234,56, 1.234,56, 1,234.56, 12.5 ou R$ 12,50; valores ambíguos como "
    "1.234 são recusados. Um número JSON com até duas casas decimais (12.5) também é aceito, "
    "lido exatamente, nunca como ponto flutuante.",
    "anyOf": [
        {
            "type": "string",
            "pattern": _PRECO_DIGITADO,
            "maxLength": 40,
            "examples": ["1234.56", "R$ 12,50", "1.234,56"],
        },
        {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 999999999.99,
            "examples": [12.5, 39.9],
        },
    ],
}
_PRECO_NA_SAIDA = {"type": "string", "pattern": _PRECO_CANONICO, "examples": ["1234.56"]}


_Codigo = Annotated[str, Field(max_length=CODIGO_MAXIMO)]


class Produto(BaseModel):
    """A product. `id`, `versao` and the times are never read from input: storage gives them
    (the times in seconds since the epoch)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: Annotated[int | None, Field(exclude=True)] = None
    versao: Annotated[int | None, Field(exclude=True)] = None
    criado_em: Annotated[float | None, Field(exclude=True)] = None
    atualizado_em: Annotated[float | None, Field(exclude=True)] = None
    codigo: Annotated[_Codigo | None, BeforeValidator(_parse_codigo), WithJsonSchema(_CODIGO)] = (
        None
    )
    nome: Annotated[
        str,
        Field(min_length=1, max_length=_NOME_MAXIMO, json_schema_extra=_NOME),
        _text_field(uma_linha=True),
    ]
    descricao: Annotated[
        str,
        Field(max_length=_DESCRICAO_MAXIMO, json_schema_extra=_DESCRICAO),
        _text_field(uma_linha=False),
    ] = ""
    preco: Annotated[
        Decimal,
        BeforeValidator(_price_field),
        Field(gt=0, le=PRECO_MAXIMO, decimal_places=2, allow_inf_nan=False),
        AfterValidator(lambda preco: preco.quantize(CENTAVO)),
        WithJsonSchema(_PRECO_NA_ENTRADA, mode="validation"),
        WithJsonSchema(_PRECO_NA_SAIDA, mode="serialization"),
    ]


_ALL_FIELDS = frozenset(Produto.model_fields)
_new_produto = Produto.__new__
_set = object.__setattr__


def stored(
    id: int,
    versao: int,
    criado_em: float,
    atualizado_em: float,
    codigo: str | None,
    nome: str,
    descricao: str,
    preco: Decimal,
) -> Produto:
    """A product as storage reads it back: valid when it was written, so not validated again,
    and built as `model_construct` builds it but in a quarter of its time (0.6 µs against 2.5:
    a list page builds 51 of them, a sixth of its cost). tests/domain/test_produtos.py checks that
    the two make the same product."""
    produto = _new_produto(Produto)
    _set(
        produto,
        "__dict__",
        {
            "id": id,
            "versao": versao,
            "criado_em": criado_em,
            "atualizado_em": atualizado_em,
            "codigo": codigo,
            "nome": nome,
            "descricao": descricao,
            "preco": preco,
        },
    )
    _set(produto, "__pydantic_fields_set__", set(_ALL_FIELDS))
    _set(produto, "__pydantic_extra__", None)
    _set(produto, "__pydantic_private__", None)
    return produto


def every_value(produto: Produto) -> tuple[Any, ...]:
    """All a product is, stored fields and times: what keeps a page or a representation made of
    it (resources) from ever being shown for another version of it."""
    return (
        produto.id,
        produto.versao,
        produto.codigo,
        produto.nome,
        produto.descricao,
        produto.preco,
        produto.criado_em,
        produto.atualizado_em,
    )


def keeping_codigo(novo: Produto, atual: Produto) -> Produto:
    """A write that does not mention `codigo` (the spec's form, a client older than codes)
    keeps the stored one: only an explicit null or blank clears it."""
    if "codigo" in novo.model_fields_set:
        return novo
    return novo.model_copy(update={"codigo": atual.codigo})


JSON_OPTIONS = orjson.OPT_UTC_Z  # times as "…Z", as RFC 3339 writes UTC in every JSON we send


def representation(produto: Produto) -> dict[str, Any]:
    """The product as JSON clients see it: the price as an exact decimal string, the times in
    ISO 8601 (UTC)."""
    return {
        "id": produto.id,
        "codigo": produto.codigo,
        "nome": produto.nome,
        "descricao": produto.descricao,
        "preco": str(produto.preco),
        "versao": produto.versao,
        "criado_em": None if produto.criado_em is None else as_datetime(produto.criado_em),
        "atualizado_em": None
        if produto.atualizado_em is None
        else as_datetime(produto.atualizado_em),
    }


CAMPOS = ("codigo", "nome", "descricao", "preco")


def same_fields(a: Produto, b: Produto) -> bool:
    """Whether saving `b` over `a` would change nothing a person sees: then nothing is saved."""
    return all(getattr(a, c) == getattr(b, c) for c in CAMPOS)


# The fields as pages name them.
ROTULOS = {"codigo": "Código", "nome": "Nome", "descricao": "Descrição", "preco": "Preço"}


def samples(quantos: int) -> Iterator[Produto]:
    """Plausible sample products, the same every time, for demos and benchmarks."""
    # Each kind with its grammatical gender, so that colours agree: "Caderno branco".
    tipos = ("Caneca", "Caderno", "Lápis", "Mochila", "Garrafa", "Camiseta", "Boné", "Agenda")
    femininos = {"Caneca", "Mochila", "Garrafa", "Camiseta", "Agenda"}
    cores = (
        ("azul", "azul"),
        ("verde", "verde"),
        ("preto", "preta"),
        ("branco", "branca"),
        ("vermelho", "vermelha"),
        ("amarelo", "amarela"),
    )
    for n in range(1, quantos + 1):
        tipo = tipos[n % len(tipos)]
        cor = cores[n % len(cores)][tipo in femininos]
        yield Produto.model_construct(
            nome=f"{tipo} {cor} nº {n}",
            descricao=f"Produto de exemplo nº {n}.\nGerado por catalogo seed.",
            preco=Decimal(n * 7919 % 99_999 + 1).scaleb(-2),
        )


def validate(dados: dict[str, Any]) -> tuple[Produto | None, dict[str, str]]:
    """Check the fields, giving either a product or a pt-BR message for each bad field."""
    try:
        return Produto.model_validate({c: dados[c] for c in CAMPOS if c in dados}), {}
    except ValidationError as erro:
        return None, {str(e["loc"][0]): _message(e) for e in erro.errors()}


_MENSAGENS = {
    "missing": "Preencha este campo.",
    "string_too_short": "Preencha este campo.",
    "string_too_long": "Use no máximo {max_length} caracteres.",
    "too_long": "Use no máximo {max_length} caracteres.",
    "string_type": "Deve ser texto.",
    "greater_than": "O preço deve ser maior que zero.",
    "less_than_equal": "O preço máximo é R$ 999.999.999,99.",
    "decimal_max_places": "Use no máximo duas casas decimais.",
    "control_character": "Contém um caractere invisível não permitido (código {codigo}).",
    "line_break": "O nome fica numa linha só, e este tem uma quebra de linha (código {codigo}). "
    "Quebras de linha cabem na descrição.",
    "codigo_invisivel": "O código só tem caracteres invisíveis. Apague o campo e digite o "
    "código de novo, ou deixe-o vazio para ficar sem código.",
    "direction_control": "Contém um caractere invisível que muda a direção do texto "
    "(código {codigo}) e pode mostrar as letras fora de ordem. Apague o campo e digite o nome "
    "de novo.",
}


# Where the shop's code is refused for what a name is, the message speaks of the code.
_MENSAGENS_DO_CODIGO = {
    "line_break": "O código fica numa linha só, e este tem uma quebra de linha "
    "(caractere {codigo}).",
    "direction_control": "Contém um caractere invisível que muda a direção do texto "
    "(código {codigo}) e pode mostrar as letras fora de ordem. Apague o campo e digite o "
    "código de novo.",
}
_TIPOS_NOSSOS = {"preco_invalido"}


def _message(erro: Any) -> str:
    if erro["type"] in _TIPOS_NOSSOS:
        return str(erro["msg"])
    mensagens = _MENSAGENS_DO_CODIGO if erro["loc"][:1] == ("codigo",) else {}
    modelo = mensagens.get(erro["type"]) or _MENSAGENS.get(erro["type"], "Valor inválido.")
    return modelo.format(**erro.get("ctx", {}))


def _html_attributes() -> dict[str, dict[str, str]]:
    """Input attributes for each field, read off the model so browser and server agree."""
    atributos: dict[str, dict[str, str]] = {}
    for campo in CAMPOS:
        info = Produto.model_fields[campo]
        attrs = {"required": "required"} if info.is_required() else {}
        for regra in info.metadata:
            if getattr(regra, "max_length", None) is not None:
                attrs["maxlength"] = str(regra.max_length)
        if campo == "codigo":  # its length is its text's, inside `| None`
            attrs["maxlength"] = str(CODIGO_MAXIMO)
        atributos[campo] = attrs
    return atributos


ATRIBUTOS_HTML = _html_attributes()
