"""A clerk importing a spreadsheet, clicked in Chromium at both sizes: from the list to the
import page, a file sent and its report read, confirmed, and undone from the list's notice; a
file with errors that cannot be confirmed; a file refused whole, and sent again as it asks;
the same without JavaScript."""

from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import Look, new_context_page, unique
from tests.helpers import JSON
from tests.processes import fetch


def made(base_url: str, nome: str, preco: str) -> int:
    created = fetch(
        "POST", f"{base_url}/produtos", json={"nome": nome, "preco": preco}, headers=JSON
    )
    assert created.status_code == 201, created.text
    id: int = created.json()["id"]
    return id


def sheet(folder: Path, name: str, *lines: str, encoding: str = "utf-8-sig") -> Path:
    path = folder / name
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    return path


def send(page: Page, path: Path) -> None:
    page.get_by_label("Planilha").set_input_files(path)
    page.get_by_role("button", name="Enviar e conferir").click()


def test_send_a_sheet_read_the_report_confirm_and_undo_it(
    page: Page, look: Look, base_url: str, tmp_path: Path
) -> None:
    nome, novo = unique("Caneca importada"), unique("Pote importado")
    id = made(base_url, nome, "10")
    page.goto("/produtos")
    page.get_by_role("link", name="Importar").click()
    expect(page.get_by_role("heading", name="Importar produtos")).to_be_visible()
    look(page, "form")
    send(page, sheet(tmp_path, "precos.csv", "id;nome;preco", f"{id};;12,50", f";{novo};3,00"))
    expect(page.get_by_role("heading", name="Importação de «precos.csv»")).to_be_visible()
    expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 10,00")
    expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 12,50")
    expect(page.get_by_role("row").filter(has_text=novo)).to_contain_text("R$ 3,00")
    look(page, "report")
    page.get_by_role("button", name="Confirmar importação").click()
    expect(page.get_by_role("status")).to_have_text(
        "Importação aplicada: 1 produto novo e 1 alterado."
    )
    expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 12,50")
    look(page, "applied")
    page.get_by_role("button", name="Desfazer importação").click()
    expect(page.get_by_role("status")).to_have_text(
        "Importação desfeita: 2 produtos voltaram ao que eram antes dela."
    )
    expect(page.get_by_text("O que a importação gravou")).to_be_visible()
    look(page, "undone")
    page.goto("/produtos")
    expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 10,00")
    expect(page.get_by_role("link", name=novo, exact=True)).to_have_count(0)
    page.goto("/produtos/importacoes")
    expect(page.get_by_role("row").filter(has_text="precos.csv").first).to_contain_text("Desfeita")
    look(page, "recent")


def test_a_sheet_with_errors_names_each_and_cannot_be_confirmed(
    page: Page, look: Look, tmp_path: Path
) -> None:
    page.goto("/produtos/importacoes")
    send(page, sheet(tmp_path, "erros.csv", "nome;preco", ";3,00", "Copo;1.234", "Prato;=A1*2"))
    erros = page.get_by_role("table").filter(has_text="O que há de errado")
    expect(erros.get_by_role("row")).to_have_count(4)  # the header and one per error
    expect(erros).to_contain_text("Preencha este campo.")
    expect(erros).to_contain_text("«1.234» é ambíguo")
    expect(erros).to_contain_text("é uma fórmula")
    expect(page.get_by_text("Nada será gravado enquanto houver erros")).to_be_visible()
    expect(page.get_by_role("button", name="Confirmar importação")).to_have_count(0)
    look(page, "errors")


def test_a_file_refused_whole_says_what_to_do_and_goes_in_as_it_asks(
    page: Page, look: Look, tmp_path: Path
) -> None:
    nome = unique("Pão de mel")
    path = sheet(tmp_path, "excel.csv", "nome;preco", f"{nome};4,50", encoding="cp1252")
    page.goto("/produtos/importacoes")
    send(page, path)
    expect(page.get_by_role("alert")).to_contain_text("salve como «CSV UTF-8» ou escolha")
    expect(page.get_by_role("alert")).to_be_focused()
    look(page, "refused")
    page.get_by_label("Codificação do CSV").select_option("windows-1252")
    send(page, path)
    expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 4,50")


def test_without_javascript_an_import_goes_in_and_is_undone_alike(
    browser: Browser, browser_context_args: dict[str, Any], page: Page, tmp_path: Path
) -> None:
    nome = unique("Bule sem script")
    plain = new_context_page(browser, browser_context_args, java_script_enabled=False)
    plain.goto("/produtos/importacoes")
    send(plain, sheet(tmp_path, "bule.csv", "nome;preco", f"{nome};30"))
    plain.get_by_role("button", name="Confirmar importação").click()
    expect(plain.get_by_role("link", name=nome, exact=True)).to_be_visible()
    plain.get_by_role("button", name="Desfazer importação").click()
    expect(plain.get_by_role("status")).to_contain_text("Importação desfeita")
    plain.context.close()


def test_import_undo_fix_the_sheet_and_import_again_brings_the_products_back(
    page: Page, look: Look, tmp_path: Path, size: str
) -> None:
    code = unique(f"LOOP-{size}").replace(" ", "-")
    nome = unique("Garrafa térmica")
    page.goto("/produtos/importacoes")
    send(page, sheet(tmp_path, "erro.csv", "codigo;nome;preco", f"{code};{nome};129,90"))
    page.get_by_role("button", name="Confirmar importação").click()
    expect(page.get_by_role("status")).to_contain_text("Importação aplicada: 1 produto novo")
    page.get_by_role("button", name="Desfazer importação").click()
    expect(page.get_by_role("status")).to_contain_text("Importação desfeita")
    page.goto(f"/produtos/removidos?q={code}")
    row = page.get_by_role("row").filter(has_text=nome)
    expect(row).to_contain_text(code)
    expect(row.get_by_role("link", name="uma importação")).to_be_visible()  # why it is here
    look(page, "trash-after-undo")
    page.goto("/produtos/importacoes")
    send(page, sheet(tmp_path, "certo.csv", "codigo;nome;preco", f"{code};{nome};12,99"))
    expect(page.get_by_text("Restaura o produto nº")).to_be_visible()
    expect(page.get_by_text("1 restaurado de Removidos")).to_be_visible()
    look(page, "restore-planned")
    page.get_by_role("button", name="Confirmar importação").click()
    expect(page.get_by_role("status")).to_contain_text("1 restaurado de Removidos")
    expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 12,99")


def test_a_report_says_what_is_wrong_with_each_cell_and_a_picture_is_named(
    page: Page, look: Look, tmp_path: Path
) -> None:
    page.goto("/produtos/importacoes")
    send(page, sheet(tmp_path, "digitado.csv", "nome;preco", f"{unique('Pote')};129,9O"))
    expect(page.get_by_text("Prévia com erros, não pode ser confirmada")).to_be_visible()
    expect(page.get_by_role("row").filter(has_text="129,9O")).to_be_visible()
    expect(page.get_by_role("button", name="Confirmar importação")).to_have_count(0)
    look(page, "cell-quoted")
    picture = tmp_path / "foto.csv"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    page.goto("/produtos/importacoes")
    send(page, picture)
    expect(page.get_by_role("alert")).to_contain_text("não é uma planilha: é uma imagem PNG")
    look(page, "picture-refused")
