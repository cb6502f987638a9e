"""The product's URIs: the list and creation, the new-product form, one product, and the page
that asks before a removal.

These translate between HTTP and the product; what a browser is shown (the pages, the notice
after a write, the 303 back to the list) is http/pages/produto_pages.py's,
http/pages/list_pages.py's and http/pages/notices.py's. JSON clients get 201 + `Location`, 200 with
the product, or 204.

Versions (http/conditional.py): the edit page and the JSON product carry an ETag of the product's
version; a write with `If-Match` fails with 412 once the product has moved on, and a form or
JSON body that names the version it was based on (`produto.versao`, `versao`) fails with 409
and shows what is saved now. `Idempotency-Key` on creation makes a retry return the first
answer (services/idempotency.py).
"""

from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain.errors import (
    BadRequest,
    CodigoTaken,
    ListingError,
    QueryTimeout,
    TooManyRows,
)
from catalogo.domain.planilhas import CSV, XLSX, Format
from catalogo.domain.produtos import (
    CAMPOS,
    ID_MAXIMO,
    JSON_OPTIONS,
    Produto,
    parse_id,
    representation,
    validate,
)
from catalogo.http import conditional
from catalogo.http.access import Need
from catalogo.http.bodies import body_of, read_form, read_json
from catalogo.http.fast import Prepared, raw
from catalogo.http.identity import visitor
from catalogo.http.listing import RETURN_PARAMETER, Listing, parse_formato
from catalogo.http.negotiation import HTML, JSON, VARY, body_is_json, header
from catalogo.http.pages.list_pages import Found, list_page, typed
from catalogo.http.pages.notices import after_update, to_the_list
from catalogo.http.pages.produto_pages import (
    EMPTY_FORM,
    changes_between,
    conflict_page,
    edit_page,
    new_form_page,
    new_page,
    product_page,
    removal_refused_page,
)
from catalogo.http.problems import invalid_fields
from catalogo.http.resources import (
    Resource,
    autoria_of,
    conflict,
    etag,
    fresh,
    idempotency_key,
    json_response,
    link_header,
    negotiate,
    represented,
)
from catalogo.http.resources.exportacoes import export_response
from catalogo.http.shared import shared_of
from catalogo.services import produtos
from catalogo.services.produtos import MergeConflict
from catalogo.storage import VersionConflict
from catalogo.storage.paging import COUNT_CAP, COUNT_EXACT, Cursor

BAD_VERSION = "A versão (versao) deve ser um número inteiro positivo."
EDIT_CONFLICT = "Outra pessoa salvou este produto depois da versão em que você se baseou."


_LIST_MEDIA = (HTML, JSON, CSV, XLSX)
# What a list asks as a file: `formato` (for people) first, else its Accept (for programs).
_EXPORTS: dict[str, Format] = {"csv": "csv", "xlsx": "xlsx", CSV: "rfc4180", XLSX: "xlsx"}
# Pages that exist only to change the catalog: a person who may not is sent to sign in first,
# rather than after typing.
_FOR_WRITERS = {"GET": Need.WRITE, "HEAD": Need.WRITE}
_FORM_FIELDS = frozenset([*(f"produto.{field}" for field in (*CAMPOS, "versao")), RETURN_PARAMETER])


@dataclass(frozen=True)
class _Submitted:
    """What a write's body says: the fields, and for a form from our pages, the version it was
    opened with and the list page to return to."""

    fields: dict[str, Any]
    based_on: int | None = None
    listing: Listing = field(default_factory=Listing)


