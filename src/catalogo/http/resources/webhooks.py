"""/webhooks: admins' subscriptions of programs to the catalog's events (http/resources/webhooks.py,
services/webhooks.py), as a page and in JSON at the same URIs, with a session or a token of the
admin role.

A new subscription's secret is shown once: in the 201 to a program; to a browser, on the page
its 303 leads to, carried there in a cookie of a minute's life, HttpOnly, SameSite=Strict and
only for /webhooks (as /tokens does), so that reloading never makes a second one.
"""

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain.errors import BadRequest
from catalogo.domain.text import as_datetime
from catalogo.domain.webhooks import EVENTOS, SubscriptionRefused, Webhook, parse_desde
from catalogo.http import templating
from catalogo.http.access import Need
from catalogo.http.bodies import form_pairs, read_json
from catalogo.http.fast import write_cookie
from catalogo.http.identity import principal, visitor
from catalogo.http.negotiation import HTML, JSON, VARY, body_is_json
from catalogo.http.pages import notices
from catalogo.http.problems import problem_for
from catalogo.http.resources import Resource, json_response, negotiate
from catalogo.http.shared import shared_of
from catalogo.services.webhooks import replay, subscribe, subscription, unsubscribe

BAD_SUBSCRIPTION = 'O corpo deve ser {{"url": "https://…", "eventos": ["criado", …]}}.'
INVALID_SUBSCRIPTION = "O webhook não foi criado assim: `errors` diz o que há em cada campo."


_ADMIN = {method: Need.ADMIN for method in ("GET", "HEAD", "POST", "DELETE", "OPTIONS")}
_PRIVATE = {"Cache-Control": "no-store", **VARY}
JUST_MADE_COOKIE = "webhook_novo"
DELIVERIES_SHOWN = 50


def representation(webhook: Webhook, segredo: bool = False) -> dict[str, Any]:
    """What a program reads of a subscription; its secret only when it is made."""
    return {
        "id": webhook.id,
        "url": webhook.url,
        "eventos": list(webhook.eventos),
        "ativo": webhook.ativo,
        **({"segredo": webhook.segredo} if segredo else {}),
        "ultimo_evento": webhook.ultimo_evento,
        "falhas": webhook.falhas,
        "proxima_tentativa": as_datetime(webhook.proxima_em) if webhook.falhas else None,
        "ultimo_status": webhook.ultimo_status,
        "ultima_resposta": webhook.ultima_resposta,
        "ultima_tentativa": as_datetime(webhook.ultima_em) if webhook.ultima_em else None,
        "desativado_em": as_datetime(webhook.desativado_em) if webhook.desativado_em else None,
        "motivo": webhook.motivo,
        "criado_em": as_datetime(webhook.criado_em),
        "criado_por": webhook.criado_por,
    }


class WebhooksResource(Resource):
    """/webhooks: the subscriptions (GET) and a new one (POST)."""

    needs = _ADMIN

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        if media == JSON:
            found = await shared_of(request).storage.webhooks()
            body = {"webhooks": [representation(webhook) for webhook in found]}
            return json_response(body, headers=_PRIVATE)
        id, _, secret = request.cookies.get(JUST_MADE_COOKIE, "").partition(".")
        if not secret.startswith("whsec_"):
            return await _page(request)
        shown = await _page(request, novo=int(id) if id.isdigit() else None, segredo=secret)
        _just_made(shown, request, "", 0)
        return shown

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        if body_is_json(request):
            sent = await read_json(request)
            url, eventos = sent.get("url"), sent.get("eventos")
            if not isinstance(url, str) or not (
                isinstance(eventos, list) and all(isinstance(e, str) for e in eventos)
            ):
                raise BadRequest(BAD_SUBSCRIPTION)
        else:
            pairs = await form_pairs(request)
            url = next((value for name, value in pairs if name == "url"), "")
            eventos = [value for name, value in pairs if name == "eventos"]
        shared = shared_of(request)
        who = principal(request)
        try:
            made = await subscribe(
                shared.storage,
                url,
                eventos,
                who.nome if who else None,
                shared.settings.webhook_networks,
                shared.keyring,
            )
        except SubscriptionRefused as refused:
            if media == JSON:
                return _invalid(request, {refused.field: str(refused)})
            valores = {"url": url, "eventos": eventos}
            return await _page(request, erros={refused.field: str(refused)}, valores=valores)
        if media == JSON:
            location = {"Location": f"/webhooks/{made.id}"}
            return json_response(
                representation(made, segredo=True), 201, headers={**_PRIVATE, **location}
            )
        response = Response(status_code=303, headers={"Location": "/webhooks"})
        _just_made(response, request, f"{made.id}.{made.segredo}", 60)
        return response


