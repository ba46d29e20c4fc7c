"""The documentation site builds, strictly, and every page of it is in its navigation."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def nav_pages() -> set[str]:
    """Every page the site's navigation lists (paths relative to docs/)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = yaml.safe_load(text.split("\nmarkdown_extensions:")[0])["nav"]
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, str):
            found.add(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(nav)
    return found


def test_every_page_is_in_the_navigation_and_every_listed_page_exists() -> None:
    pages = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    assert nav_pages() == pages


def test_the_readme_links_only_to_pages_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links, "the README links to the docs site"
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert missing == []


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    # strict: a broken link, a page outside the nav or an API object mkdocstrings cannot
    # find fails the build.
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "", "HOME": str(tmp_path)},
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "index.html").is_file()
    reference = (tmp_path / "reference" / "index.html").read_text(encoding="utf-8")
    assert "EpisodicMemory" in reference  # the API reference was generated from docstrings
    # Docstrings render: an example is highlighted code, never Markdown quotes; no Sphinx
    # role or directive shows as text.
    assert '<span class="gp">&gt;&gt;&gt; </span>' in reference  # a doctest, as code
    for page in tmp_path.rglob("*.html"):
        problems = unrendered(page.read_text(encoding="utf-8"))
        assert problems == [], (str(page.relative_to(tmp_path)), problems[:5])


RAW_ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|data|attr|exc|obj):(?:<code>|`)")
DIRECTIVE = re.compile(r"(?:^|>)\s*\.\. [a-z-]+::")
QUOTED_DOCTEST = re.compile(r"<blockquote>\s*(?:<blockquote>|<p>&gt;&gt;&gt;)")


def unrendered(html: str) -> list[str]:
    """What of a docstring shows as source on a built page: roles, directives, quoted doctests."""
    return [
        f"{kind}: {html[max(0, m.start() - 60) : m.end() + 60]!r}"
        for kind, pattern in (
            ("raw role", RAW_ROLE),
            ("literal directive", DIRECTIVE),
            ("doctest as quotes", QUOTED_DOCTEST),
        )
        for m in pattern.finditer(html)
    ]


def test_the_check_over_the_site_sees_what_a_bad_docstring_renders_to() -> None:
    # What mkdocstrings made of the docstrings before they were Markdown.
    assert unrendered("<p>See :class:<code>Episode</code>.</p>")
    assert unrendered("<p>.. code-block:: python</p>")
    assert unrendered("<blockquote>\n<blockquote>\n<blockquote>\n<p>x = 1")
    assert unrendered("<blockquote><p>&gt;&gt;&gt; memory.recall('x')</p></blockquote>")
    assert unrendered('<div class="highlight"><pre>&gt;&gt;&gt; x</pre></div>') == []