class ProdutosResource(Resource):
    """/produtos: the list (GET) and creation (POST)."""

    async def get(self, request: Request) -> Response:
        media = negotiate(request, _LIST_MEDIA)
        try:
            listing = Listing.parse(request.query_params)
            export = _EXPORTS.get(parse_formato(request.query_params) or media)
        except ListingError as malformed:
            if media != HTML:
                raise BadRequest(str(malformed)) from None
            return list_page(request, None, typed(request.query_params), malformed)
        if export is not None:
            try:
                return await export_response(request, listing, export)
            except (QueryTimeout, TooManyRows) as refused:
                return _unanswerable(request, media, refused)
        shared = shared_of(request)
        exact = media == JSON and _counts_asked(request)
        count = COUNT_EXACT if exact else (COUNT_CAP if media == HTML else None)
        cursor = Cursor(shared.settings.page_size, listing.after, listing.before)
        try:
            page = await shared.storage.find(listing.query, cursor, count, position=media == HTML)
        except QueryTimeout as stopped:
            return _unanswerable(request, media, stopped)
        neighbours = {
            rel: listing.at(cursor)
            for rel, cursor in (("prev", page.prev), ("next", page.next))
            if cursor
        }
        links = {rel: neighbour.url for rel, neighbour in neighbours.items()}
        headers = {"Cache-Control": "no-cache", **VARY, **link_header(links)}
        if media == HTML:
            return list_page(request, Found(listing, page, links), headers=headers)
        body: dict[str, Any] = {"produtos": [represented(p) for p in page.items]}
        if exact and page.total is not None:  # None: the count ran past the time budget
            body["total"] = page.total
            headers["Preference-Applied"] = "count=exact"
        body["links"] = links
        body["cursores"] = {rel: neighbour.cursor for rel, neighbour in neighbours.items()}
        return json_response(body, headers=headers)

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        submitted = await _submitted(request)
        produto, problems = validate(submitted.fields)
        if produto is None:
            return _refused_new(request, media, submitted, problems)

        def answer(created: Produto) -> Response:
            if media == HTML:
                # The first page of the list, where the new product shows up.
                return to_the_list(request, "adicionado", created, Listing())
            headers = {
                "Location": f"/produtos/{created.id}",
                **etag(request, created, JSON),
                **VARY,
            }
            body = orjson.dumps(representation(created), option=JSON_OPTIONS)
            return Prepared(201, raw(headers), body, JSON)

        key = idempotency_key(request)
        try:
            created = await produtos.create(
                shared_of(request).storage, produto, autoria_of(request, media), key, media
            )
        except CodigoTaken as taken:
            return _refused_new(request, media, submitted, _taken(taken), _restorable(taken))
        response = answer(created.produto)
        if created.replayed:
            response.headers["Idempotent-Replayed"] = "true"
        return response


class NovoProdutoResource(Resource):
    """/produtos/novo: the empty form, which posts to /produtos: only for those who may."""

    needs = _FOR_WRITERS

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        return new_form_page(request)


