"""The staff's day, clicked in Chromium at both sizes: the spec's flow, every error state, two
people editing one product (merged, or a choice), removal and its undo, the trash and the
history page, the way back to the list page, keyboard alone, the phone layout and the
contrast axe cannot measure."""

import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import Look, new_context_page, unique

NOME_80 = "Caneca de cerâmica esmaltada azul-petróleo com alça reforçada e tampa de bambu"


def add(page: Page, nome: str, preco: str, descricao: str = "") -> None:
    page.goto("/produtos/novo")
    page.get_by_label("Nome").fill(nome)
    page.get_by_label("Descrição").fill(descricao)
    page.get_by_label("Preço").fill(preco)
    page.get_by_role("button", name="Adicionar").click()
    expect(page.get_by_role("status")).to_have_text(said_added(nome))


def said_added(nome: str) -> str | re.Pattern[str]:
    """The notice of a new product: a name past 80 characters shortened with an ellipsis."""
    if len(nome) <= 80:
        return f"Produto «{nome}» adicionado."
    return re.compile(rf"^Produto «{re.escape(nome[:40])}[^»]*…» adicionado\.$")


def open_product(page: Page, nome: str) -> None:
    page.goto("/produtos")
    page.get_by_role("link", name=nome, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Editar «{nome}»")


def saved_by_someone_else(
    browser: Browser, context_args: dict[str, Any], nome: str, field: str, value: str
) -> None:
    """Another person (a browser context of their own) opens the product, changes one field
    and saves, while the test's page stays as it was."""
    ana = new_context_page(browser, context_args)
    open_product(ana, nome)
    ana.get_by_label(field).fill(value)
    ana.get_by_role("button", name="Salvar").click()
    expect(ana.get_by_role("status")).to_contain_text("atualizado")
    ana.context.close()


def focused(page: Page) -> str:
    """What has the focus, as `tag#id` or `tag:text`."""
    return str(
        page.evaluate(
            "() => { const e = document.activeElement;"
            " return e.id ? `${e.localName}#${e.id}` : `${e.localName}:${e.textContent.trim()}` }"
        )
    )


def tab_until(page: Page, target: str, most: int) -> int:
    """Presses Tab until `target` (as `focused` names it) has the focus; how many it took."""
    for presses in range(1, most + 1):
        page.keyboard.press("Tab")
        if focused(page) == target:
            return presses
    raise AssertionError(f"{target} not reached in {most} Tabs; the focus is on {focused(page)}")


class TestTheSpecsFlow:
    def test_add_edit_and_remove_a_product(self, page: Page, look: Look) -> None:
        page.goto("/produtos")
        expect(page).to_have_title("Produtos · Catálogo")
        look(page, "list")
        page.get_by_role("link", name="Novo produto").click()
        expect(page.get_by_label("Nome")).to_be_focused()
        look(page, "new")
        nome = unique("Caderno pautado")
        page.get_by_label("Nome").fill(nome)
        page.get_by_label("Descrição").fill("Capa dura\n96 folhas")
        page.get_by_label("Preço").fill("1.234,5")
        page.get_by_role("button", name="Adicionar").click()
        expect(page.get_by_role("status")).to_have_text(said_added(nome))
        expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 1.234,50")
        look(page, "added")

        page.get_by_role("link", name=nome, exact=True).click()
        expect(page).to_have_title(f"Editar «{nome}» · Catálogo")
        expect(page.get_by_label("Descrição")).to_have_value("Capa dura\n96 folhas")
        expect(page.get_by_label("Preço")).to_have_value("1234,50")
        look(page, "edit")
        page.get_by_label("Preço").fill("R$ 99,9")
        page.get_by_role("button", name="Salvar").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» atualizado.")
        expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 99,90")

        page.get_by_role("button", name=f"Remover {nome}").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» removido.")
        expect(page.get_by_role("link", name=nome, exact=True)).to_have_count(0)

    def test_a_missing_product_is_a_page_that_says_so(self, page: Page, look: Look) -> None:
        response = page.goto("/produtos/999999")
        assert response is not None and response.status == 404
        expect(page.get_by_role("heading", level=1)).to_have_text("Produto não encontrado")
        look(page, "not-found")
        page.get_by_role("link", name="Voltar para a lista de produtos").click()
        expect(page).to_have_url(re.compile(r"/produtos$"))


class TestErrors:
    def test_every_bad_field_is_named_in_one_round_and_the_summary_takes_the_focus(
        self, page: Page, look: Look
    ) -> None:
        page.goto("/produtos/novo")
        page.get_by_label("Preço").fill("1.234")
        page.get_by_role("button", name="Adicionar").click()  # Nome empty: no browser bubble
        expect(page).to_have_title("Erro: Novo produto · Catálogo")
        summary = page.locator(".resumo-erros")
        expect(summary).to_be_focused()
        expect(summary.get_by_role("link")).to_have_count(2)
        expect(page.get_by_label("Nome")).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_label("Preço")).to_have_value("1.234")
        look(page, "refused")
        summary.get_by_role("link", name=re.compile("^Preço:")).click()
        expect(page.get_by_label("Preço")).to_be_focused()

    def test_an_invalid_edit_keeps_what_was_typed(self, page: Page, look: Look) -> None:
        nome = unique("Lápis grafite")
        add(page, nome, "2")
        open_product(page, nome)
        page.get_by_label("Nome").fill("")
        page.get_by_label("Descrição").fill("Sem nome")
        page.get_by_role("button", name="Salvar").click()
        expect(page).to_have_title(f"Erro: Editar «{nome}» · Catálogo")
        expect(page.locator(".resumo-erros")).to_be_focused()
        expect(page.get_by_label("Descrição")).to_have_value("Sem nome")
        look(page, "refused-edit")


