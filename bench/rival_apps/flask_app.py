"""The spec in Flask, as its tutorial writes an app: one module, Jinja templates, the standard
library's sqlite3 (store.py). Served by gunicorn, one sync worker (bench/rivals.py)."""

import os
from typing import Any

import store
from flask import Flask, Response, abort, jsonify, redirect, render_template, request

app = Flask(__name__)
database = store.Database(os.environ["RIVAL_DATABASE"])
EMPTY = dict.fromkeys(store.FIELDS, "")


def wants_json() -> bool:
    return request.accept_mimetypes.best_match(["text/html", "application/json"]) == (
        "application/json"
    )


@app.get("/produtos")
def lista() -> Any:
    produtos = store.first_page(database.connection)
    return jsonify(produtos) if wants_json() else render_template("lista.html", produtos=produtos)


@app.post("/produtos")
def criar() -> Any:
    as_json = request.is_json
    values = request.get_json() if as_json else request.form
    fields = store.fields_of(values, "" if as_json else "produto.")
    if problems := store.check(fields):
        if as_json:
            return jsonify(problems), 422
        return render_template("novo.html", produto=fields, problemas=problems), 422
    id = store.create(database.connection, fields)
    if as_json:
        return jsonify(store.one(database.connection, id)), 201, {"Location": f"/produtos/{id}"}
    return redirect(f"/produtos/{id}", 303)


@app.get("/produtos/novo")
def novo() -> str:
    return render_template("novo.html", produto=EMPTY, problemas={})


@app.get("/produtos/<int:id>")
def mostrar(id: int) -> Any:
    produto = store.one(database.connection, id) or abort(404)
    return (
        jsonify(produto)
        if wants_json()
        else render_template("editar.html", produto=produto, problemas={})
    )


@app.post("/produtos/<int:id>")
def sobrescrito(id: int) -> Any:
    """The spec's method override: `_method` = PUT or DELETE in a form."""
    method = request.form.get("_method", "").upper()
    if method == "PUT":
        return alterar(id)
    if method == "DELETE":
        return remover(id)
    abort(405)


@app.put("/produtos/<int:id>")
def alterar(id: int) -> Any:
    fields = store.fields_of(request.form)
    if problems := store.check(fields):
        return render_template("editar.html", produto={"id": id, **fields}, problemas=problems), 422
    if not store.update(database.connection, id, fields):
        abort(404)
    return redirect(f"/produtos/{id}", 303)


@app.delete("/produtos/<int:id>")
def remover(id: int) -> Response:
    if not store.delete(database.connection, id):
        abort(404)
    return redirect("/produtos", 303)
