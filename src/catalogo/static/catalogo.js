// Progressive enhancement only: every page works without this file.
// "Remover" is a GET form leading to a page that asks first; here it asks in a dialog of the
// site's own instead, whose form sends the same POST with _method=DELETE as that page's.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.classList.contains("remover")) {
    event.preventDefault();
    askBeforeRemoving(form);
  }
});

function askBeforeRemoving(trigger) {
  const dialog = document.createElement("dialog");
  dialog.className = "confirmacao";
  dialog.setAttribute("aria-labelledby", "confirmacao-titulo");
  dialog.setAttribute("aria-describedby", "confirmacao-texto");

  const title = document.createElement("h2");
  title.id = "confirmacao-titulo";
  title.textContent = "Remover produto?";
  const text = document.createElement("p");
  text.id = "confirmacao-texto";
  const name = document.createElement("bdi"); // its text direction stays inside it
  name.textContent = trigger.dataset.nome;
  text.append("«", name, "» será removido do catálogo. Você poderá desfazer em seguida.");

  const removal = document.createElement("form");
  removal.method = "post";
  removal.action = trigger.action.replace(/\/remocao$/, "");
  const fields = { _method: "DELETE", "produto.versao": trigger.elements.namedItem("versao").value };
  const back = trigger.elements.namedItem("lista");
  if (back) fields.lista = back.value;
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement("input");
    Object.assign(input, { type: "hidden", name, value });
    removal.append(input);
  }
  const remove = document.createElement("button");
  Object.assign(remove, { type: "submit", name: "_method", value: "DELETE", className: "perigo" });
  remove.textContent = "Remover";
  const cancel = document.createElement("button");
  cancel.type = "button";
  cancel.textContent = "Cancelar";
  cancel.addEventListener("click", () => dialog.close());
  const actions = document.createElement("div");
  actions.className = "acoes";
  actions.append(remove, cancel);
  removal.append(actions);

  dialog.append(title, text, removal);
  dialog.addEventListener("close", () => {
    dialog.remove();
    trigger.querySelector("button").focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  cancel.focus();
}