class TestTwoPeopleEditing:
    def test_changes_to_different_fields_are_both_kept_with_no_question(
        self, page: Page, browser: Browser, browser_context_args: dict[str, Any], look: Look
    ) -> None:
        """The issue's scenario: A changes the price while B changes the name."""
        nome = unique("Garrafa térmica")
        add(page, nome, "10")
        open_product(page, nome)  # B's page
        saved_by_someone_else(browser, browser_context_args, nome, "Preço", "12")

        page.get_by_label("Nome").fill(nome + " inox")
        page.get_by_role("button", name="Salvar").click()
        expect(page.get_by_role("status")).to_have_text(
            f"Produto «{nome} inox» atualizado. Mantido também o que outra pessoa mudou "
            "enquanto você editava: preço."
        )
        row = page.get_by_role("row").filter(has_text=nome + " inox")
        expect(row).to_contain_text("R$ 12,00")
        look(page, "merged")

    def test_both_changing_the_price_leaves_the_choice_to_the_second(
        self, page: Page, browser: Browser, browser_context_args: dict[str, Any], look: Look
    ) -> None:
        nome = unique("Mochila escolar")
        add(page, nome, "80")
        open_product(page, nome)
        saved_by_someone_else(browser, browser_context_args, nome, "Preço", "85")

        page.get_by_label("Preço").fill("90")
        page.get_by_label("Descrição").fill("Com bolso lateral")
        page.get_by_role("button", name="Salvar").click()
        expect(page).to_have_title(re.compile("^Conflito: "))
        expect(page.locator(".conflito")).to_be_focused()
        choice = page.get_by_role("group", name="Preço: qual valor fica?")
        expect(choice.get_by_role("radio", name="O seu R$ 90,00")).to_be_checked()
        expect(choice.get_by_role("radio", name="O salvo agora R$ 85,00")).not_to_be_checked()
        expect(page.get_by_label("Descrição")).to_have_value("Com bolso lateral")
        look(page, "conflict-choice")
        choice.get_by_role("radio", name="O salvo agora R$ 85,00").check()
        page.get_by_role("button", name="Salvar").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» atualizado.")
        expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 85,00")
        open_product(page, nome)
        expect(page.get_by_label("Descrição")).to_have_value("Com bolso lateral")


