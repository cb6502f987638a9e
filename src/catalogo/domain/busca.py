"""What a product is found by, and what a list asks for: pure, no I/O.

Search is blind to case and accents because both sides are folded in Python, one way: the
product when it is written (its `busca` column, and `nome_chave` for the order by name) and the
person's words when they ask. Both databases then compare the very same strings, so they answer
alike by construction; their indexes (SQLite FTS5 trigrams, PostgreSQL pg_trgm) only find the
candidates faster, never decide what matches (docs/search.md).
"""

import base64
import binascii
import hashlib
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, NamedTuple, get_args

import orjson

from catalogo.domain import text
from catalogo.domain.errors import BadRequest, ListingError
from catalogo.domain.precos import PrecoInvalido, parse_preco
from catalogo.domain.produtos import CODIGO_MAXIMO, Produto, parse_id

Ordem = Literal["-id", "id", "nome", "-nome", "preco", "-preco", "-atualizado_em", "atualizado_em"]
ORDENS: tuple[Ordem, ...] = get_args(Ordem)
# Between the folded name and description in `busca`: folding turns every line break into a
# space, so no word or phrase a person types can span the two.
SEPARATOR = "\n"
QUERY_MAXIMUM = 200  # characters of `q`: a product's name is at most 200 too
IDS_MAXIMUM = 100  # ids, and codes, a list may ask for at once
# Names are ordered by their first 200 folded characters, then by id: folding can make a name
# 18 times longer (U+FDFA), and the key travels in every link of a page ordered by name.
NAME_KEY_LENGTH = 200
TOKEN_MAXIMUM = 2000  # characters of a cursor token: a name key's 800 bytes, in base64, fit


class _Marks(dict[int, int | None]):
    """str.translate's table: nonspacing marks (the accents NFKD split off) to nothing, the
    rest to itself, learned one code point at a time (a table of all of Unicode costs a
    second at start-up)."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code)) == "Mn" else code
        self[code] = kept
        return kept


_MARKS = _Marks()


def fold(text: str) -> str:
    """`text` as search compares it: NFKD ("ﬁ" is "fi", "²" is "2"), casefolded ("ß" is "ss"),
    without nonspacing marks ("Pão" is "pao"), white space as single spaces."""
    if text.isascii():  # most text, at a tenth of the cost
        return " ".join(text.lower().split())
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return " ".join(decomposed.translate(_MARKS).split())


def searchable(nome: str, descricao: str) -> str:
    """What a product is found by: its folded name and description (the `busca` column)."""
    return fold(nome) + SEPARATOR + fold(descricao)


def name_key(nome: str) -> str:
    """What the order by name compares (the `nome_chave` column)."""
    return fold(nome)[:NAME_KEY_LENGTH]


def codigo_key(codigo: str) -> str:
    """What makes two codes one: blind to case ("can-az-300" is "CAN-AZ-300"), as storage keeps
    it (`codigo_chave`, unique) and the list's `codigo=` looks it up."""
    return unicodedata.normalize("NFC", codigo.casefold())


class Folded(NamedTuple):
    """A product's columns that storage writes for finding it."""

    nome_chave: str
    busca: str  # the name, the description and the code, folded
    codigo_chave: str | None


def folded(produto: "Produto") -> Folded:
    """A product's folded columns, as storage writes them (the name folded once for both the
    order and the search: every create and update pays for it)."""
    nome = fold(produto.nome)
    busca = nome + SEPARATOR + fold(produto.descricao)
    if produto.codigo is None:
        return Folded(nome[:NAME_KEY_LENGTH], busca, None)
    code = produto.codigo
    return Folded(nome[:NAME_KEY_LENGTH], busca + SEPARATOR + fold(code), codigo_key(code))


def terms(q: str) -> tuple[str, ...]:
    """The folded words and "quoted phrases" of a query, each of which must appear. A quote
    without its pair is an ordinary character, as in «monitor 24"»."""
    found: list[str] = []
    parts = q.split('"')
    if len(parts) % 2 == 0:  # an odd number of quotes: the last one is text
        parts[-2:] = [parts[-2] + '"' + parts[-1]]
    for index, part in enumerate(parts):
        if index % 2:
            found.append(fold(part))
        else:
            found.extend(fold(word) for word in part.split())
    return tuple(dict.fromkeys(term for term in found if term))


