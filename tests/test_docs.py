"""The README and docs/ stand alone: every link between them leads to a file and a heading that
exist, none leads outside the project, and every page is reachable from docs/index.md."""

import re
import subprocess
from pathlib import Path

from tests.helpers import ONLY_SQLITE
from tests.processes import fetch, serving

ROOT = Path(__file__).parent.parent
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "bench" / "results" / "history.md",
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def test_every_link_leads_to_a_page_and_a_heading_of_the_project() -> None:
    broken = []
    for page in PAGES:
        for target in links(page):
            path, _, anchor = target.partition("#")
            found = (page.parent / path).resolve() if path else page
            if not found.is_relative_to(ROOT) or "shared" in found.relative_to(ROOT).parts[:1]:
                broken.append(f"{page.name}: {target} leads outside the project")
            elif not found.exists():
                broken.append(f"{page.name}: {target} does not exist")
            elif anchor and found.suffix == ".md" and anchor not in anchors(found):
                broken.append(f"{page.name}: {target} has no such heading")
    assert not broken, "\n".join(broken)


def test_every_page_of_docs_is_reached_from_the_index() -> None:
    index = ROOT / "docs" / "index.md"
    reached = {(index.parent / target.partition("#")[0]).resolve() for target in links(index)}
    for page in (ROOT / "docs").glob("*.md"):
        assert page == index or page.resolve() in reached, page.name


def test_the_readme_opens_with_its_two_commands_then_five_minutes_of_use() -> None:
    text = (ROOT / "README.md").read_text()
    first_block = text.split("```")[1].splitlines()
    assert first_block[0] == "sh" and len(first_block) == 3
    assert first_block[1].startswith("python3 -m venv .venv && .venv/bin/pip install -c ")
    assert first_block[2] == "scripts/test"
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Five minutes with it", "## Where to go next"]
    assert len(text.splitlines()) < 150


@ONLY_SQLITE
def test_the_readmes_commands_do_what_their_comments_say(database: str, tmp_path: Path) -> None:
    """Every curl of the README's five minutes, run in order against a real server on a new
    catalog: each answers the status its comment names, and the product ends as shown."""
    text = (ROOT / "README.md").read_text()
    blocks = [b.removeprefix("sh\n") for b in text.split("```")[1::2] if "curl " in b]
    commands = []
    for block in blocks:
        joined = re.sub(r"\\\n\s*", "", block)
        commands += [line for line in joined.splitlines() if line.strip()]
    assert len(commands) >= 8  # the form's three, H=, and the JSON's four
    with serving(database, tmp_path) as (base, _):
        port = base.rsplit(":", 1)[1]
        header = ""
        for command in commands:
            command = command.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
            if command.startswith("H="):
                header = command.split("=", 1)[1].strip("'")
                continue
            shell = command.partition("  #")[0].replace('"$H"', f"'{header}'")
            done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, (command, done.stderr)
            said = re.search(r"#\s*(\d{3})", command)
            if said:
                assert done.stdout.startswith(f"HTTP/1.1 {said[1]}"), (command, done.stdout)
        final = fetch("GET", f"{base}/produtos/2", headers={"Accept": "application/json"})
        assert final.json()["preco"] == "31.00" and final.json()["descricao"] == "Branca"
