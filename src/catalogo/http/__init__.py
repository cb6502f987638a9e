"""HTTP: the service's URIs, as pages for browsers and JSON for programs.

app.py lists the routes and wires the middleware (middleware/); resources/ holds one
HTTPEndpoint per URI (parse, call a service, render), pages/ what a browser is shown (Jinja2
templates in templates/, files in static/), openapi/ the API description. Around them: who is
asking (access, identity), what is asked and answered in which form (negotiation, bodies,
conditional, listing), and how a refusal is answered (problems: the one table of statuses and
titles). May import services, storage, runtime and domain.
"""
