"""What one request costs in instructions, as valgrind counts them: the same count run after run,
whatever else the machine is doing, where timings on a shared machine move by 10-20%.

    .venv/bin/python bench/instructions.py edit signed update create
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/instructions.py signed   # another revision

Each kind runs in-process (the ASGI app, no sockets) on a copy of one catalog of 2,000 products
with an editor signed in, access log off: `edit` the edit page anonymously and `signed` with the
session, both at random among 200 products (kept pages, after a warm-up), `cold` the edit page
of a product not shown before each time (the page made, as most are at 1,000,000), `list` the
list's first page anonymously, `json` the JSON
product anonymously and `token` with the editor's token; `update` and `create` the edit and
new forms' posts with the session, and `jcreate` a JSON create with the token, 32 at a time,
so that the writer commits them together as it does under load. The program runs twice under
`valgrind --tool=cachegrind`, with a few and with many requests, and the difference is divided
by theirs: what is left is a request's, every thread's instructions included (the writer's
too), start-up and warm-up not.
PYTHONHASHSEED is fixed, so that dicts and sets lay out alike in both runs. Instructions are not
time: a system call counts as one, and a page SQLite zeroes or copies with `rep stosb` counts
per byte; compare a kind with itself across revisions, not kinds with each other.
"""

import argparse
import asyncio
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import PASSWORD, USER, seeded, with_a_user
from profiling import scope
from revision import CATALOGO, Settings, create_app

KINDS = ("list", "cold", "edit", "signed", "update", "create", "json", "token", "jcreate")
PRODUCTS, HOT, TOGETHER = 2_000, 200, 32
FEW, MANY, WARM_UP = 100, 1_100, 600
FORM = b"application/x-www-form-urlencoded"
JSON = b"application/json"


async def drive(catalog: Path, kind: str, requests: int, token: str) -> None:
    env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{catalog}"}
    app = create_app(Settings.from_env({**env, "CATALOGO_ACCESS_LOG": "off"}))
    async with app.router.lifespan_context(app):
        cookie = await _signed_in(app)
        sent = 0

        async def one(id: int) -> None:
            nonlocal sent
            sent += 1
            body, wanted = b"", 303
            if kind == "list":
                asked, wanted = scope("GET", "/produtos"), 200
            elif kind in ("edit", "signed", "cold"):
                asked, wanted = scope("GET", f"/produtos/{id}"), 200
            elif kind in ("json", "token"):
                asked, wanted = scope("GET", f"/produtos/{id}", accept=JSON), 200
            elif kind == "jcreate":
                asked, wanted = scope("POST", "/produtos", accept=JSON), 201
                body = b'{"nome": "Caneca %d", "preco": "31.50"}' % sent
            elif kind == "update":
                asked = scope("POST", f"/produtos/{id}")
                body = b"_method=PUT&produto.nome=Caneca+editada+%d&produto.preco=31%%2C50" % sent
            else:
                asked = scope("POST", "/produtos")
                body = b"produto.nome=Caneca+%d&produto.descricao=&produto.preco=31%%2C50" % sent
            if body:
                asked["headers"] += [
                    (b"content-type", JSON if kind == "jcreate" else FORM),
                    (b"content-length", b"%d" % len(body)),
                ]
            if kind in ("token", "jcreate"):
                asked["headers"].append((b"authorization", b"Bearer " + token.encode()))
            elif kind not in ("edit", "json", "cold", "list"):
                asked["headers"].append((b"cookie", cookie))
            status = (await _call(app, asked, body))["status"]
            if status != wanted:
                sys.exit(f"instructions: {kind} answered {status}, not {wanted}")

        if kind == "cold":  # every request a product not shown yet: the page is made
            for id in random.sample(range(1, PRODUCTS + 1), requests):
                await one(id)
            return
        if kind in ("list", "edit", "signed", "json", "token"):
            for id in [random.randint(1, HOT) for _ in range(requests)]:
                await one(id)
            return
        ids = [random.randint(1, PRODUCTS) for _ in range(requests)]
        for start in range(0, len(ids), TOGETHER):
            await asyncio.gather(*(one(id) for id in ids[start : start + TOGETHER]))


async def _call(app: Any, asked: dict[str, Any], body: bytes) -> dict[str, Any]:
    """The answer's start (its status and headers)."""
    answered: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered.update(message)

    await app(asked, receive, send)
    return answered


async def _signed_in(app: Any) -> bytes:
    body = f"nome={USER}&senha={PASSWORD.replace(' ', '+')}".encode()
    asked = scope("POST", "/entrar")
    asked["headers"] += [
        (b"content-type", FORM),
        (b"content-length", b"%d" % len(body)),
        (b"origin", b"http://127.0.0.1:8000"),
    ]
    answered = await _call(app, asked, body)
    cookies = [v for k, v in answered["headers"] if k == b"set-cookie"]
    if answered["status"] != 303 or not cookies:
        sys.exit(f"instructions: signing in answered {answered['status']}")
    return bytes(cookies[0].split(b";")[0])


def counted(seeded: Path, token: str, kind: str, requests: int) -> int:
    """The instructions of one run of `requests` of `kind` (after the warm-up), on a copy of
    the seeded catalog."""
    with tempfile.TemporaryDirectory(prefix="catalogo-instructions-") as folder:
        catalog = Path(folder) / "catalogo.db"
        shutil.copy(seeded, catalog)
        done = subprocess.run(
            [
                "valgrind",
                "--tool=cachegrind",
                "--cache-sim=no",
                "--cachegrind-out-file=/dev/null",
                sys.executable,
                __file__,
                "--run",
                kind,
                str(WARM_UP + requests),
                str(catalog),
                token,
            ],
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        sys.exit(f"instructions: valgrind counted nothing:\n{done.stderr[-2000:]}")
    return int(found[1].replace(",", ""))


def seed(folder: Path) -> tuple[Path, str]:
    """A catalog of PRODUCTS products and one editor, by the code under test, and a token of
    theirs (bench/run's user)."""
    catalog = folder / "seeded.db"
    token = with_a_user(seeded(f"sqlite:///{catalog}", PRODUCTS, CATALOGO), CATALOGO)
    if token is None:
        sys.exit("instructions: this revision has no accounts")
    return catalog, token


def main() -> None:
    if sys.argv[1:2] == ["--run"]:  # the program valgrind runs
        kind, requests, catalog, token = (
            sys.argv[2],
            int(sys.argv[3]),
            Path(sys.argv[4]),
            sys.argv[5],
        )
        random.seed(7)
        asyncio.run(drive(catalog, kind, requests, token))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="+", choices=KINDS)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("instructions: needs valgrind (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="catalogo-instructions-") as folder:
        seeded, token = seed(Path(folder))
        for kind in args.kinds:
            few, many = counted(seeded, token, kind, FEW), counted(seeded, token, kind, MANY)
            print(f"{kind:8} {(many - few) / (MANY - FEW):12,.0f} instructions a request")


if __name__ == "__main__":
    main()
