// Starts Swagger UI on /docs; a file of its own because the pages allow no inline script.
window.addEventListener("DOMContentLoaded", () => {
  window.SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
});
