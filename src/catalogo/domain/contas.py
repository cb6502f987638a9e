"""Who may change the catalog: users and their roles, passwords, session and token secrets.

Pure; password hashing, which runs on threads, is domain/senhas.py's. HTTP (which cookie,
which header, which answer) is http/access.py's; the tables are storage's; signing in and
issuing tokens, services/'s.

Roles are ordered, each allowed what the one below it is: `leitor` reads (even under
CATALOGO_AUTH=all), `editor` also creates, updates and removes products, `admin` also manages
users and tokens.

Passwords are hashed with Argon2id, off the event loop (domain/senhas.py).

Sessions and tokens are random secrets the database keeps only as SHA-256 digests: a copy of
the database signs no one in. A token starts with `cat_` so that secret scanners find leaked
ones.
"""

import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass
from typing import Literal, NamedTuple, TypeVar, get_args

from catalogo.domain.errors import Forbidden, Invalid, NotFound, TooManyTries

T = TypeVar("T")

Papel = Literal["leitor", "editor", "admin"]
PAPEIS: tuple[Papel, ...] = get_args(Papel)
_RANKS = {papel: rank for rank, papel in enumerate(PAPEIS)}  # each allowed what those before it are
# A token may be an admin's, for automation (webhooks); it still never manages accounts: the
# account pages are for browsers (http/resources/contas.py).
TOKEN_PAPEIS: tuple[Papel, ...] = PAPEIS

NOME_MAXIMO = 64
EXPIRA_MAXIMO = 3650  # days a token may last
SENHA_MINIMA = 12
SENHA_MAXIMA = 1024  # a bound on what one sign-in may make the server hash
_NOME = re.compile(r"[a-z0-9][a-z0-9._@-]*", re.ASCII)

TOKEN_PREFIX = "cat_"  # noqa: S105 - what every token starts with, for secret scanners
_TOKEN = re.compile(r"cat_[A-Za-z0-9_-]{43}", re.ASCII)
_SESSION = re.compile(r"[A-Za-z0-9_-]{43}", re.ASCII)

# Sign-in throttling (storage counts the failures, `throttled` decides, in one atomic step).
FAILURE_WINDOW_S = 15 * 60
MAX_FAILURES_PAIR = 5  # one name from one address
MAX_FAILURES_ADDRESS = 30  # any names from one address
MAX_FAILURES_NAME = 50  # one name from every address it never signed in from
KNOWN_ADDRESS_DAYS = 90  # a success makes an address known to that name this long


def allows(papel: Papel, necessario: Papel) -> bool:
    """Whether `papel` is allowed what `necessario` is."""
    return _RANKS[papel] >= _RANKS[necessario]


def lesser(a: Papel, b: Papel) -> Papel:
    return a if PAPEIS.index(a) <= PAPEIS.index(b) else b


@dataclass(frozen=True)
class Usuario:
    id: int
    nome: str
    papel: Papel
    ativo: bool
    criado_em: float


@dataclass(frozen=True)
class UserChange:
    """What changes of a user (None: left as it is). A new password (not `same_password`, the
    same one hashed anew) or a deactivation ends the user's sessions, all but `keep_session`."""

    papel: Papel | None = None
    ativo: bool | None = None
    password_hash: str | None = None
    keep_session: int | None = None
    same_password: bool = False

    @property
    def ends_sessions(self) -> bool:
        return (self.password_hash is not None and not self.same_password) or self.ativo is False


class Principal(NamedTuple):
    """Who is asking: a user signed in through a session, or through one of their tokens. A
    token's role is the lesser of its own and its user's, as the user's is now. (A tuple: one
    is made on every signed-in request, in a third of a frozen dataclass's time.)"""

    usuario_id: int
    nome: str
    papel: Papel
    session_id: int | None = None
    token_id: int | None = None
    token: str | None = None  # the token's label, which history records

    @property
    def scope(self) -> str:
        """What an idempotency key is scoped to: the user, however they came in."""
        return f"u{self.usuario_id}"


@dataclass(frozen=True)
class Sessao:
    id: int
    criado_em: float
    expira_em: float
    address: str
    user_agent: str


class NewSession(NamedTuple):
    """A session as it is stored: its secret only as a hash (digest)."""

    usuario_id: int
    secret_hash: str
    criado_em: float
    expira_em: float
    address: str
    user_agent: str