class TestRemoval:
    def test_remover_asks_nothing_and_desfazer_brings_the_product_back(
        self, page: Page, look: Look
    ) -> None:
        nome = unique("Régua")
        add(page, nome, "7,25")
        page.get_by_role("button", name=f"Remover {nome}").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» removido.")
        expect(page.get_by_role("link", name=nome, exact=True)).to_have_count(0)
        look(page, "removed-with-undo")
        page.get_by_role("button", name="Desfazer").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» restaurado.")
        expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 7,25")
        expect(page.get_by_role("button", name="Desfazer")).to_have_count(0)

    def test_without_javascript_removal_and_undo_work_alike(
        self, browser: Browser, browser_context_args: dict[str, Any], page: Page
    ) -> None:
        nome = unique("Boné de brim")
        add(page, nome, "45")
        plain = new_context_page(browser, browser_context_args, java_script_enabled=False)
        plain.goto("/produtos")
        open_product(plain, nome)
        plain.get_by_role("button", name="Remover").click()
        expect(plain.get_by_role("status")).to_have_text(f"Produto «{nome}» removido.")
        plain.get_by_role("button", name="Desfazer").click()
        expect(plain.get_by_role("link", name=nome, exact=True)).to_be_visible()
        plain.context.close()

    def test_a_removed_product_is_restored_from_the_trash(self, page: Page, look: Look) -> None:
        nome = unique("Estojo escolar")
        add(page, nome, "19,90")
        page.get_by_role("button", name=f"Remover {nome}").click()
        page.get_by_role("link", name="Removidos").click()
        expect(page).to_have_title("Removidos · Catálogo")
        row = page.get_by_role("row").filter(has_text=nome)
        expect(row).to_contain_text("R$ 19,90")
        look(page, "trash")
        row.get_by_role("button", name=f"Restaurar {nome}").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» restaurado.")
        expect(page).to_have_title("Removidos · Catálogo")
        page.get_by_role("link", name="Produtos", exact=True).click()
        expect(page.get_by_role("link", name=nome, exact=True)).to_be_visible()

    def test_a_restore_from_a_searched_trash_comes_back_to_the_search(
        self, page: Page, look: Look
    ) -> None:
        regua = unique("Régua")
        nomes = [f"{regua} de alumínio", f"{regua} de aço"]
        for nome in nomes:
            add(page, nome, "8,50")
            page.get_by_role("button", name=f"Remover {nome}").click()
        page.get_by_role("link", name="Removidos").click()
        search = page.get_by_role("searchbox", name="Buscar nos removidos")
        search.fill(regua.lower())
        search.press("Enter")
        for nome in nomes:
            expect(page.get_by_role("link", name=nome, exact=True)).to_be_visible()
        page.get_by_role("button", name=f"Restaurar {nomes[0]}").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nomes[0]}» restaurado.")
        expect(search).to_have_value(regua.lower())
        expect(page.get_by_role("link", name=nomes[0], exact=True)).to_have_count(0)
        expect(page.get_by_role("link", name=nomes[1], exact=True)).to_be_visible()
        look(page, "trash-searched-after-restore")

    def test_removing_from_an_out_of_date_list_removes_nothing_and_says_what_changed(
        self, page: Page, browser: Browser, browser_context_args: dict[str, Any], look: Look
    ) -> None:
        nome = unique("Camiseta básica")
        add(page, nome, "40")
        saved_by_someone_else(browser, browser_context_args, nome, "Descrição", "Nova coleção")

        page.get_by_role("button", name=f"Remover {nome}").click()  # the list is out of date
        conflict = page.locator(".conflito")
        expect(conflict).to_contain_text("Nada foi removido. Desde então, outra pessoa alterou:")
        expect(conflict.get_by_role("row").filter(has_text="Descrição")).to_contain_text(
            "Nova coleção"
        )
        expect(page.get_by_label("Descrição")).to_have_value("Nova coleção")
        look(page, "stale-removal")
        page.get_by_role("button", name="Remover").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» removido.")


class TestTheHistoryPage:
    def test_shows_who_changed_what_and_brings_an_old_version_back(
        self, page: Page, look: Look
    ) -> None:
        nome = unique("Caneca esmaltada")
        add(page, nome, "30")
        open_product(page, nome)
        page.get_by_label("Preço").fill("1.234,5")
        page.get_by_role("button", name="Salvar").click()
        open_product(page, nome)
        page.get_by_role("link", name="Histórico").click()
        expect(page).to_have_title(f"Histórico de «{nome}» · Catálogo")
        items = page.locator("ol.historico > li")
        expect(items).to_have_count(2)
        expect(items.first).to_contain_text("Alterado pelo site (versão 2)")
        expect(items.first.get_by_role("row", name="Preço")).to_contain_text(
            "de R$ 30,00 → para R$ 1.234,50"
        )
        look(page, "history")
        items.last.get_by_role("button", name="Restaurar esta versão").click()
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» atualizado.")
        expect(page.get_by_role("row").filter(has_text=nome)).to_contain_text("R$ 30,00")


