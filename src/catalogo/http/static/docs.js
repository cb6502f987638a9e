// /docs only, and progressive enhancement: the page reads whole without it. An operation
// named by the address's #fragment, or by a link of this page, has its details opened.
// "Experimentar" sends an operation's request from this page as a program would (JSON, none
// of this page's cookies, the token if one is given) and shows the answer, with the same
// request as curl.
function openNamed(fragment) {
  let target = null;
  try {
    target = document.getElementById(decodeURIComponent(fragment.slice(1)));
  } catch {
    return; // a fragment that is not percent-encoding names nothing here
  }
  const details = target?.closest(".operacao")?.querySelector("details.detalhes");
  if (details) details.open = true;
}
openNamed(location.hash);
addEventListener("hashchange", () => openNamed(location.hash));
document.addEventListener("click", (event) => {
  // a link to where the address already points changes no hash: open its operation anyway
  const link = event.target instanceof Element && event.target.closest('a[href^="#"]');
  if (link) openNamed(link.getAttribute("href"));
});

const panel = document.querySelector(".docs-autorizar");
if (panel) {
  panel.hidden = false;
  for (const details of document.querySelectorAll("details.experimentar")) details.hidden = false;
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.classList.contains("experimentar")) {
      event.preventDefault();
      tryOperation(form);
    }
  });
}

async function tryOperation(form) {
  const answer = form.nextElementSibling;
  const [status, request, received] = answer.children;
  const headers = { Accept: "application/json" };
  const query = new URLSearchParams();
  let path = form.dataset.path;
  for (const input of form.querySelectorAll("input[data-in]")) {
    if (input.value === "") continue;
    if (input.dataset.in === "path") {
      path = path.replace(`{${input.name}}`, encodeURIComponent(input.value));
    } else if (input.dataset.in === "query") {
      query.append(input.name, input.value);
    } else {
      headers[input.name] = input.value;
    }
  }
  const token = document.getElementById("token").value.trim();
  const init = { method: form.dataset.method, headers, credentials: "omit", redirect: "manual", cache: "no-store" };
  const body = form.elements.namedItem("corpo");
  if (body && body.value.trim() !== "") {
    headers["Content-Type"] = "application/json";
    init.body = body.value;
  }
  const url = new URL(path + (query.size ? `?${query}` : ""), location.href);
  request.textContent = curl(init, url, token !== "");
  request.hidden = false;
  if (token) headers.Authorization = `Bearer ${token}`;
  status.textContent = "Enviando…";
  received.hidden = true;
  try {
    const response = await fetch(url, init);
    const text = await response.text();
    status.textContent = `Resposta: ${response.status} ${STATUS[response.status] || ""}`.trim();
    if (response.status === 401) {
      status.textContent += token
        ? ": o token não vale (revogado, expirado ou digitado errado)."
        : ": esta operação pede um token. Os cookies desta página não vão junto; crie um token em /tokens e cole-o acima.";
    }
    const lines = [...response.headers].map(([name, value]) => `${name}: ${value}`);
    received.textContent = lines.join("\n") + (text ? `\n\n${pretty(text, response)}` : "");
    received.hidden = false;
  } catch (error) {
    // fetch refuses before sending: a header value outside Latin-1, a path it cannot parse
    status.textContent = `Não foi enviado: ${error.message}`;
  }
}

// Each status as the page says it: the server's reason phrase is English (and HTTP/2 has none).
const STATUS = {
  200: "OK", 201: "Criado", 202: "Aceito", 204: "Sem conteúdo", 303: "Veja outro endereço",
  304: "Não modificado", 400: "Requisição inválida", 401: "Não autenticado", 403: "Proibido",
  404: "Não encontrado", 405: "Método não permitido", 406: "Formato não disponível",
  409: "Conflito", 410: "Não existe mais", 412: "Pré-condição falhou", 413: "Grande demais",
  415: "Tipo de conteúdo não aceito", 422: "Dados inválidos", 428: "Pré-condição exigida",
  429: "Requisições demais", 500: "Erro interno", 503: "Indisponível no momento",
};

function pretty(text, response) {
  if (!/json/.test(response.headers.get("Content-Type") || "")) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function curl(init, url, withToken) {
  const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
  const parts = ["curl -i"];
  if (init.method !== "GET") parts.push(`-X ${init.method}`);
  for (const [name, value] of Object.entries(init.headers)) parts.push(`-H ${quote(`${name}: ${value}`)}`);
  if (withToken) parts.push('-H "Authorization: Bearer $CATALOGO_TOKEN"');
  if (init.body !== undefined) parts.push(`--data-raw ${quote(init.body)}`);
  parts.push(quote(url.href));
  return parts.join(" \\\n  ");
}