class NewToken(NamedTuple):
    """A token as it is stored: its secret only as a hash (digest)."""

    usuario_id: int
    nome: str
    papel: Papel
    secret_hash: str
    criado_em: float
    expira_em: float | None


@dataclass(frozen=True)
class Token:
    id: int
    usuario: str
    nome: str
    papel: Papel
    criado_em: float
    expira_em: float | None
    usado_em: float | None
    revogado_em: float | None

    def state(self, now: float) -> str:
        """What the token is now, as the tokens page and `catalogo tokens listar` say it."""
        if self.revogado_em:
            return "revogado"
        if self.expira_em and self.expira_em <= now:
            return "expirado"
        return "ativo"


class ContaInvalida(Invalid, ValueError):
    """A name, password, role or token label we will not take; the message says why, and
    `campo` which field of the form it is about (None: the form as a whole)."""

    def __init__(self, message: str, campo: str | None = None) -> None:
        super().__init__(message)
        self.campo = campo


def parse_nome(texto: str) -> str:
    """A user's name as it is stored and compared: lowercase ASCII, so that "Maria" and
    "maria" are one user and no look-alike letter makes a second."""
    nome = texto.strip().lower()
    if not nome:
        raise ContaInvalida("Informe o nome do usuário.")
    if len(nome) > NOME_MAXIMO or not _NOME.fullmatch(nome):
        raise ContaInvalida(
            f"O nome do usuário tem de 1 a {NOME_MAXIMO} caracteres: letras sem acento, "
            "algarismos e . _ @ -, começando por letra ou algarismo."
        )
    return nome


def parse_papel(texto: str, permitidos: tuple[Papel, ...] = PAPEIS) -> Papel:
    for papel in permitidos:
        if texto == papel:
            return papel
    raise ContaInvalida(f"O papel deve ser {' ou '.join(permitidos)}.")


def parse_senha(texto: str) -> str:
    """A new password: its length is what is checked (NIST SP 800-63B), counted in characters
    once written the one Unicode way (NFC), the way it is hashed."""
    senha = unicodedata.normalize("NFC", texto)
    if len(senha) < SENHA_MINIMA:
        raise ContaInvalida(f"A senha deve ter pelo menos {SENHA_MINIMA} caracteres.")
    if len(senha) > SENHA_MAXIMA:
        raise ContaInvalida(f"A senha deve ter no máximo {SENHA_MAXIMA} caracteres.")
    return senha


def parse_token_nome(texto: str) -> str:
    rotulo = " ".join(texto.split())
    if not rotulo or len(rotulo) > 100 or not rotulo.isprintable():
        raise ContaInvalida(
            "Dê ao token um nome de 1 a 100 caracteres, que diga quem o usa.", "nome"
        )
    return rotulo


def token_papel(dono: Usuario, pedido: str | None) -> Papel:
    """A token's role: the one asked for, never more than its user's; by default editor, or
    less (an admin's token is admin only when asked for by name)."""
    if not dono.ativo:
        raise ContaInvalida(f"{dono.nome} está desativado: não pode receber tokens.", "usuario")
    papel = parse_papel(pedido, TOKEN_PAPEIS) if pedido else lesser(dono.papel, "editor")
    if not allows(dono.papel, papel):
        raise ContaInvalida(
            f"{dono.nome} é {dono.papel}: um token seu pode ser no máximo isso.", "papel"
        )
    return papel


def parse_dias(texto: str | None) -> int | None:
    """For how many days a token lasts: 1 to 3,650, or None (it never expires). Read digit by
    digit: int() of thousands of digits is an error of its own."""
    if not texto:
        return None
    if not (texto.isascii() and texto.isdigit() and len(texto) <= 4) or not (
        1 <= int(texto) <= EXPIRA_MAXIMO
    ):
        raise ContaInvalida(
            f"A validade é de 1 a {EXPIRA_MAXIMO} dias (ou vazia: nunca expira).", "expira"
        )
    return int(texto)


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_session_secret() -> str:
    return secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def is_token(value: str) -> bool:
    return _TOKEN.fullmatch(value) is not None


def is_session_secret(value: str) -> bool:
    return _SESSION.fullmatch(value) is not None


