"""What the handlers share, made once when the app starts (http/app.py's lifespan), and how
a handler, a page or the API description's resources find it."""

from dataclasses import dataclass

from starlette.requests import Request

from catalogo.domain.keyring import Keyring
from catalogo.domain.senhas import Passwords
from catalogo.http.access import Access
from catalogo.runtime.settings import Settings
from catalogo.storage import Storage


@dataclass(frozen=True)
class Shared:
    settings: Settings
    storage: Storage
    schema_head: str
    access: Access
    passwords: Passwords
    keyring: Keyring  # seals webhook secrets at rest


def shared_of(request: Request) -> Shared:
    shared: Shared = request.app.shared
    return shared
