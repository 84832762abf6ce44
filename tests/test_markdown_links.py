"""Every relative link in the repository's Markdown points at something that exists.

Why: folders move (issue 45 moved every study into ``methods/studies/<study>/`` and the
board into ``leaderboards/ladder/``); a README whose links dangle sends a reader nowhere.
Links that leave the repository (``../shared/...``) are not checked: a user's clone has no
such neighbour.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def dangling_links(root: Path, files: list[str]) -> list[str]:
    """``file: target`` for each relative link of ``files`` whose target does not exist."""
    bad = []
    for name in files:
        path = root / name
        for match in LINK.finditer(path.read_text(encoding="utf-8")):
            target = match.group(1)
            if re.match(r"^[a-z]+:", target) or target.startswith("/"):
                continue
            resolved = (path.parent / target).resolve()
            if not resolved.is_relative_to(root.resolve()):
                continue
            if not resolved.exists():
                bad.append(f"{name}: {target}")
    return bad


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout")
def test_no_markdown_link_dangles() -> None:
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    assert dangling_links(REPO, [f for f in files if (REPO / f).is_file()]) == []


def test_a_dangling_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "here.md").write_text("see [a](here.md), [b](gone/README.md#x), "
                                      "[c](https://example.org), [d](../../outside.md)\n")
    assert dangling_links(tmp_path, ["here.md"]) == ["here.md: gone/README.md"]
