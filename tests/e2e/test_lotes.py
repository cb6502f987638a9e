"""A clerk changing many products at once, clicked in Chromium at both sizes: some rows of a
page repriced, the confirmation read, confirmed and undone from the notice; every product a
search finds removed and brought back; the same without JavaScript."""

import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import Look, new_context_page, unfold, unique
from tests.helpers import JSON
from tests.processes import fetch


def made(base_url: str, nome: str, preco: str) -> None:
    created = fetch(
        "POST", f"{base_url}/produtos", json={"nome": nome, "preco": preco}, headers=JSON
    )
    assert created.status_code == 201, created.text


def test_reprice_some_rows_read_the_confirmation_confirm_and_undo(
    page: Page, look: Look, base_url: str, size: str
) -> None:
    linha = unique(f"Linha de canecas {size}")  # each worker counts its own names
    nomes = [f"{linha} {n}" for n in ("azul", "verde", "rosa")]
    for nome, preco in zip(nomes, ("10,00", "10,05", "20,00"), strict=True):
        made(base_url, nome, preco)
    page.goto(f"/produtos?q={linha}")
    for nome in nomes[:2]:
        page.get_by_label(f"Selecionar {nome}").check()
    unfold(page, size, "Alterar vários")
    page.get_by_label("Com os selecionados").select_option("reajustar")
    page.get_by_label("Percentual").fill("10")
    look(page, "chosen")
    page.get_by_role("button", name="Aplicar aos selecionados").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Reajuste de +10%: 2 produtos")
    expect(page.get_by_role("row").filter(has_text=nomes[1])).to_contain_text("R$ 11,06")
    look(page, "confirmation")
    page.get_by_role("button", name="Confirmar: reajuste de +10% de 2 produtos").click()
    notice = page.get_by_role("status")
    expect(notice).to_have_text("Reajuste de +10% em 2 produtos. Ver o lote")
    expect(notice).to_be_focused()  # heard as the page loads
    expect(page.get_by_role("row").filter(has_text=nomes[0])).to_contain_text("R$ 11,00")
    expect(page.get_by_role("row").filter(has_text=nomes[2])).to_contain_text("R$ 20,00")
    look(page, "done")
    batch = notice.get_by_role("link", name="Ver o lote").get_attribute("href")
    page.get_by_role("button", name="Desfazer").click()
    expect(page.get_by_role("status")).to_have_text(
        "Lote desfeito: 2 produtos voltaram ao que eram."
    )
    expect(page.get_by_role("row").filter(has_text=nomes[1])).to_contain_text("R$ 10,05")
    page.goto(f"{batch}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Reajuste de +10% em 2 produtos")
    expect(page.get_by_text("Este lote foi desfeito")).to_be_visible()
    expect(page.get_by_role("button", name="Desfazer")).to_have_count(0)
    look(page, "batch-undone")


def test_remove_all_a_search_finds_and_bring_them_back(
    page: Page, look: Look, base_url: str, size: str
) -> None:
    linha = unique(f"Fornecedor encerrado {size}")
    for n in range(3):
        made(base_url, f"{linha} item {n}", "5")
    page.goto(f"/produtos?q={linha}")
    unfold(page, size, "Alterar vários")
    page.get_by_label("Com os selecionados").select_option("remover")
    page.get_by_role("button", name="Aplicar a todos os 3 produtos desta busca").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Remoção: 3 produtos")
    look(page, "remove-all")
    page.get_by_role("button", name="Confirmar: remoção de 3 produtos").click()
    expect(page.get_by_role("status")).to_have_text("3 produtos removidos. Ver o lote")
    expect(page.get_by_text("Nenhum produto encontrado.")).to_be_visible()
    page.get_by_role("button", name="Desfazer").click()
    expect(page.get_by_role("row").filter(has_text=linha)).to_have_count(3)


