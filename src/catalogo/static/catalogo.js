// Progressive enhancement only: every page works without this file.
// Asks before a remove form is sent; the form itself is a plain POST with _method=DELETE.
document.addEventListener("submit", (event) => {
  const pergunta = event.target.dataset.confirmar;
  if (pergunta && !window.confirm(pergunta)) {
    event.preventDefault();
  }
});