def trigrams(term: str) -> list[str]:
    """Trigrams that cover `term` without overlapping (its last one may): a product holding
    the term holds them all, so they find its candidates for FTS5 at a third of the phrase's
    cost; the term itself then decides. Empty below three characters, which trigrams cannot
    find."""
    if len(term) < 3:
        return []
    found = [term[start : start + 3] for start in range(0, len(term) - 2, 3)]
    if len(term) % 3:
        found.append(term[-3:])
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Query:
    """Which products a list shows and in which order: every term in nome, descricao or
    codigo, the price between the bounds (inclusive), among `ids` and among `codigos` (their
    codigo_key) when some are given. Removed products are never in it."""

    terms: tuple[str, ...] = ()
    preco_min: Decimal | None = None
    preco_max: Decimal | None = None
    ids: tuple[int, ...] = ()
    ordem: Ordem = "-id"
    codigos: tuple[str, ...] = ()

    @property
    def by_id(self) -> bool:
        return self.ordem in ("-id", "id")

    @property
    def filtered(self) -> bool:
        return (
            bool(self.terms or self.ids or self.codigos)
            or self.preco_min is not None
            or (self.preco_max is not None)
        )

    @property
    def fingerprint(self) -> str:
        """What a cursor for a non-id order is bound to: this query, not the page."""
        asked = [self.ordem, self.terms, str(self.preco_min), str(self.preco_max), self.ids]
        if self.codigos:  # so that cursors made before codes existed stay valid
            asked.append(self.codigos)
        canonical = orjson.dumps(asked)
        return hashlib.blake2b(canonical, digest_size=6).hexdigest()


class Position(NamedTuple):
    """Where a page starts or ends in its order: the order's key (the folded name, the price
    in cents, the moment of the last change as stored, or the id itself) and the id, which
    breaks ties."""

    key: int | str | float
    id: int


# `antes=fim`: before the end of a list, whatever its order: its last page. No product has id 0.
END = Position(0, 0)


Keyer = Callable[[int, str, int, float], Position]
_KEYERS: dict[str, Keyer] = {
    "nome": lambda id, nome_chave, centavos, atualizado_em: Position(nome_chave, id),
    "preco": lambda id, nome_chave, centavos, atualizado_em: Position(centavos, id),
    "atualizado_em": lambda id, nome_chave, centavos, atualizado_em: Position(atualizado_em, id),
    "id": lambda id, nome_chave, centavos, atualizado_em: Position(id, id),
}


def keyer(query: Query) -> Keyer:
    """Where a product stands in `query`'s order, from its id, folded name, cents and time of
    change: chosen once for a page's rows, not for each."""
    return _KEYERS[query.ordem.lstrip("-")]


class BadToken(BadRequest, ValueError):
    """A cursor that is not one of ours, or was made for another query."""


def token(query: Query, position: Position) -> str:
    """An opaque cursor for a non-id order, bound to its query."""
    payload = orjson.dumps([query.fingerprint, position.key, position.id])
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def position_of(query: Query, text: str) -> Position:
    """The position a `token` names, or BadToken."""
    if len(text) > TOKEN_MAXIMUM:
        raise BadToken("longo demais")
    try:
        payload = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, binascii.Error):  # orjson.JSONDecodeError is a ValueError
        raise BadToken("malformado") from None
    if not (isinstance(payload, list) and len(payload) == 3):
        raise BadToken("malformado")
    fingerprint, key, id = payload
    if fingerprint != query.fingerprint:
        raise BadToken("de outra busca")
    column = query.ordem.lstrip("-")
    if not (isinstance(id, int) and 1 <= id < 2**63) or isinstance(key, bool):
        raise BadToken("malformado")
    if column == "atualizado_em":  # a moment as stored: a float, or an int orjson wrote so
        if not isinstance(key, int | float) or not 0 <= key < 2**53:
            raise BadToken("malformado")
        return Position(float(key), id)
    if not isinstance(key, str if column == "nome" else int) or (
        isinstance(key, int) and not 0 <= key < 2**63
    ):
        raise BadToken("malformado")
    if isinstance(key, str) and "\x00" in key:  # no name holds one, and PostgreSQL refuses it
        raise BadToken("malformado")
    return Position(key, id)


# The list's parameters, as a URL, a batch's search or the CLI's options give them.
LAST_PAGE = "fim"  # antes=fim: the list's last page, in any order
BAD_CURSOR = "O parâmetro «{}» deve ser o número de um produto."
FOREIGN_CURSOR = (
    "O parâmetro «{}» não é um cursor desta lista ({}): siga os links da página, ou volte à "
    "primeira."
)
BOTH_CURSORS = "Use «antes» ou «depois», não os dois."
_PRICE_NAMES = {"preco_min": "O preço mínimo", "preco_max": "O preço máximo"}


