"""/docs, as an integrator reads it: grouped, in pt-BR, real examples, axe-clean at both sizes."""

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Look


def test_the_docs_page_is_reached_from_every_page_and_reads_well(page: Page, look: Look) -> None:
    page.goto("/produtos")
    page.get_by_role("link", name="Documentação da API").click()
    expect(page).to_have_title("Documentação da API · Catálogo")
    headings = page.get_by_role("heading", level=2)
    expect(headings).to_have_text(
        ["Experimentar daqui", "Produtos", "Páginas", "Histórico", "Operação"]
    )
    expect(page.locator("#criarProduto").locator("xpath=..")).to_contain_text(
        '"nome": "Caneca de cerâmica azul 300 ml"'
    )
    look(page, "docs")
    page.get_by_role("navigation", name="Nesta página").get_by_role(
        "link", name="DELETE /produtos/{id}"
    ).click()
    expect(page).to_have_url(page.url.split("#")[0] + "#removerProduto")
    overflow = page.evaluate("() => document.documentElement.scrollWidth > innerWidth")
    assert not overflow, "the page scrolls sideways"
