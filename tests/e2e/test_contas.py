"""Accounts in Chromium at both sizes: signing in and out, a write refused until one signs in,
a reader's read-only pages, and an admin's tokens, each page state checked by axe-core.

A server of its own, with users, beside the suite's fresh one (which stays the spec's open
catalog)."""

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Look, unique
from tests.helpers import SENHA
from tests.processes import catalogo, start_serving, stop


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder: Path = tmp_path_factory.mktemp("e2e-contas")
    return f"sqlite:///{folder / 'catalogo.db'}"


@pytest.fixture(scope="module")
def staffed(database: str) -> Iterator[str]:
    """`catalogo serve` on a catalog with an admin (maria) and a reader (ana)."""
    assert catalogo(database, "seed", "3").returncode == 0
    for nome, papel in (("maria", "admin"), ("ana", "leitor")):
        made = catalogo(
            database, "usuarios", "criar", nome, "--papel", papel, "--senha-stdin", input=SENHA
        )
        assert made.returncode == 0, made.stderr
    base, process = start_serving(
        database, Path(database.removeprefix("sqlite:///")).with_suffix(".log")
    )
    yield base
    stop(process)


def sign_in(page: Page, nome: str) -> None:
    page.get_by_label("Nome de usuário").fill(nome)
    page.get_by_label("Senha").fill(SENHA)
    page.get_by_role("button", name="Entrar").click()


def test_signing_in_from_the_header_and_out_again(page: Page, staffed: str, look: Look) -> None:
    page.goto(f"{staffed}/produtos")
    look(page, "anonymous")
    page.get_by_role("link", name="Entrar").click()
    page.get_by_label("Nome de usuário").fill("maria")
    page.get_by_label("Senha").fill("não é esta")
    page.get_by_role("button", name="Entrar").click()
    expect(page.get_by_role("alert")).to_have_text("Nome ou senha incorretos.")
    look(page, "wrong-password")
    sign_in(page, "maria")
    expect(page).to_have_url(f"{staffed}/produtos")
    expect(page.get_by_role("link", name="maria (admin)")).to_be_visible()
    look(page, "signed-in")
    page.get_by_role("button", name="Sair").click()
    expect(page).to_have_url(f"{staffed}/entrar")
    page.goto(f"{staffed}/produtos")
    expect(page.get_by_role("link", name="Entrar")).to_be_visible()


def test_a_write_is_refused_until_one_signs_in_and_then_picks_up_where_it_was(
    page: Page, staffed: str, look: Look
) -> None:
    page.goto(f"{staffed}/produtos")
    expect(page.get_by_role("link", name="Novo produto")).to_have_count(0)
    page.goto(f"{staffed}/produtos/novo")
    expect(page).to_have_url(f"{staffed}/entrar?proximo=%2Fprodutos%2Fnovo")
    look(page, "sent-to-sign-in")
    sign_in(page, "maria")
    expect(page).to_have_url(f"{staffed}/produtos/novo")
    nome = unique("Caderno")
    page.get_by_label("Nome").fill(nome)
    page.get_by_label("Preço").fill("12,50")
    page.get_by_role("button", name="Adicionar").click()
    expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» adicionado.")


def test_a_reader_sees_every_page_and_no_button_that_would_be_refused(
    page: Page, staffed: str, look: Look
) -> None:
    page.goto(f"{staffed}/entrar")
    sign_in(page, "ana")
    expect(page.get_by_role("link", name="ana (leitor)")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("Remover"))).to_have_count(0)
    expect(page.get_by_role("link", name="Novo produto")).to_have_count(0)
    look(page, "reader-list")
    page.get_by_role("link", name="Caderno verde nº 1").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Produto «Caderno verde nº 1»")
    expect(page.get_by_label("Nome")).to_have_attribute("readonly", "")
    expect(page.get_by_role("button", name="Salvar")).to_have_count(0)
    look(page, "reader-product")
    page.goto(f"{staffed}/produtos/999")
    expect(page.get_by_role("heading", name="Produto não encontrado")).to_be_visible()
    expect(page.get_by_role("link", name="ana (leitor)")).to_be_visible()
    look(page, "reader-not-found")