@dataclass(frozen=True)
class Failures:
    """Failed sign-ins within FAILURE_WINDOW_S, as storage counts them: of this name from this
    address since its last success there, from this address, of this name; whether the
    address is one this name signed in from lately, and when the oldest counted failure of
    each kind leaves the window. A try whose password is still being checked counts as failed."""

    pair: int
    address: int
    name: int
    known_address: bool
    pair_oldest: float | None
    address_oldest: float | None
    name_oldest: float | None


def throttled(failures: Failures, now: float) -> int | None:
    """Seconds to wait before trying again, or None: a sign-in may be tried.

    No limit locks anyone out for good: each counts failures of the last 15 minutes only, and
    the one that counts every address (against guessing from many) spares the addresses the
    user signed in from lately, so that a stranger's failures cannot keep them out."""
    waits = [
        oldest + FAILURE_WINDOW_S - now
        for count, limit, oldest, applies in (
            (failures.pair, MAX_FAILURES_PAIR, failures.pair_oldest, True),
            (failures.address, MAX_FAILURES_ADDRESS, failures.address_oldest, True),
            (failures.name, MAX_FAILURES_NAME, failures.name_oldest, not failures.known_address),
        )
        if applies and count >= limit and oldest is not None
    ]
    return max(1, int(max(waits)) + 1) if waits else None


# What accounts refuse (domain/errors.py's kinds).


class RoleTooLow(Forbidden):
    def __init__(self, papel: str, needed: str) -> None:
        super().__init__(f"Seu papel ({papel}) não permite esta ação: ela exige o papel {needed}.")


class NotForOneself(Forbidden):
    def __init__(self) -> None:
        super().__init__(
            "Você não pode mudar o próprio papel nem se desativar: peça a outro admin (ou use "
            "catalogo usuarios)."
        )


class SessionNeeded(Forbidden):
    def __init__(self) -> None:
        super().__init__(
            "As páginas da conta são para quem entrou em /entrar, não para tokens de API."
        )


class UnknownUser(NotFound):
    """No user has that name."""

    def __init__(self, nome: str) -> None:
        super().__init__(f"Não há usuário «{nome:.64}».")
        self.nome = nome


class UserExists(Invalid):
    """A user of that name exists already."""

    def __init__(self, nome: str) -> None:
        super().__init__(f"Já existe o usuário «{nome}».")
        self.nome = nome


class UnknownToken(NotFound):
    """No token has that number."""

    def __init__(self, id: int) -> None:
        super().__init__(f"Não há token com o número {id}.")


class UnknownSession(NotFound):
    """The user has no open session of that number."""

    def __init__(self) -> None:
        super().__init__("Você não tem uma sessão aberta com este número.")


PASSWORDS_DIFFER = "As senhas digitadas não são iguais."


class Throttled(TooManyTries):
    """Too many failed sign-ins lately: try again in `seconds`."""

    def __init__(self, seconds: int) -> None:
        self.seconds = self.retry_after = seconds
        minutes = max(1, round(seconds / 60))
        super().__init__(
            f"Muitas tentativas de entrada sem sucesso. Tente de novo em {minutes} "
            f"minuto{'s' if minutes > 1 else ''}."
        )


# A session's browser and system, by the marks their User-Agent carries, in the order that
# tells them apart (Edge and Opera also say Chrome; Chrome also says Safari).
_BROWSERS = (
    ("Edg/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
    ("Version/", "Safari"),
    ("curl/", "curl"),
    ("python-httpx/", "um programa em Python"),
    ("python-requests/", "um programa em Python"),
)
_SYSTEMS = (
    ("iPhone", "iPhone"),
    ("iPad", "iPad"),
    ("Android", "Android"),
    ("CrOS", "ChromeOS"),
    ("Windows", "Windows"),
    ("Mac OS X", "Mac"),
    ("Macintosh", "Mac"),
    ("Linux", "Linux"),
)


def device_said(user_agent: str | None) -> str:
    """A session's device as a person says it ("Chrome no Linux", "Safari no iPhone"), read
    from its User-Agent; "navegador desconhecido" when it names none we know."""
    agent = user_agent or ""
    browser = next((name for mark, name in _BROWSERS if mark in agent), None)
    system = next((name for mark, name in _SYSTEMS if mark in agent), None)
    if browser is None:
        return f"navegador desconhecido no {system}" if system else "navegador desconhecido"
    return f"{browser} no {system}" if system else browser
