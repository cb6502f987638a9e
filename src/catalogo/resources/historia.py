"""The URIs of a product's history: bringing a removed product back (`/produtos/{id}/
restauracao`). Storage keeps the events (historia.py); these translate them to HTTP."""

from starlette.requests import Request
from starlette.responses import Response

from catalogo import errors
from catalogo.bodies import read_form, read_json
from catalogo.listing import RETURN_PARAMETER, Listing
from catalogo.negotiation import HTML, JSON, body_is_json
from catalogo.produtos import representacao
from catalogo.resources import (
    VARY,
    Resource,
    autoria_of,
    conflict,
    etag,
    json_response,
    negotiate,
    services,
)
from catalogo.resources.produto_pages import to_the_list
from catalogo.storage import NotFound, NotRemoved


class RestauracaoResource(Resource):
    """/produtos/{id}/restauracao: a removed product comes back with its id and a new version.
    A browser returns to the list it came from (`lista`), with a notice; JSON gets the product."""

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        listing = Listing()
        if await request.body():  # a body is optional; one that is sent must be well formed
            if body_is_json(request):
                await read_json(request)  # nothing in it is read
            else:
                listing = Listing.returning_to(await read_form(request, (RETURN_PARAMETER,)))
        try:
            restored = await services(request).storage.restore(id, autoria_of(request, media))
        except NotFound:
            raise errors.product_not_found(id) from None
        except NotRemoved as failure:
            if media == JSON:
                return conflict(request, errors.NOT_REMOVED, failure.current)
            raise errors.not_removed(failure.current.nome) from None
        if media == HTML:
            return to_the_list(request, "restaurado", restored, listing)
        return json_response(representacao(restored), headers={**etag(restored, JSON), **VARY})