def test_an_admin_sees_the_account_pages_makes_a_token_sees_it_once_and_revokes_it(
    page: Page, staffed: str, look: Look
) -> None:
    page.goto(f"{staffed}/entrar")
    sign_in(page, "maria")
    page.get_by_role("link", name="maria (admin)").click()
    expect(page.get_by_role("heading", name="Sua conta")).to_be_visible()
    look(page, "account")
    page.get_by_role("link", name="Usuários").click()
    expect(page.get_by_role("region", name="Usuários")).to_contain_text("ana")
    look(page, "users")
    page.get_by_role("link", name="Tokens").click()
    rotulo = unique("ERP")
    page.get_by_label("Nome").fill(rotulo)
    page.get_by_label("Usuário", exact=True).select_option("ana")
    page.get_by_label("Papel").select_option("leitor")
    page.get_by_label("Expira em").fill("30")
    page.get_by_role("button", name="Criar token").click()
    shown = page.locator("code.token")
    expect(shown).to_have_text(re.compile(r"cat_[A-Za-z0-9_-]{43}"))
    look(page, "token-shown")
    secret = shown.inner_text()
    page.goto(f"{staffed}/tokens")
    expect(page.get_by_text(secret)).to_have_count(0)
    page.get_by_role("button", name=f"Revogar {rotulo}").click()
    expect(page.get_by_role("status")).to_have_text(
        "Token revogado: ele parou de valer agora mesmo."
    )
    look(page, "token-revoked")
    answer = page.request.get(
        f"{staffed}/produtos",
        headers={"authorization": f"Bearer {secret}", "accept": "application/json"},
    )
    assert answer.status == 401


def test_an_admin_subscribes_a_webhook_sees_its_secret_once_and_removes_it(
    page: Page, staffed: str, look: Look
) -> None:
    page.goto(f"{staffed}/entrar")
    sign_in(page, "maria")
    page.get_by_role("link", name="Webhooks").click()
    page.get_by_label("URL").fill("http://169.254.169.254/latest/meta-data")
    page.get_by_role("button", name="Criar webhook").click()
    expect(page.get_by_role("alert")).to_contain_text("link-local")
    expect(page.get_by_label("URL")).to_have_value("http://169.254.169.254/latest/meta-data")
    look(page, "webhook-refused")
    url = f"http://93.184.215.14/{unique('erp').replace(' ', '-')}"  # public; no event follows
    page.get_by_label("URL").fill(url)
    page.get_by_label("restaurado").uncheck()
    page.get_by_role("button", name="Criar webhook").click()
    shown = page.locator("code.token")
    expect(shown).to_have_text(re.compile(r"whsec_[A-Za-z0-9+/]+=*"))
    look(page, "webhook-shown")
    secret = shown.inner_text()
    page.reload()
    expect(page.get_by_text(secret)).to_have_count(0)
    row = page.get_by_role("row").filter(has_text=url)
    expect(row).to_contain_text("criado, alterado, removido")
    assert not page.evaluate("() => document.documentElement.scrollWidth > innerWidth")
    row.get_by_role("link", name=url).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Webhook nº \d+$"))
    expect(page.get_by_text("Nenhuma entrega ainda")).to_be_visible()
    look(page, "webhook-page")
    page.get_by_text("Remover este webhook…").click()  # asked twice: the fold, then its button
    page.get_by_role("button", name=re.compile("^Remover o webhook nº")).click()
    expect(page.get_by_role("status")).to_have_text(
        "Webhook removido: ele não recebe mais eventos."
    )
    expect(page.get_by_text(url)).to_have_count(0)
    look(page, "webhook-removed")


def test_the_docs_page_tries_an_operation_as_a_program_would_with_the_token_given(
    page: Page, staffed: str, database: str, look: Look
) -> None:
    made = catalogo(database, "tokens", "criar", "--usuario", "maria", "--nome", unique("Docs"))
    secret = re.search(r"cat_[A-Za-z0-9_-]{43}", made.stdout)
    assert secret is not None, made.stdout
    page.goto(f"{staffed}/entrar")
    sign_in(page, "maria")  # the page's cookies do not count: the request is a program's
    page.goto(f"{staffed}/docs")
    expect(page.get_by_role("link", name="maria (admin)")).to_be_visible()  # the header stays
    expect(page.get_by_label("Token")).to_have_accessible_description(
        re.compile("Você entrou como maria, mas isso não vale aqui: crie um token seu em Tokens")
    )
    creating = page.locator("#criarProduto").locator("xpath=..")
    creating.locator("details.detalhes > summary").click()  # the operation's details are folded
    creating.locator("details.experimentar > summary").click()
    creating.get_by_role("button", name="Enviar").click()
    expect(creating.get_by_role("status")).to_have_text(
        "Resposta: 401 Não autenticado: esta operação pede um token. Os cookies desta página "
        "não vão junto; crie um token em /tokens e cole-o acima."
    )
    expect(creating.locator("pre.recebido")).to_contain_text(
        'www-authenticate: Bearer realm="catalogo"'
    )
    look(page, "tried-without-a-token")
    page.get_by_label("Token").fill(secret.group())
    creating.get_by_role("button", name="Enviar").click()
    expect(creating.get_by_role("status")).to_have_text("Resposta: 201 Criado")
    expect(creating.locator("pre.recebido")).to_contain_text(
        '"nome": "Caneca de cerâmica azul 300 ml"'
    )
    expect(creating.locator("pre.pedido")).to_contain_text("Authorization: Bearer $CATALOGO_TOKEN")
    expect(creating.locator("pre.pedido")).not_to_contain_text(secret.group())
    location = creating.locator("pre.recebido").inner_text().split("location: ")[1].split("\n")[0]
    reading = page.locator("#obterProduto").locator("xpath=..")
    reading.locator("details.detalhes > summary").click()
    reading.locator("details.experimentar > summary").click()
    reading.get_by_label("id").fill(location.rpartition("/")[2])
    reading.get_by_role("button", name="Enviar").click()
    expect(reading.get_by_role("status")).to_have_text("Resposta: 200 OK")
    look(page, "tried-with-a-token")


