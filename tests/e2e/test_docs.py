"""/docs, as an integrator reads it: grouped, in pt-BR, real examples, axe-clean at both sizes."""

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Look


def test_the_docs_page_is_reached_from_every_page_and_reads_well(page: Page, look: Look) -> None:
    page.goto("/produtos")
    page.get_by_role("link", name="Documentação da API").click()
    expect(page).to_have_title("Documentação da API · Catálogo")
    headings = page.get_by_role("heading", level=2)
    expect(headings).to_have_text(
        [
            "Experimentar daqui",
            "Produtos",
            "Páginas",
            "Histórico",
            "Lotes",
            "Importações",
            "Webhooks",
            "Operação",
        ]
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


def test_an_index_link_opens_its_folded_operation(page: Page, look: Look) -> None:
    """Each operation shows its heading and summary, its details folded: the index's link
    opens the one it names, at that heading, and an address with its #fragment does too."""
    page.goto("/docs")
    expect(page.locator("details.detalhes")).to_have_count(26)
    expect(page.locator("details.detalhes[open]")).to_have_count(0)
    operation = page.locator("section.operacao").filter(
        has=page.get_by_role("heading", name="PUT /produtos/{id}")
    )
    expect(operation.get_by_text("Quem pode:")).to_be_hidden()
    index = page.get_by_role("navigation", name="Nesta página")
    expect(index).not_to_contain_text("OPTIONS")
    look(page, "folded")
    index.get_by_role("link", name="PUT /produtos/{id}").click()
    expect(page).to_have_url(page.url.split("#")[0] + "#atualizarProduto")
    expect(operation.get_by_text("Quem pode:")).to_be_visible()
    expect(operation.get_by_role("heading", name="PUT /produtos/{id}")).to_be_in_viewport()
    expect(operation.locator("details.experimentar > summary")).to_have_text(
        "Experimentar PUT /produtos/{id}"
    )
    expect(operation.locator("details.experimentar > summary")).to_be_visible()
    look(page, "opened")
    assert not page.evaluate("() => document.documentElement.scrollWidth > innerWidth"), (
        "the page scrolls sideways"
    )
    # Folded again by hand, the same link opens it again (the address's hash does not change).
    operation.locator("details.detalhes > summary").click()
    expect(operation.get_by_text("Quem pode:")).to_be_hidden()
    index.get_by_role("link", name="PUT /produtos/{id}").click()
    expect(operation.get_by_text("Quem pode:")).to_be_visible()
    # An address that names an operation opens it as the page loads.
    page.goto("/produtos")
    page.goto("/docs#historicoDoProduto")
    historico = page.locator("section.operacao").filter(
        has=page.get_by_role("heading", name="GET /produtos/{id}/historico")
    )
    expect(historico.get_by_text("Quem pode:")).to_be_visible()
    expect(page.locator("details.detalhes[open]")).to_have_count(1)
