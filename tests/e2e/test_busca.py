"""Finding a product in Chromium at both sizes: typed without accents from page 1, ordered by
a column header, narrowed by price, paged through, back to the search after a save, and
exported to a file."""

import csv
import io
import re
from pathlib import Path

import openpyxl
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Look, unfold, unique
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
        self, page: Page, look: Look, size: str
    ) -> None:
        page.goto("/produtos?q=exemplo")
        expect(page.locator(".contagem")).to_have_text("1\u201350 de 120 produtos")
        page.get_by_role("link", name=re.compile("^Preço")).click()
        expect(page).to_have_title("Produtos com «exemplo», do menor preço ao maior · Catálogo")
        header = page.get_by_role("columnheader", name="Preço")
        expect(header).to_have_attribute("aria-sort", "ascending")
        prices = page.locator("td.preco").all_inner_texts()
        values = [float(p.removeprefix("R$ ").replace(".", "").replace(",", ".")) for p in prices]
        assert values == sorted(values) and len(values) == 50
        look(page, "by-price")

        page.get_by_role("link", name="Próximos →").first.click()
        expect(page).to_have_url(re.compile(r"q=exemplo&ordem=preco&depois="))
        expect(page.locator(".contagem")).to_contain_text("51\u2013100 de 120 produtos")
        second = page.locator("td.preco").first.inner_text()
        page.get_by_role("link", name="← Anteriores").first.click()
        expect(page.locator("td.preco").last).not_to_have_text(second)
        assert page.locator("td.preco").all_inner_texts() == prices

        unfold(page, size, "Preço e ordem")
        page.get_by_label("de R$").fill("100")
        page.get_by_label("até R$").fill("200,00")
        page.get_by_role("button", name="Buscar").click()
        expect(page.get_by_role("heading", level=1)).to_have_text(
            "Produtos com «exemplo», de R$ 100,00 a R$ 200,00, do menor preço ao maior"
        )
        for text in page.locator("td.preco").all_inner_texts():
            value = float(text.removeprefix("R$ ").replace(".", "").replace(",", "."))
            assert 100 <= value <= 200
        look(page, "price-range")

    def test_a_price_that_cannot_be_read_is_said_beside_the_search(
        self, page: Page, look: Look, size: str
    ) -> None:
        page.goto("/produtos")
        unfold(page, size, "Preço e ordem")
        page.get_by_label("de R$").fill("dez reais")
        page.get_by_role("button", name="Buscar").click()
        expect(page.get_by_role("alert")).to_contain_text("O preço mínimo (preco_min)")
        expect(page.get_by_label("de R$")).to_have_value("dez reais")
        expect(page.get_by_label("de R$")).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_label("de R$")).to_have_accessible_description(
            re.compile("O preço mínimo")
        )
        look(page, "bad-price")


class TestWhereAmI:
    def test_the_list_says_where_it_is_and_goes_to_either_end(
        self, page: Page, look: Look, size: str
    ) -> None:
        page.goto("/produtos")
        expect(page.locator(".contagem")).to_contain_text(re.compile(r"^1\u201350 de \d+ produtos"))
        total = page.locator(".contagem").inner_text().split(" de ")[1].split()[0]
        # on a phone the rows come first: the pager is the one below them
        above = "Páginas, acima da lista" if size == "desktop" else "Páginas"
        pager = page.get_by_role("navigation", name=above, exact=True)
        pager.get_by_role("link", name="Mais antigos →").click()
        expect(page.locator(".contagem")).to_contain_text(f"51\u2013100 de {total} produtos")
        expect(page).to_have_title(f"Produtos, 51\u2013100 de {total} produtos · Catálogo")
        look(page, "page-2")
        pager.get_by_role("link", name="Última página »").click()
        expect(page).to_have_url(re.compile(r"antes=fim$"))
        expect(page.locator(".contagem")).to_contain_text(f"\u2013{total} de {total} produtos")
        expect(pager.get_by_role("link", name="Mais antigos →")).to_have_count(0)
        look(page, "last-page")
        pager.get_by_role("link", name="« Primeira página").click()
        expect(page).to_have_url(re.compile(r"/produtos$"))

    def test_the_order_box_sorts_by_last_change_and_a_link_goes_back_to_the_default(
        self, page: Page, look: Look, size: str
    ) -> None:
        nome = unique("Alterado agora")
        add(page, nome, "3")
        page.goto("/produtos?ordem=atualizado_em")
        unfold(page, size, "Preço e ordem")
        page.get_by_label("Ordem").select_option(label="Alteração mais recente primeiro")
        page.get_by_role("button", name="Buscar").click()
        expect(page).to_have_url(re.compile(r"/produtos\?ordem=-atualizado_em$"))  # no q=&…
        header = page.get_by_role("columnheader", name="Alterado em")
        expect(header).to_have_attribute("aria-sort", "descending")
        expect(page.locator("td.nome").first).to_have_text(nome)
        look(page, "by-last-change")
        page.get_by_role("link", name="Ordem padrão").click()
        expect(page).to_have_url(re.compile(r"/produtos$"))
        expect(page.get_by_label("Ordem")).to_have_value("")

    def test_a_search_leaves_empty_fields_out_of_its_address(self, page: Page) -> None:
        page.goto("/produtos")
        page.get_by_role("searchbox", name="Buscar").fill("exemplo")
        page.get_by_role("button", name="Buscar").click()
        expect(page).to_have_url(re.compile(r"/produtos\?q=exemplo$"))


class TestExporting:
    def test_a_search_exported_to_csv_and_excel_holds_exactly_the_products_shown(
        self, page: Page, look: Look
    ) -> None:
        palavra = unique("Exportável")
        names = [f"{palavra} {cor}" for cor in ("azul", "verde", "=cinza")]
        for nome in names:
            add(page, nome, "1.234,50")
        page.goto("/produtos")
        page.get_by_role("searchbox", name="Buscar").fill(palavra)
        page.get_by_role("button", name="Buscar").click()
        shown = page.locator("td.nome").all_inner_texts()
        assert sorted(shown) == sorted(names)
        look(page, "search")
        with page.expect_download() as csv_download:
            page.get_by_role("link", name="CSV", exact=True).click()
        assert re.fullmatch(r"produtos-\d{4}-\d\d-\d\d\.csv", csv_download.value.suggested_filename)
        data = Path(csv_download.value.path()).read_bytes()
        assert data.startswith(b"\xef\xbb\xbfid;codigo;nome;")
        table = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""), delimiter=";"))
        exported = [row[2].removeprefix("'") for row in table[1:]]
        assert exported == shown and {row[4] for row in table[1:]} == {"1234,50"}
        with page.expect_download() as xlsx_download:
            page.get_by_role("link", name="Excel", exact=True).click()
        sheet = openpyxl.load_workbook(
            io.BytesIO(Path(xlsx_download.value.path()).read_bytes())
        ).active
        assert [row[2] for row in sheet.iter_rows(min_row=2, values_only=True)] == shown