def test_a_page_kept_by_the_browser_is_never_shown_to_the_next_person(
    page: Page, staffed: str, look: Look
) -> None:
    """The browser's cache is on: a signed-out copy is not confirmed after signing in, nor a
    signed-in one after signing out (the ETag names who was looking)."""
    page.goto(f"{staffed}/produtos/1")
    expect(page.get_by_role("button", name="Salvar")).to_have_count(0)
    expect(page.get_by_text("para adicionar, alterar ou remover produtos")).to_be_visible()
    expect(page.get_by_role("link", name="Histórico")).to_have_count(0)
    look(page, "kept-anonymous")
    page.get_by_role("link", name="Entrar", exact=True).click()
    sign_in(page, "maria")
    expect(page).to_have_url(f"{staffed}/produtos/1")
    expect(page.get_by_role("link", name="maria (admin)")).to_be_visible()
    expect(page.get_by_role("button", name="Salvar")).to_be_visible()
    page.reload()
    expect(page.get_by_role("button", name="Salvar")).to_be_visible()
    look(page, "kept-signed-in")
    page.get_by_role("button", name="Sair").click()
    expect(page).to_have_url(f"{staffed}/entrar")
    page.go_back()
    expect(page.get_by_role("link", name="maria (admin)")).to_have_count(0)
    page.goto(f"{staffed}/produtos/1")
    expect(page.get_by_role("link", name="Entrar", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="maria (admin)")).to_have_count(0)
    expect(page.get_by_role("button", name="Salvar")).to_have_count(0)
    page.reload()
    expect(page.get_by_role("button", name="Salvar")).to_have_count(0)


def test_a_list_kept_by_the_worker_is_never_shown_to_the_next_person(
    page: Page, staffed: str, look: Look
) -> None:
    """The worker keeps list pages whole, and the browser's cache is on: each visitor, before,
    during and after a session, is shown their own list, and a write's notice once."""
    nome = unique("Caneca da lista guardada")
    page.goto(f"{staffed}/produtos")
    page.reload()
    expect(page.get_by_role("link", name="Entrar", exact=True)).to_be_visible()
    expect(page.locator("form#lote")).to_have_count(0)
    look(page, "list-kept-anonymous")
    page.get_by_role("link", name="Entrar", exact=True).click()
    sign_in(page, "maria")
    expect(page).to_have_url(f"{staffed}/produtos")
    expect(page.get_by_role("link", name="maria (admin)")).to_be_visible()
    expect(page.locator("form#lote")).to_have_count(1)
    page.get_by_role("link", name="Novo produto").click()
    page.get_by_label("Nome").fill(nome)
    page.get_by_label("Preço").fill("12,50")
    page.get_by_role("button", name="Adicionar").click()
    expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» adicionado.")
    page.reload()
    expect(page.get_by_role("status")).to_have_count(0)
    expect(page.get_by_role("link", name=nome, exact=True)).to_be_visible()
    look(page, "list-kept-signed-in")
    page.get_by_role("button", name="Sair").click()
    expect(page).to_have_url(f"{staffed}/entrar")
    page.go_back()
    expect(page.get_by_role("link", name="maria (admin)")).to_have_count(0)
    page.goto(f"{staffed}/produtos")
    expect(page.get_by_role("link", name="Entrar", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="maria (admin)")).to_have_count(0)
    expect(page.get_by_role("link", name=nome, exact=True)).to_be_visible()
    expect(page.locator("form#lote")).to_have_count(0)


def end_sessions(database: str) -> None:
    """Every session ends now, as one does after CATALOGO_SESSAO_HORAS."""
    with sqlite3.connect(database.removeprefix("sqlite:///")) as connection:
        connection.execute("UPDATE sessions SET expires_at = 0")


