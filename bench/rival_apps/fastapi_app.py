"""The spec in FastAPI, as its documentation writes an app: Jinja templates, form fields
declared with `Form`, and plain `def` handlers, which FastAPI runs in its thread pool, because
the standard library's sqlite3 (store.py) blocks and the documentation asks for `def` around a
blocking library. Served by uvicorn with uvloop and httptools, one worker (bench/rivals.py)."""

import os
from pathlib import Path
from typing import Annotated, Any

import store
from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

app = FastAPI()
templates = Jinja2Templates(directory=Path(__file__).with_name("templates"))
database = store.Database(os.environ["RIVAL_DATABASE"])
EMPTY = dict.fromkeys(store.FIELDS, "")
Nome = Annotated[str, Form(alias="produto.nome")]
Descricao = Annotated[str, Form(alias="produto.descricao")]
Preco = Annotated[str, Form(alias="produto.preco")]


def wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


@app.get("/produtos")
def lista(request: Request) -> Response:
    produtos = store.first_page(database.connection)
    if wants_json(request):
        return JSONResponse(produtos)
    return templates.TemplateResponse(request, "lista.html", {"produtos": produtos})


def created(request: Request, fields: dict[str, str], as_json: bool) -> Response:
    """A product from a form (303 to its page) or a JSON object (201 with it)."""
    if problems := store.check(fields):
        if as_json:
            return JSONResponse(problems, 422)
        context = {"produto": fields, "problemas": problems}
        return templates.TemplateResponse(request, "novo.html", context, 422)
    id = store.create(database.connection, fields)
    if as_json:
        location = {"Location": f"/produtos/{id}"}
        return JSONResponse(store.one(database.connection, id), 201, location)
    return RedirectResponse(f"/produtos/{id}", 303)


@app.post("/produtos")
async def criar(request: Request) -> Response:
    """A form or a JSON object on the same URI: the body is read here, by its type, and the
    blocking part runs in the thread pool, as the documentation says to."""
    as_json = request.headers.get("content-type", "").startswith("application/json")
    values = await (request.json() if as_json else request.form())
    fields = store.fields_of(values, "" if as_json else "produto.")
    return await run_in_threadpool(created, request, fields, as_json)


@app.get("/produtos/novo")
def novo(request: Request) -> Response:
    return templates.TemplateResponse(request, "novo.html", {"produto": EMPTY, "problemas": {}})


@app.get("/produtos/{id}")
def mostrar(request: Request, id: int) -> Any:
    produto = store.one(database.connection, id)
    if produto is None:
        raise HTTPException(404)
    if wants_json(request):
        return produto
    context: dict[str, Any] = {"produto": produto, "problemas": {}}
    return templates.TemplateResponse(request, "editar.html", context)


@app.post("/produtos/{id}")
def sobrescrito(
    request: Request,
    id: int,
    method: Annotated[str, Form(alias="_method")],
    nome: Nome = "",
    descricao: Descricao = "",
    preco: Preco = "",
) -> Response:
    """The spec's method override: `_method` = PUT or DELETE in a form."""
    if method.upper() == "PUT":
        fields = {"nome": nome.strip(), "descricao": descricao.strip(), "preco": preco.strip()}
        if problems := store.check(fields):
            context = {"produto": {"id": id, **fields}, "problemas": problems}
            return templates.TemplateResponse(request, "editar.html", context, 422)
        if not store.update(database.connection, id, fields):
            raise HTTPException(404)
        return RedirectResponse(f"/produtos/{id}", 303)
    if method.upper() == "DELETE":
        if not store.delete(database.connection, id):
            raise HTTPException(404)
        return RedirectResponse("/produtos", 303)
    raise HTTPException(405)