class ProdutoResource(Resource):
    """/produtos/{id}: the product (GET; HTML is its edit page), update (PUT), removal (DELETE)."""

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        produto = await shared_of(request).storage.get(id)
        conditional.check(request, produto)
        if produto is None:
            raise await produtos.missing(shared_of(request).storage, id)
        tag = etag(request, produto, media)["ETag"]
        if conditional.not_modified(request, tag):
            return Response(
                status_code=304, headers={"ETag": tag, "Cache-Control": "no-cache", **VARY}
            )
        if media == JSON:
            return fresh(orjson.dumps(representation(produto), option=JSON_OPTIONS), JSON, tag)
        return fresh(product_page(request, produto), HTML, tag)

    async def put(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        storage = shared_of(request).storage
        if conditional.has_preconditions(request):  # checked again by the write, in SQL
            conditional.check(request, await storage.get(id))
        submitted = await _submitted(request)
        produto, problems = validate(submitted.fields)
        if produto is None:
            return await _refused_edit(request, media, submitted, problems)
        expected = conditional.expected(request, submitted.based_on)
        try:
            updated = await produtos.update(
                storage, id, produto, expected, autoria_of(request, media), merging=media == HTML
            )
        except VersionConflict as failure:
            return conflict(request, EDIT_CONFLICT, failure.current)
        except MergeConflict as clash:
            return conflict_page(visitor(request), clash, submitted.listing)
        except CodigoTaken as taken:
            return await _refused_edit(request, media, submitted, _taken(taken), _restorable(taken))
        if media == HTML:
            return after_update(request, updated, submitted.listing)
        return json_response(
            representation(updated.produto),
            headers={**etag(request, updated.produto, JSON), **VARY},
        )

    async def delete(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        storage = shared_of(request).storage
        if conditional.has_preconditions(request):
            conditional.check(request, await storage.get(id))
        submitted = await _removal(request)
        expected = conditional.expected(request, submitted.based_on)
        try:
            removed = await produtos.remove(storage, id, expected, autoria_of(request, media))
        except VersionConflict as failure:
            if media == JSON or submitted.based_on is None:
                return conflict(request, EDIT_CONFLICT, failure.current)
            return await _removal_refused(request, failure.current, submitted)
        if media == HTML:
            return to_the_list(request, "removido", removed, submitted.listing)
        return Response(status_code=204, headers=VARY)


def _unanswerable(request: Request, media: str, refused: QueryTimeout | TooManyRows) -> Response:
    """422 for a list that can be read but not answered: past the time budget, or more rows
    than a spreadsheet holds. A person gets the search form again, with what they typed."""
    if isinstance(refused, QueryTimeout):
        problem = ListingError(refused.message, "q")
    else:
        problem = ListingError(refused.message)
    if media != HTML:
        raise HTTPException(422, str(problem))
    return list_page(request, None, typed(request.query_params), problem, status_code=422)


def _refused_new(
    request: Request,
    media: str,
    submitted: _Submitted,
    problems: dict[str, str],
    members: dict[str, str] | None = None,
) -> Response:
    """422: the fields named, and for a person the form again with what they typed."""
    if media == JSON:
        return invalid_fields(request, problems, **(members or {}))
    values = {**EMPTY_FORM, **submitted.fields}
    return new_page(visitor(request), submitted.listing, values, problems, 422)


async def _refused_edit(
    request: Request,
    media: str,
    submitted: _Submitted,
    problems: dict[str, str],
    members: dict[str, str] | None = None,
) -> Response:
    if media == JSON:
        return invalid_fields(request, problems, **(members or {}))
    values = {**EMPTY_FORM, **submitted.fields, "versao": submitted.based_on or ""}
    existing = await _existing(request)
    return edit_page(visitor(request), existing, values, problems, submitted.listing, 422)


def _taken(taken: CodigoTaken) -> dict[str, str]:
    return {"codigo": taken.message}


def _restorable(taken: CodigoTaken) -> dict[str, str]:
    """For a program, where the removed product that keeps the code comes back (a person is
    told "Removidos", in words)."""
    return {"restauracao": f"/produtos/{taken.holder}/restauracao"} if taken.removed else {}


def _counts_asked(request: Request) -> bool:
    """`Prefer: count=exact` (RFC 7240), as PostgREST asks for a JSON list's total."""
    return any(
        preference.strip().lower() == "count=exact"
        for header in request.headers.getlist("prefer")
        for preference in header.split(",")
    )


async def _removal_refused(request: Request, current: Produto, submitted: _Submitted) -> Response:
    """409 for a person's removal of a product that moved on since their page: what is saved
    now, with what changed since the version they saw."""
    assert current.id is not None and submitted.based_on is not None  # noqa: S101 - checked
    base, autores = await produtos.since(shared_of(request).storage, current.id, submitted.based_on)
    changes = changes_between(base, current)
    return removal_refused_page(visitor(request), current, changes, autores, submitted.listing)


async def _submitted(request: Request) -> _Submitted:
    """The product's fields and what else the body says, from JSON or a form.

    A `produto.id` (or JSON `id`) in the body is ignored on purpose: the id is the path's.
    """
    if body_is_json(request):
        data = await read_json(request, (*CAMPOS, "versao"))
        return _Submitted({c: data[c] for c in CAMPOS if c in data}, _version(data.get("versao")))
    form = await read_form(request, _FORM_FIELDS)
    return _Submitted(
        {c: form[f"produto.{c}"] for c in CAMPOS if f"produto.{c}" in form},
        _version(form.get("produto.versao") or None),
        Listing.returning_to(form),
    )


async def _removal(request: Request) -> _Submitted:
    """What a removal's body says, when it has one (a form, or JSON). Many clients send a
    Content-Type on every request: an empty body is no body, whatever it claims to be."""
    if header(request, b"content-type") is None or not await body_of(request):
        return _Submitted({})
    return await _submitted(request)


def _version(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= ID_MAXIMO:
        return value
    if isinstance(value, str) and (number := parse_id(value)) is not None:
        return number
    raise BadRequest(BAD_VERSION)


async def _existing(request: Request) -> Produto:
    id = request.path_params["id"]
    storage = shared_of(request).storage
    produto = await storage.get(id)
    if produto is None:
        raise await produtos.missing(storage, id, conditional.expected(request))
    return produto