class TestTheWayBack:
    def test_save_cancel_and_removal_return_to_the_page_they_came_from(
        self, page: Page, look: Look
    ) -> None:
        page.goto("/produtos")
        page.get_by_role("link", name="Mais antigos →").first.click()
        page.get_by_role("link", name="Mais antigos →").first.click()
        third = page.url
        assert "depois=" in third
        first = page.locator("td.nome a").first
        nome = first.inner_text()
        first.click()
        page.get_by_role("link", name="Cancelar").click()
        expect(page).to_have_url(third)

        page.get_by_role("link", name=nome, exact=True).click()
        page.get_by_label("Descrição").fill("Revisado na página 3")
        page.get_by_role("button", name="Salvar").click()
        expect(page).to_have_url(third)
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» atualizado.")
        look(page, "back-on-page-3")

        page.get_by_role("button", name=f"Remover {nome}").click()
        expect(page).to_have_url(third)
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» removido.")


class TestKeyboardAlone:
    def test_create_edit_and_remove_without_a_mouse(self, page: Page, look: Look) -> None:
        page.goto("/produtos")
        page.keyboard.press("Tab")
        assert focused(page) == "a:Pular para o conteúdo"
        look(page, "skip-link")
        page.keyboard.press("Enter")
        tab_until(page, "a:Novo produto", most=3)
        page.keyboard.press("Enter")
        page.wait_for_url("**/produtos/novo")
        # autofocus is applied as the page is first drawn, which a busy machine may do after
        # the load event: waited for, not read at once
        expect(page.locator("input#produto-nome")).to_be_focused()
        nome = unique("Estojo de lona")
        page.keyboard.type(nome)
        page.keyboard.press("Tab")
        page.keyboard.type("Três divisórias")
        page.keyboard.press("Tab")
        page.keyboard.type("25,90")
        page.keyboard.press("Enter")
        expect(page.get_by_role("status")).to_have_text(said_added(nome))
        expect(page.get_by_role("status")).to_be_focused()  # heard first, and the walk starts there

        # past the header's actions, the search form, the pager above the list, the batch
        # form and the sorting headers, and the row's checkbox
        tab_until(page, f"a:{nome}", most=32)
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/produtos/\d+$"))
        tab_until(page, "input#produto-preco", most=8)
        page.keyboard.press("ControlOrMeta+A")
        page.keyboard.type("26")
        page.keyboard.press("Enter")
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» atualizado.")

        page.get_by_role("link", name=nome, exact=True).focus()
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/produtos/\d+$"))
        tab_until(page, "button:Remover", most=13)
        page.keyboard.press("Enter")
        expect(page.get_by_role("status")).to_have_text(f"Produto «{nome}» removido.")

    def test_the_pager_is_a_few_tabs_from_the_top(self, page: Page) -> None:
        page.goto("/produtos")
        assert tab_until(page, "a:Pular para a paginação", most=2) == 2
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert focused(page) == "a:Mais antigos →"