def test_without_javascript_a_batch_goes_in_and_is_undone_alike(
    browser: Browser, browser_context_args: dict[str, Any], base_url: str, size: str
) -> None:
    nome = unique(f"Régua sem script {size}")
    made(base_url, nome, "3,00")
    plain = new_context_page(browser, browser_context_args, java_script_enabled=False)
    plain.goto(f"/produtos?q={nome}")
    plain.get_by_label(f"Selecionar {nome}").check()
    unfold(plain, size, "Alterar vários")
    plain.get_by_label("Com os selecionados").select_option("definir")
    plain.get_by_label("Novo preço (R$)").fill("4,50")
    plain.get_by_role("button", name="Aplicar aos selecionados").click()
    plain.get_by_role("button", name="Confirmar: preço definido em r$ 4,50 de 1 produto").click()
    expect(plain.get_by_role("status")).to_have_text(
        "Preço definido em R$ 4,50 em 1 produto. Ver o lote"
    )
    expect(plain.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 4,50")
    plain.get_by_role("button", name="Desfazer").click()
    expect(plain.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 3,00")
    plain.context.close()


def test_the_first_screen_shows_products_and_a_row_fits_without_scrolling_sideways(
    page: Page, look: Look, size: str
) -> None:
    page.goto("/produtos")
    viewport = page.viewport_size
    assert viewport is not None
    first = page.locator("table.produtos tbody tr").first
    for part in ("td.nome a", "td.preco", "td.selecao input"):
        box = first.locator(part).bounding_box()
        assert box is not None and box["y"] + box["height"] <= viewport["height"], part
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], part
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    if size == "phone":  # the filters and the bulk form are folded, one control each
        expect(page.get_by_label("de R$")).to_be_hidden()
        expect(page.get_by_label("Com os selecionados")).to_be_hidden()
        page.locator("summary", has_text="Preço e ordem").click()
        expect(page.get_by_label("de R$")).to_be_visible()
    else:
        expect(page.locator("summary", has_text="Preço e ordem")).to_be_hidden()
        expect(page.get_by_label("Com os selecionados")).to_be_visible()
    look(page, "first-screen")


def test_a_mistake_in_the_bulk_form_keeps_the_list_the_choices_and_what_was_typed(
    page: Page, look: Look, base_url: str, size: str
) -> None:
    linha = unique(f"Potes {size}")
    nomes = [f"{linha} {n}" for n in ("P", "M", "G")]
    for nome in nomes:
        made(base_url, nome, "7,00")
    page.goto(f"/produtos?q={linha}")
    page.get_by_label(f"Selecionar {nomes[0]}").check()
    page.get_by_label(f"Selecionar {nomes[2]}").check()
    unfold(page, size, "Alterar vários")
    page.get_by_label("Com os selecionados").select_option("definir")
    expect(page.get_by_label("Percentual")).to_be_hidden()  # only the action's own field
    with page.expect_response(lambda r: r.url.endswith("/produtos/lote")) as sent:
        page.get_by_role("button", name="Aplicar aos selecionados").click()
    assert sent.value.status == 422
    price = page.get_by_label("Novo preço (R$)")
    expect(price).to_be_focused()
    expect(price).to_have_attribute("aria-invalid", "true")
    expect(price).to_have_accessible_description("Informe o novo preço (por exemplo, 29,90).")
    expect(page.get_by_role("row").filter(has_text=linha)).to_have_count(3)
    expect(page.get_by_label(f"Selecionar {nomes[0]}")).to_be_checked()
    expect(page.get_by_label(f"Selecionar {nomes[1]}")).not_to_be_checked()
    expect(page.get_by_label(f"Selecionar {nomes[2]}")).to_be_checked()
    expect(page.get_by_label("Com os selecionados")).to_have_value("definir")
    expect(page.get_by_label("Buscar", exact=True)).to_have_value(linha)
    look(page, "price-missing")

    page.goto("/produtos")  # nothing searched, nothing chosen: no "Limpar"
    unfold(page, size, "Alterar vários")
    page.get_by_label("Percentual").fill("8")
    page.get_by_role("button", name="Aplicar aos selecionados").click()
    expect(page.get_by_role("alert")).to_have_text(
        "Selecione ao menos um produto: marque a caixa ao lado de cada um na lista."
    )
    expect(page.get_by_label("Percentual")).to_have_value("8")
    expect(page.get_by_role("link", name="Limpar")).to_have_count(0)
    look(page, "nothing-chosen")


def test_choosing_says_how_many_marks_the_rows_and_all_says_what_it_means(
    page: Page, look: Look, base_url: str, size: str
) -> None:
    linha = unique(f"Talheres {size}")
    for talher in ("garfo", "faca", "colher"):
        made(base_url, f"{linha} {talher}", "2")
    page.goto(f"/produtos?q={linha}")
    unfold(page, size, "Alterar vários")
    page.get_by_label("Selecionar todos desta página").check()
    expect(page.locator("#lote-escolhidos")).to_have_text("3 selecionados")
    row = page.get_by_role("row").filter(has_text=f"{linha} faca")
    assert row.evaluate("r => getComputedStyle(r).backgroundColor") == "rgb(232, 241, 251)"
    page.get_by_label(f"Selecionar {linha} faca").uncheck()
    expect(page.locator("#lote-escolhidos")).to_have_text("2 selecionados")
    every = page.get_by_role("button", name="Aplicar a todos os 3 produtos desta busca")
    expect(every).to_have_accessible_description(re.compile("em todas as páginas"))
    look(page, "chosen")
    page.goto(f"/produtos?q={linha} colher")
    unfold(page, size, "Alterar vários")
    expect(page.get_by_role("button", name="Aplicar ao único produto desta busca")).to_be_visible()