class Asked(NamedTuple):
    """A list as its parameters ask for it: the query, where the page starts (after or before
    a position), and `q` as typed, its spaces folded."""

    query: Query
    after: Position | None
    before: Position | None
    q: str


def parse_pairs(pairs: Sequence[tuple[str, str]]) -> Asked:
    """`parse_list` of a query string's pairs, read as a URL's are (a name's last value)."""
    ids = [value for name, value in pairs if name == "id"]
    return parse_list(dict(pairs), ids, [value for name, value in pairs if name == "codigo"])


def parse_list(parameters: Mapping[str, str], ids: Sequence[str], codigos: Sequence[str]) -> Asked:
    """The list `parameters` ask for (a name's last value; `ids` and `codigos`, every `id` and
    `codigo` given), or a ListingError that names what is accepted."""
    q = parameters.get("q", "")
    if len(q) > QUERY_MAXIMUM:
        raise ListingError(f"A busca (q) pode ter no máximo {QUERY_MAXIMUM} caracteres.", "q")
    try:
        text.read(q, one_line=False)  # what no product can hold, a database may refuse
    except text.RefusedCharacter as refused:
        raise ListingError(
            f"A busca (q) não pode conter o caractere de controle {refused.code}.", "q"
        ) from None
    ordem = parameters.get("ordem") or "-id"
    if ordem not in ORDENS:
        raise ListingError(f"ordem deve ser {', '.join(ORDENS)} (recebido «{ordem:.50}»).")
    preco_min, preco_max = _price(parameters, "preco_min"), _price(parameters, "preco_max")
    if preco_min is not None and preco_max is not None and preco_min > preco_max:
        raise ListingError(
            "O preço mínimo (preco_min) é maior que o máximo (preco_max).", "preco_min"
        )
    query = Query(terms(q), preco_min, preco_max, _ids(ids), ordem, _codigos(codigos))
    after = _cursor(parameters, "depois", query)
    before = _cursor(parameters, "antes", query)
    if after is not None and before is not None:
        raise ListingError(BOTH_CURSORS)
    return Asked(query, after, before, " ".join(q.split()))


def _price(parameters: Mapping[str, str], name: str) -> Decimal | None:
    value = parameters.get(name, "")
    if not value.strip():
        return None
    try:
        return parse_preco(value)
    except PrecoInvalido as invalid:
        raise ListingError(f"{_PRICE_NAMES[name]} ({name}): {invalid}", name) from None


def _ids(values: Sequence[str]) -> tuple[int, ...]:
    if len(values) > IDS_MAXIMUM:
        raise ListingError(f"Peça no máximo {IDS_MAXIMUM} produtos (id) de uma vez.")
    ids = []
    for value in values:
        id = parse_id(value)
        if id is None:
            raise ListingError(f"Cada id deve ser o número de um produto (recebido «{value:.50}»).")
        ids.append(id)
    return tuple(dict.fromkeys(ids))


def _codigos(values: Sequence[str]) -> tuple[str, ...]:
    """The codes asked for (`codigo=`, exact and blind to case), as codigo_key makes them."""
    if len(values) > IDS_MAXIMUM:
        raise ListingError(f"Peça no máximo {IDS_MAXIMUM} códigos (codigo) de uma vez.")
    keys = []
    for value in values:
        try:
            codigo = text.read(value, one_line=True)
        except text.RefusedCharacter as refused:
            raise ListingError(
                f"Um código (codigo) não pode conter o caractere {refused.code}."
            ) from None
        if not codigo or len(codigo) > CODIGO_MAXIMO:
            raise ListingError(
                f"Cada código (codigo) tem de 1 a {CODIGO_MAXIMO} caracteres "
                f"(recebido «{value:.70}»)."
            )
        keys.append(codigo_key(codigo))
    return tuple(dict.fromkeys(keys))


def _cursor(parameters: Mapping[str, str], name: str, query: Query) -> Position | None:
    value = parameters.get(name)
    if value is None:
        return None
    if name == "antes" and value == LAST_PAGE:
        return END
    if query.by_id:
        id = parse_id(value)
        if id is None:
            raise ListingError(BAD_CURSOR.format(name))
        return Position(id, id)
    try:
        return position_of(query, value)
    except BadToken as bad:
        raise ListingError(FOREIGN_CURSOR.format(name, bad)) from None
