"""Finding a product in Chromium at both sizes: typed without accents from page 1, ordered by
a column header, narrowed by price, paged through, and back to the search after a save."""

import re

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Look, unique
from tests.e2e.test_produtos import add


class TestFinding:
    def test_finds_a_product_by_a_fragment_typed_without_accents(
        self, page: Page, look: Look
    ) -> None:
        nome = unique("Coração de maçã em calda")
        add(page, nome, "7,50")
        page.goto("/produtos")
        box = page.get_by_role("searchbox", name="Buscar")
        box.fill("coracao de MACA")
        box.press("Enter")
        expect(page).to_have_title("Produtos com «coracao de MACA» · Catálogo")
        expect(page.get_by_role("heading", level=1)).to_have_text("Produtos com «coracao de MACA»")
        expect(page.get_by_role("link", name=nome, exact=True)).to_be_visible()
        expect(page.get_by_role("searchbox", name="Buscar")).to_have_value("coracao de MACA")
        look(page, "found")

        page.get_by_role("link", name=nome, exact=True).click()
        page.get_by_label("Preço").fill("8,00")
        page.get_by_role("button", name="Salvar").click()
        expect(page).to_have_title("Produtos com «coracao de MACA» · Catálogo")
        expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 8,00")

    def test_nothing_found_says_so_and_leads_back(self, page: Page, look: Look) -> None:
        page.goto("/produtos")
        page.get_by_role("searchbox", name="Buscar").fill("bicicleta ergométrica")
        page.get_by_role("button", name="Buscar").click()
        expect(page.get_by_text("Nenhum produto encontrado.")).to_be_visible()
        look(page, "nothing")
        page.get_by_role("link", name="Ver todos os produtos.").click()
        expect(page).to_have_title("Produtos · Catálogo")

    def test_order_by_a_header_narrow_by_price_and_page_through(
        self, page: Page, look: Look
    ) -> None:
        page.goto("/produtos?q=exemplo")
        expect(page.locator(".contagem")).to_have_text("120 produtos")
        page.get_by_role("link", name="Preço", exact=True).click()
        expect(page).to_have_title("Produtos com «exemplo», do menor preço ao maior · Catálogo")
        header = page.get_by_role("columnheader", name="Preço")
        expect(header).to_have_attribute("aria-sort", "ascending")
        prices = page.locator("td.num").all_inner_texts()
        values = [float(p.removeprefix("R$ ").replace(".", "").replace(",", ".")) for p in prices]
        assert values == sorted(values) and len(values) == 50
        look(page, "by-price")

        page.get_by_role("link", name="Próximos →").click()
        expect(page).to_have_url(re.compile(r"q=exemplo&ordem=preco&depois="))
        expect(page.locator(".contagem")).to_have_text("120 produtos")
        second = page.locator("td.num").first.inner_text()
        page.get_by_role("link", name="← Anteriores").click()
        expect(page.locator("td.num").last).not_to_have_text(second)
        assert page.locator("td.num").all_inner_texts() == prices

        page.get_by_label("de R$").fill("100")
        page.get_by_label("até R$").fill("200,00")
        page.get_by_role("button", name="Buscar").click()
        expect(page.get_by_role("heading", level=1)).to_have_text(
            "Produtos com «exemplo», de R$ 100,00 a R$ 200,00, do menor preço ao maior"
        )
        for text in page.locator("td.num").all_inner_texts():
            value = float(text.removeprefix("R$ ").replace(".", "").replace(",", "."))
            assert 100 <= value <= 200
        look(page, "price-range")

    def test_a_price_that_cannot_be_read_is_said_beside_the_search(
        self, page: Page, look: Look
    ) -> None:
        page.goto("/produtos")
        page.get_by_label("de R$").fill("dez reais")
        page.get_by_role("button", name="Buscar").click()
        expect(page.get_by_role("alert")).to_contain_text("O preço mínimo (preco_min)")
        expect(page.get_by_label("de R$")).to_have_value("dez reais")
        expect(page.get_by_label("de R$")).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_label("de R$")).to_have_accessible_description(
            re.compile("O preço mínimo")
        )
        look(page, "bad-price")
