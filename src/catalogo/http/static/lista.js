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
