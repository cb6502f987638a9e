"""The three-way merge, field by field: what only one side changed is kept, equal changes
agree, and only different changes to one field are left to a person."""

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from catalogo.historia import campos, ler_campos, mesclar
from catalogo.produtos import Produto


def produto(nome: str = "Caneca", descricao: str = "Azul", preco: str = "10.00") -> Produto:
    return Produto(nome=nome, descricao=descricao, preco=Decimal(preco))


BASE = ler_campos(campos(produto()))


def test_fields_only_the_other_side_changed_keep_their_saved_value() -> None:
    merged = mesclar(BASE, produto(nome="Caneca grande"), produto(preco="12.00"))
    assert merged.produto == produto(nome="Caneca grande", preco="12.00")
    assert merged.deles == ("preco",) and merged.conflitos == ()


def test_identical_changes_agree_and_name_no_one() -> None:
    merged = mesclar(BASE, produto(preco="12.00"), produto(preco="12.00"))
    assert merged.produto == produto(preco="12.00")
    assert merged.deles == () and merged.conflitos == ()


def test_different_changes_to_one_field_are_a_conflict_kept_at_this_persons_value() -> None:
    merged = mesclar(BASE, produto(preco="15.00"), produto(nome="Xícara", preco="12.00"))
    assert merged.conflitos == ("preco",) and merged.deles == ("nome",)
    assert merged.produto == produto(nome="Xícara", preco="15.00")


def test_a_price_written_otherwise_is_the_same_price() -> None:
    base = {"nome": "Caneca", "descricao": "Azul", "preco": "10.0"}
    merged = mesclar(base, produto(preco="10"), produto(preco="12.00"))
    assert merged.produto.preco == Decimal("12.00") and merged.conflitos == ()


def test_without_a_base_every_field_that_differs_is_a_conflict() -> None:
    merged = mesclar(None, produto(nome="A"), produto(nome="B", preco="3.00"))
    assert merged.conflitos == ("nome", "preco") and merged.deles == ()


TEXT = st.sampled_from(["Caneca", "Xícara", "Prato"])
PRICE = st.sampled_from(["10.00", "12.00", "15.50"])


@given(TEXT, TEXT, PRICE, TEXT, TEXT, PRICE)
def test_a_merge_never_loses_a_change_that_only_one_side_made(
    meu_nome: str, meu_texto: str, meu_preco: str, nome: str, texto: str, preco: str
) -> None:
    base = ler_campos(campos(produto("Caneca", "Caneca", "10.00")))
    meu, salvo = produto(meu_nome, meu_texto, meu_preco), produto(nome, texto, preco)
    merged = mesclar(base, meu, salvo)
    assert base is not None
    for campo in ("nome", "descricao", "preco"):
        kept, mine, saved = (str(getattr(p, campo)) for p in (merged.produto, meu, salvo))
        original = str(Decimal(base[campo])) if campo == "preco" else base[campo]
        if campo in merged.conflitos:
            assert mine != original and saved != original and mine != saved and kept == mine
        elif mine == original:
            assert kept == saved
        else:
            assert kept == mine and (saved in (original, mine))