def test_an_edit_made_after_the_session_ended_is_saved_once_signed_in_again(
    page: Page, staffed: str, database: str, look: Look
) -> None:
    page.goto(f"{staffed}/entrar")
    sign_in(page, "maria")
    page.goto(f"{staffed}/produtos/2")
    nome = unique("Caderno renomeado")
    end_sessions(database)
    page.get_by_label("Nome").fill(nome)
    page.get_by_label("Descrição").fill("Escrito depois\nque a sessão terminou")
    page.get_by_role("button", name="Salvar").click()
    expect(page).to_have_title("Entrar · Catálogo")
    expect(page.get_by_role("status")).to_contain_text(
        "Sua sessão terminou; entre de novo para salvar."
    )
    assert nome.replace(" ", "+") not in page.url and nome not in page.url
    look(page, "session-ended")
    sign_in(page, "maria")
    expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» atualizado.")
    page.get_by_role("link", name=nome, exact=True).click()
    expect(page.get_by_label("Descrição")).to_have_value("Escrito depois\nque a sessão terminou")


def test_a_visitor_sent_to_sign_in_is_told_why(page: Page, staffed: str, look: Look) -> None:
    page.goto(f"{staffed}/produtos/novo")
    expect(page.get_by_role("status")).to_have_text("Entre para adicionar produtos.")
    look(page, "why-sign-in")
    page.goto(f"{staffed}/produtos")
    expect(page.get_by_role("link", name="Removidos")).to_have_count(0)
    page.get_by_role("link", name="Entre", exact=True).click()
    expect(page).to_have_url(f"{staffed}/entrar?proximo=/produtos")


def test_an_import_asks_for_a_sign_in_and_its_pages_are_the_editors_only(
    page: Page, staffed: str, look: Look, tmp_path: Path
) -> None:
    page.goto(f"{staffed}/produtos")
    expect(page.get_by_role("link", name="Importar")).to_have_count(0)
    expect(page.get_by_label("Com os selecionados")).to_have_count(0)  # no batches either
    page.goto(f"{staffed}/produtos/importacoes")
    expect(page).to_have_url(f"{staffed}/entrar?proximo=%2Fprodutos%2Fimportacoes")
    expect(page.get_by_text("Entre para importar produtos.")).to_be_visible()
    look(page, "import-sent-to-sign-in")
    sign_in(page, "maria")
    expect(page.get_by_role("heading", name="Importar produtos")).to_be_visible()
    nome = unique("Agenda importada")
    planilha = tmp_path / "agenda.csv"
    planilha.write_text(f"nome;preco\r\n{nome};19,90\r\n", encoding="utf-8")
    page.get_by_label("Planilha").set_input_files(planilha)
    page.get_by_role("button", name="Enviar e conferir").click()
    expect(page.get_by_text("Enviada em")).to_contain_text("por maria")
    page.get_by_role("button", name="Confirmar importação").click()
    expect(page.get_by_role("status")).to_have_text(
        "Importação aplicada: 1 produto novo e 0 alterados."
    )
    expect(page.get_by_role("group").filter(has_text="Alterar vários")).to_be_visible()
    expect(page.get_by_label("Com os selecionados")).to_have_count(1)
    look(page, "import-signed-in")
    page.get_by_role("button", name="Sair").click()
    page.goto(f"{staffed}/entrar?proximo=%2Fprodutos%2Fimportacoes")
    sign_in(page, "ana")
    expect(page.get_by_role("heading", name="Acesso negado")).to_be_visible()


def test_an_admins_token_form_account_and_users_pages_say_what_a_clerk_needs(
    page: Page, staffed: str, look: Look
) -> None:
    page.goto(f"{staffed}/entrar")
    sign_in(page, "maria")
    page.goto(f"{staffed}/tokens")
    # the admin signed in, not ana, the first by name
    expect(page.get_by_label("Usuário", exact=True)).to_have_value("maria")
    page.get_by_label("Nome", exact=False).first.fill(unique("Loja"))
    page.get_by_label("Expira em").fill("0")
    page.get_by_role("button", name="Criar token").click()
    expect(page.get_by_label("Expira em")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Expira em")).to_have_accessible_description(
        re.compile("A validade é de 1 a")
    )
    look(page, "token-bad-expiry")
    page.goto(f"{staffed}/conta")
    expect(page.get_by_role("cell", name="Chrome no Linux").first).to_be_visible()
    expect(page.get_by_text("HeadlessChrome")).to_have_count(0)
    look(page, "account")
    page.goto(f"{staffed}/usuarios")
    novo = unique("joao").replace(" ", "")
    page.get_by_label("Nome de usuário").fill(novo)
    page.get_by_label("Senha", exact=False).first.fill(SENHA)
    page.get_by_role("button", name="Criar usuário").click()
    expect(page.get_by_role("status")).to_have_text(f"Usuário «{novo}» criado, com o papel editor.")
    expect(page.get_by_role("row").filter(has_text=novo).get_by_role("combobox")).to_have_count(2)
    look(page, "user-created")
