"""The /docs page, read off the OpenAPI document: the same words and examples an integrator's
tools get from /openapi.json, laid out for a person, in pt-BR; who may call each operation as
the document for the mode the server is in says it.

Our own page rather than Swagger UI: its English labels, its random examples and its axe
violations could not be fixed from outside, and it needed inline script and a wider CSP. Each
operation shows its heading and summary, its details folded in a <details>; OPTIONS, which
every URI answers alike, is said once in its group instead of once per path. The page reads
whole without script; static/docs.js opens the operation an index link (or the address's
#fragment) names, and adds "Experimentar" to each JSON operation.
"""

import re
from dataclasses import dataclass
from typing import Any

import orjson
from markupsafe import Markup, escape

_WHERE = {"path": "no caminho", "query": "na consulta", "header": "no cabeçalho"}
_METHODS = ("get", "post", "put", "delete", "options")


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str  # OpenAPI's `in`: path, query or header
    required: bool
    description: Markup

    @property
    def where(self) -> str:
        return _WHERE[self.location]


@dataclass(frozen=True)
class Field:
    name: str
    required: bool
    rules: Markup


@dataclass(frozen=True)
class Operation:
    anchor: str
    method: str
    path: str
    summary: Markup
    description: Markup
    parameters: list[Parameter]
    fields: list[Field]
    request_example: str | None
    response_example: str | None
    responses: list[tuple[str, Markup]]
    access: str  # who may call it, from its security requirements
    sends_json: bool  # takes a JSON body (the "Experimentar" form offers one)
    tryable: bool  # answers JSON (or nothing): a page for people is not tried from here


@dataclass(frozen=True)
class Group:
    anchor: str
    name: str
    description: Markup
    operations: list[Operation]
    options: bool  # the group's tag has the OPTIONS operations: said once, in a sentence


def groups(document: dict[str, Any]) -> list[Group]:
    """The document's operations by tag (openapi.Document keeps them, once per mode)."""
    operations: dict[str, list[Operation]] = {tag["name"]: [] for tag in document["tags"]}
    options: set[str] = set()  # the tags of OPTIONS operations
    for path, item in document["paths"].items():
        shared = item.get("parameters", [])
        for method in _METHODS:
            if method in item:
                operation = item[method]
                if method == "options":
                    options.add(operation["tags"][0])
                    continue
                found = _operation(document, path, method, operation, shared)
                operations[operation["tags"][0]].append(found)
    return [
        Group(
            _anchor(tag["x-displayName"]),
            tag["x-displayName"],
            _text(tag["description"]),
            operations[tag["name"]],
            tag["name"] in options,
        )
        for tag in document["tags"]
    ]


def _operation(
    document: dict[str, Any],
    path: str,
    method: str,
    operation: dict[str, Any],
    shared: list[dict[str, Any]],
) -> Operation:
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    success: dict[str, Any] = next(
        (r for status, r in operation["responses"].items() if status.startswith("2")), {}
    )
    returned = success.get("content", {}).get("application/json", {})
    return Operation(
        anchor=operation.get("operationId") or f"{method}-{_anchor(path)}",
        method=method.upper(),
        path=path,
        summary=_text(operation["summary"]),
        description=_text(operation.get("description", "")),
        parameters=[
            p for raw in shared + operation.get("parameters", []) for p in _params(document, raw)
        ],
        fields=_fields(document, body.get("schema")),
        request_example=_json(body.get("example")),
        response_example=_json(returned.get("example")),
        responses=[(s, _text(r["description"])) for s, r in sorted(operation["responses"].items())],
        access=_access(operation.get("security", []), "401" in operation["responses"]),
        sends_json="schema" in body,
        tryable=_tryable(operation, set(success.get("content", {}))),
    )


def _tryable(operation: dict[str, Any], answers: set[str]) -> bool:
    """Whether /docs can try it: its answer is JSON (or empty), and a body it needs can be
    JSON (the page sends no files)."""
    body = operation.get("requestBody", {})
    return (not answers or "application/json" in answers) and (
        not body.get("required") or "application/json" in body["content"]
    )


def _access(security: list[dict[str, list[str]]], reads_credentials: bool) -> str:
    """The security requirements in a sentence: none (credentials read or not), a role, or
    any user."""
    if not security:
        if reads_credentials:
            return "Qualquer um; um token enviado precisa ser válido."
        return "Qualquer um, sem credenciais."
    roles = {role for requirement in security for role in requirement.get("bearer", [])}
    if not roles:
        return "Quem entrou, com qualquer papel (token ou sessão)."
    return f"Papel {' ou '.join(sorted(roles))} ou acima (token ou sessão)."


def _params(document: dict[str, Any], raw: dict[str, Any]) -> list[Parameter]:
    """A parameter, or each property of an exploded object parameter (the lists' cursors)."""
    where, required = raw["in"], raw.get("required", False)
    schema = _resolve(document, raw["schema"])
    properties = schema.get("properties")
    if schema.get("type") == "object" and properties:
        said = raw.get("description", "")
        return [
            Parameter(n, where, False, _text(s.get("description", said)))
            for n, s in properties.items()
        ]
    return [Parameter(raw["name"], where, required, _text(raw.get("description", "")))]


def _fields(document: dict[str, Any], schema: dict[str, Any] | None) -> list[Field]:
    if schema is None:
        return []
    schema = _resolve(document, schema)
    required = set(schema.get("required", ()))
    return [
        Field(name, name in required, _text(_rules(_resolve(document, rule))))
        for name, rule in schema.get("properties", {}).items()
    ]


def _rules(schema: dict[str, Any]) -> str:
    """A field's rules in words, from its JSON Schema."""
    if "description" in schema:
        return str(schema["description"])
    if schema.get("type") == "integer":
        return "Número inteiro positivo."
    return "Texto."


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        found: dict[str, Any] = document["components"]["schemas"][schema["$ref"].rpartition("/")[2]]
        return found
    return schema


def _json(example: Any) -> str | None:
    if example is None:
        return None
    return orjson.dumps(example, option=orjson.OPT_INDENT_2).decode()


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _text(text: str) -> Markup:
    """The document's text, escaped, with its `code` spans (CommonMark's backticks) kept."""
    escaped = str(escape(text))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))  # noqa: S704 - escaped above
