"""The URIs of a product's history: bringing a removed product back (`/produtos/{id}/
restauracao`). Storage keeps the events (historia.py); these translate them to HTTP."""

from starlette.requests import Request
from starlette.responses import Response

from catalogo import errors, historia
from catalogo.accesslog import request_id
from catalogo.bodies import read_form
from catalogo.identity import principal
from catalogo.listing import RETURN_PARAMETER, Listing
from catalogo.negotiation import HTML, JSON, body_is_json
from catalogo.produtos import representacao
from catalogo.resources import VARY, Resource, conflict, json_response, negotiate, services
from catalogo.resources.produtos import etag, to_the_list
from catalogo.storage import NotFound, NotRemoved


class RestauracaoResource(Resource):
    """/produtos/{id}/restauracao: a removed product comes back with its id and a new version.
    A browser returns to the list it came from (`lista`), with a notice; JSON gets the product."""

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        listing = Listing()
        if await request.body() and not body_is_json(request):
            listing = Listing.returning_to(await read_form(request, (RETURN_PARAMETER,)))
        autoria = historia.autoria(
            principal(request), "web" if media == HTML else "api", request_id(request)
        )
        try:
            restored = await services(request).storage.restore(id, autoria)
        except NotFound:
            raise errors.product_not_found(id) from None
        except NotRemoved as failure:
            if media == JSON:
                return conflict(request, errors.NOT_REMOVED, failure.current)
            raise errors.not_removed(failure.current.nome) from None
        if media == HTML:
            return to_the_list(request, "restaurado", restored, listing)
        return json_response(representacao(restored), headers={**etag(restored, JSON), **VARY})