class TestThePhoneLayout:
    def test_a_long_name_and_a_large_price_leave_names_the_width(
        self, page: Page, size: str, look: Look
    ) -> None:
        add(page, NOME_80, "999999999,99")
        look(page, "long-name")
        lines = page.evaluate(
            """nome => [...document.querySelectorAll('td.nome a')]
               .filter(a => a.textContent === nome)[0].getClientRects().length""",
            NOME_80,
        )
        assert 1 <= lines <= 3, f"{lines} lines at {size}"
        shares = page.evaluate(
            """() => [...document.querySelectorAll('td.nome')].map(cell =>
               cell.getBoundingClientRect().width / cell.closest('table').clientWidth)"""
        )
        # Half at least: beside it, the number, price, last change and Remover (five columns).
        assert min(shares) >= 0.5, f"a name gets only {min(shares):.0%} of the table's width"
        overflow = page.evaluate("() => document.documentElement.scrollWidth > innerWidth")
        assert not overflow, "the page scrolls sideways"

    def test_a_code_of_60_characters_stays_on_one_line_and_leaves_names_the_width(
        self, page: Page, size: str, look: Look
    ) -> None:
        codigo = (unique("SKU").replace(" ", "-") + "-").ljust(60, "7")
        add(page, NOME_80, "999999999,99")
        page.get_by_role("link", name=NOME_80, exact=True).first.click()
        page.get_by_label("Código").fill(codigo)
        page.get_by_role("button", name="Salvar").click()
        page.goto("/produtos")
        look(page, "long-code")
        cell = page.locator("td.codigo", has_text=codigo[:12])
        assert cell.evaluate("c => c.textContent") == codigo, "the code is all there, to copy"
        assert cell.get_attribute("title") == codigo, "and shown whole on hover"
        lines = cell.evaluate(
            "c => { const r = document.createRange(); r.selectNodeContents(c);"
            " return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }"
        )
        assert lines == 1, f"the code takes {lines} lines"
        shares = page.evaluate(
            """() => [...document.querySelectorAll('td.nome')].map(cell =>
               cell.getBoundingClientRect().width / cell.closest('table').clientWidth)"""
        )
        assert min(shares) >= 0.5, f"a name gets only {min(shares):.0%} of the table's width"
        overflow = page.evaluate("() => document.documentElement.scrollWidth > innerWidth")
        assert not overflow, "the page scrolls sideways"


class TestContrast:
    """What axe-core does not measure: borders of inputs and the focus ring, 3:1 on white."""

    def test_input_borders_and_the_focus_ring_reach_3_to_1(self, page: Page) -> None:
        page.goto("/produtos/novo")
        nome = page.get_by_label("Nome")
        border = nome.evaluate("e => getComputedStyle(e).borderTopColor")
        page.keyboard.press("Tab")  # the focus ring shows on keyboard focus
        page.get_by_label("Descrição").focus()
        page.keyboard.press("Shift+Tab")
        ring = nome.evaluate("e => getComputedStyle(e).outlineColor")
        assert contrast(border) >= 3, border
        assert contrast(ring) >= 3, ring


def contrast(css: str) -> float:
    """WCAG contrast of an `rgb(r, g, b)` colour against white."""
    r, g, b = (int(c) / 255 for c in re.findall(r"\d+", css)[:3])

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    return 1.05 / (luminance + 0.05)


class TestNothingOverflows:
    def test_a_name_of_200_characters_without_a_space_wraps_on_every_page(
        self, page: Page, look: Look
    ) -> None:
        nome = unique("Parafuso")[:12] + "X" * 188
        add(page, nome, "1")
        for path in ("/produtos", None):
            if path is None:
                page.get_by_role("link", name=nome, exact=True).click()
            else:
                page.goto(path)
            overflow = page.evaluate("() => document.documentElement.scrollWidth > innerWidth")
            assert not overflow, f"{page.url} scrolls sideways"
        look(page, "long-word")


class TestNothingChanged:
    def test_saving_an_untouched_form_says_nothing_changed(self, page: Page, look: Look) -> None:
        nome = unique("Apontador")
        add(page, nome, "4")
        open_product(page, nome)
        page.get_by_role("button", name="Salvar").click()
        expect(page.get_by_role("status")).to_have_text(
            f"Nada mudou em «{nome}»: o que você enviou já era o que estava salvo."
        )
        look(page, "nothing-changed")


def test_a_long_name_heads_its_page_shortened_and_save_stays_in_reach(
    page: Page, look: Look, size: str
) -> None:
    nome = unique("Conjunto de panelas antiaderentes com tampa de vidro temperado e cabos " * 2)[
        :190
    ].strip()
    page.goto("/produtos/novo")
    page.get_by_label("Nome").fill(nome)
    page.get_by_label("Preço").fill("399,90")
    page.get_by_role("button", name="Adicionar").click()
    notice = page.get_by_role("status")
    expect(notice).to_contain_text("…» adicionado.")
    assert len(notice.inner_text()) < 100
    page.get_by_role("link", name=nome, exact=True).click()
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text(f"Editar «{nome}»")  # whole, for a screen reader
    box = heading.bounding_box()
    assert box is not None and box["height"] < 4 * 40  # drawn in a few lines, not ten
    save = page.get_by_role("button", name="Salvar")
    expect(save).to_be_in_viewport()  # without scrolling, on a phone too
    look(page, "long-name")