class WebhookResource(Resource):
    """/webhooks/{id}: one subscription (GET: a page with its latest deliveries, or JSON), and
    its end (DELETE)."""

    needs = _ADMIN

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        found = await subscription(shared_of(request).storage, request.path_params["id"])
        if media == JSON:
            return json_response(representation(found), headers=_PRIVATE)
        return await _subscription_page(request, found)

    async def delete(self, request: Request) -> Response:
        media = negotiate(request)
        await unsubscribe(shared_of(request).storage, request.path_params["id"])
        if media == HTML:
            return notices.back_to_account_page(request, "/webhooks", "webhook-removido")
        return Response(status_code=204, headers=VARY)


class ReenvioResource(Resource):
    """/webhooks/{id}/reenvio: delivers again from a chosen event (`desde`), and switches a
    subscription that was off back on."""

    needs = _ADMIN

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        if body_is_json(request):
            desde = (await read_json(request, ("desde",))).get("desde")
        else:
            desde = next((v for n, v in await form_pairs(request) if n == "desde"), None)
        first = parse_desde(desde)
        if first is None:
            message = "Informe em `desde` o número do evento de onde reenviar (1 ou mais)."
            if media == JSON:
                return _invalid(request, {"desde": message})
            found = await subscription(shared_of(request).storage, request.path_params["id"])
            return await _subscription_page(request, found, {"desde": message}, desde or "")
        replayed = await replay(shared_of(request).storage, request.path_params["id"], first)
        if media == HTML:
            path = f"/webhooks/{replayed.id}"
            return notices.back_to_account_page(request, path, "webhook-reenviado")
        return json_response(representation(replayed), headers=_PRIVATE)


def _invalid(request: Request, by_field: dict[str, str]) -> Response:
    return problem_for(request, 422, INVALID_SUBSCRIPTION, VARY, errors=by_field)


def _just_made(response: Response, request: Request, value: str, lifetime: int) -> None:
    """`value`: the new subscription's id, a dot and its secret (base64: a cookie takes it)."""
    write_cookie(
        response,
        JUST_MADE_COOKIE,
        value,
        https=shared_of(request).access.over_https(request),
        max_age=lifetime,
        path="/webhooks",
        same_site="Strict",
    )


async def _subscription_page(
    request: Request, webhook: Webhook, erros: dict[str, str] | None = None, desde: str = ""
) -> Response:
    """A subscription's page: where its delivery stands, its latest attempts, resending from
    an event, and its removal (asked twice: a fold opened, then a button)."""
    storage = shared_of(request).storage
    aviso = None if erros else notices.account_notice(request)
    response = templating.load().render(
        "webhook.html",
        422 if erros else 200,
        _PRIVATE,
        quem=visitor(request),
        aviso=aviso,
        webhook=webhook,
        entregas=await storage.deliveries(webhook.id, DELIVERIES_SHOWN),
        erros=erros or {},
        desde=desde or str(webhook.ultimo_evento + 1),
    )
    return notices.shown(request, response, aviso)


async def _page(
    request: Request,
    erros: dict[str, str] | None = None,
    valores: dict[str, Any] | None = None,
    novo: int | None = None,
    segredo: str | None = None,
) -> Response:
    found = await shared_of(request).storage.webhooks()
    aviso = None if erros or segredo else notices.account_notice(request)
    response = templating.load().render(
        "webhooks.html",
        422 if erros else 200,
        _PRIVATE,
        quem=visitor(request),
        aviso=aviso,
        webhooks=found,
        eventos=EVENTOS,
        erros=erros or {},
        valores={"url": "", "eventos": list(EVENTOS), **(valores or {})},
        novo=next((webhook for webhook in found if webhook.id == novo), None),
        segredo=segredo,
        agora=time.time(),
    )
    return notices.shown(request, response, aviso)
