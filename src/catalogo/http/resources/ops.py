"""The URIs around the product: the front door, and health for load balancers. (The API
description and its page are http/openapi/served.py's.)"""

from starlette.requests import Request
from starlette.responses import Response

from catalogo.http.access import Need
from catalogo.http.resources import Resource, json_response
from catalogo.http.shared import shared_of
from catalogo.storage import migrations

_NO_STORE = {"Cache-Control": "no-store"}
_PUBLIC = {"GET": Need.PUBLIC, "HEAD": Need.PUBLIC, "OPTIONS": Need.PUBLIC}


class InicioResource(Resource):
    """/: the site has one resource, so its front door is the list."""

    async def get(self, request: Request) -> Response:
        return Response(status_code=302, headers={"Location": "/produtos"})


class HealthResource(Resource):
    """/healthz: the process is up and answering; it asks nothing of the database."""

    needs = _PUBLIC

    async def get(self, request: Request) -> Response:
        return json_response({"status": "ok"}, headers=_NO_STORE)


class ReadyResource(Resource):
    """/readyz: ready for traffic: the database answers and this code serves its schema (its
    own revision, or a newer one that lets it: migrations.serves)."""

    needs = _PUBLIC

    async def get(self, request: Request) -> Response:
        shared = shared_of(request)
        found = await shared.storage.schema()  # unreachable: StorageUnavailable, 503
        if not migrations.serves(found, shared.schema_head):
            raise migrations.SchemaOutdated(migrations.schema_refused(found, shared.schema_head))
        return json_response({"status": "ready", "schema": found.revision}, headers=_NO_STORE)
