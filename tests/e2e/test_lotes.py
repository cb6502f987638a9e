"""A clerk changing many products at once, clicked in Chromium at both sizes: some rows of a
page repriced, the confirmation read, confirmed and undone from the notice; every product a
search finds removed and brought back; the same without JavaScript."""

from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import Look, new_context_page, unique
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
    page.get_by_label("Com os selecionados").select_option("reajustar")
    page.get_by_label("Percentual").fill("10")
    look(page, "chosen")
    page.get_by_role("button", name="Aplicar aos selecionados").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Reajuste de +10%: 2 produtos")
    expect(page.get_by_role("row").filter(has_text=nomes[1])).to_contain_text("R$ 11,06")
    look(page, "confirmation")
    page.get_by_role("button", name="Confirmar: reajuste de +10% de 2 produtos").click()
    expect(page.get_by_role("status")).to_have_text("2 produtos reajustados.")
    expect(page.get_by_role("row").filter(has_text=nomes[0])).to_contain_text("R$ 11,00")
    expect(page.get_by_role("row").filter(has_text=nomes[2])).to_contain_text("R$ 20,00")
    look(page, "done")
    page.get_by_role("button", name="Desfazer").click()
    expect(page.get_by_role("status")).to_have_text(
        "Lote desfeito: 2 produtos voltaram ao que eram."
    )
    expect(page.get_by_role("row").filter(has_text=nomes[1])).to_contain_text("R$ 10,05")


def test_remove_all_a_search_finds_and_bring_them_back(
    page: Page, look: Look, base_url: str, size: str
) -> None:
    linha = unique(f"Fornecedor encerrado {size}")
    for n in range(3):
        made(base_url, f"{linha} item {n}", "5")
    page.goto(f"/produtos?q={linha}")
    page.get_by_label("Com os selecionados").select_option("remover")
    page.get_by_role("button", name="Aplicar a todos os 3 produtos desta busca").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Remoção: 3 produtos")
    look(page, "remove-all")
    page.get_by_role("button", name="Confirmar: remoção de 3 produtos").click()
    expect(page.get_by_role("status")).to_have_text("3 produtos removidos.")
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
    plain.get_by_label("Com os selecionados").select_option("definir")
    plain.get_by_label("Novo preço (R$)").fill("4,50")
    plain.get_by_role("button", name="Aplicar aos selecionados").click()
    plain.get_by_role("button", name="Confirmar: preço definido em r$ 4,50 de 1 produto").click()
    expect(plain.get_by_role("status")).to_have_text("1 produto com o preço definido.")
    expect(plain.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 4,50")
    plain.get_by_role("button", name="Desfazer").click()
    expect(plain.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 3,00")
    plain.context.close()
