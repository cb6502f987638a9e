"""The README and docs/ stand alone: every link between them leads to a file and a heading that
exist, none leads outside the project, and every page is reachable from docs/index.md."""

import re
from pathlib import Path

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
