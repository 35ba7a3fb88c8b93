"""The README and the documentation site: the site builds with no warning, every
link of the README reaches what it names, and what the code offers (commands,
public names, rules it cites, benchmark figures) is in the pages."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"
# [text](target) and ![alt](target); a target with a scheme is not the repository's.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub and MyST both give a page's headings: lower case,
    punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def _local_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(page.read_text()) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


@pytest.mark.slow
def test_the_site_builds_with_no_warning(tmp_path: Path) -> None:
    """As CI builds it: any warning (a broken link or anchor, a docstring that
    is not valid markup, a command that cannot be imported) fails the build."""
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    built = {p.name for p in (tmp_path / "site").glob("*.html")}
    assert {f"{page.stem}.html" for page in DOCS.glob("*.md")} <= built
    assert "vis-export convert" in (tmp_path / "site" / "commands.html").read_text()


def test_every_link_of_the_readme_reaches_a_file_and_its_heading() -> None:
    links = _local_links(README)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), link
        if anchor:
            assert anchor in _anchors(target), link


def test_the_readme_is_short_and_keeps_its_two_commands() -> None:
    """The reference lives in docs/; the README keeps the tour and the commands
    CI runs (.ci/run runs the second exactly)."""
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "pip install '.[all]' && vis-export convert golden/input/session.json --to html -o session.html" in text
    assert "\npip install -e '.[test]' && pytest\n" in text
    assert "pip install -e '.[test]' && pytest" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_pictures_are_small() -> None:
    pictures = [ROOT / link for link in _local_links(README) if link.endswith(".png")]
    assert pictures
    for picture in pictures:
        assert picture.stat().st_size < 200_000, picture


def test_every_command_has_its_generated_reference() -> None:
    """Each command's options come from click itself, on some page."""
    from vis_export.cli import main

    pages = "".join(page.read_text() for page in DOCS.glob("*.md"))
    for name in main.commands:
        assert f".. click:: vis_export.cli:{name}\n" in pages, name


def test_every_public_name_is_in_the_api_reference() -> None:
    import vis_export

    page = (DOCS / "api.md").read_text()
    documented = set(re.findall(r"^\.\. auto(?:function|class|exception):: vis_export\.(\w+)$", page, re.M))
    assert documented == set(vis_export.__all__) - {"__version__"}


def test_every_rule_the_code_cites_is_on_the_rules_page() -> None:
    cited: set[str] = set()
    for path in [*(ROOT / "vis_export").rglob("*.py"), *(ROOT / "tests").glob("*.py")]:
        cited |= set(re.findall(r"\bR([1-9])\b", path.read_text()))
    assert cited
    headings = re.findall(r"^## R([1-9]) ", (DOCS / "rules.md").read_text(), re.M)
    assert cited <= set(headings) and headings == sorted(headings)


def test_the_code_cites_pages_of_the_repository() -> None:
    """A docstring that names a page names one that is here: docs/, never a
    spec outside the repository."""
    outside = re.compile(r"\bspec" + "/" + r"[\w-]+\.md")
    page = re.compile(r"\bdocs/([\w-]+\.md)")
    for path in [
        *(ROOT / "vis_export").rglob("*.py"),
        *(ROOT / "tests").glob("*.py"),
        *(ROOT / "benchmarks").glob("*.py"),
    ]:
        text = path.read_text()
        assert not outside.search(text), path
        for name in page.findall(text):
            assert (DOCS / name).is_file(), (path, name)


def test_the_benchmark_plot_shows_the_figures_of_the_page() -> None:
    from benchmarks.plot import FIGURES, OUT

    page = (DOCS / "benchmarks.md").read_text()
    assert OUT.is_file() and OUT.name in page
    for figure in FIGURES:
        assert figure.shown in page, figure.path
