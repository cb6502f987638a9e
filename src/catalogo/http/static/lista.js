// The search form leaves out the fields left empty (and the default order), so that its
// address says only what was asked: /produtos?q=caneca, not ?q=caneca&preco_min=&preco_max=.
// Without this script the form still works; its address is only longer.
"use strict";
document.querySelectorAll("form.busca").forEach((form) => {
  form.addEventListener("submit", () => {
    form.querySelectorAll("input[name], select[name]").forEach((field) => {
      if (field.value.trim() === "") field.disabled = true;
    });
    // Enabled again once the browser has read the form, for the back button's copy.
    setTimeout(() => form.querySelectorAll("[disabled]").forEach((f) => { f.disabled = false; }));
  });
});

// The bulk form: a box that ticks every product of this page, and how many are ticked, said
// beside the button (and on the fold's summary on a phone). Without this script the boxes
// are ticked one by one and the chosen rows are still marked (catalogo.css).
const lote = document.getElementById("lote");
const pagina = document.getElementById("selecionar-pagina");
if (lote && pagina) {
  const boxes = () => Array.from(document.querySelectorAll('input[name="id"][form="lote"]'));
  const said = document.getElementById("lote-escolhidos");
  const resumo = document.querySelector(".lote-dobra .escolhidos-resumo");
  const show = () => {
    const all = boxes();
    const ticked = all.filter((box) => box.checked).length;
    pagina.checked = ticked > 0 && ticked === all.length;
    pagina.indeterminate = ticked > 0 && ticked < all.length;
    const text = ticked === 0 ? "" : ticked === 1 ? "1 selecionado" : `${ticked} selecionados`;
    said.textContent = text;
    if (resumo) resumo.textContent = text ? `(${text})` : "";
  };
  pagina.hidden = false;
  pagina.addEventListener("change", () => {
    boxes().forEach((box) => { box.checked = pagina.checked; });
    show();
  });
  document.addEventListener("change", (event) => {
    if (event.target.matches('input[name="id"][form="lote"]')) show();
  });
  show();
}
