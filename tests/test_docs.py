"""The repository explains itself: no file points at documents a user does not have.

A user has only the repository. Its docs, README, configs, code comments and
docstrings say things in the project's own words or point at the project's
own docs (docs/*.md); never at contracts or notes kept elsewhere, nor at the
tracker's issue numbers, which mean nothing to a reader of the code. Every
docs page named anywhere exists.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIS = Path(__file__).resolve()

# Documents that live outside the repository (spelled in pieces so this file does not name them).
OUTSIDE_DOCS = ("RULES", "PROTOCOL", "RESULTS", "NOTES", "STYLE")
OUTSIDE = re.compile(r"\b(?:" + "|".join(OUTSIDE_DOCS) + r")\.md\b|(?<![\w.-])(?:\.\./)?" + "shared" + r"/")
ISSUE_MARK = re.compile(r"\(issues? \d+|\bissues? #?\d+\b", re.IGNORECASE)
DOCS_PAGE = re.compile(r"\bdocs/([\w-]+\.md)\b")
CODE_FOLDERS = ("arena/", "bots/", "tests/", "benchmarks/")
SKIP_FOLDERS = ("tests/data/",)  # recorded data: what the code wrote, not prose


def tracked_files() -> list[Path]:
    """The repository's files: git's list when this is a checkout, else every
    file but the usual untracked places."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "results", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
        names = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
        ]
    return [ROOT / n for n in names if not n.startswith(SKIP_FOLDERS) and (ROOT / n).is_file()]


def texts() -> list[tuple[str, str]]:
    out = []
    for path in tracked_files():
        if path.resolve() == THIS:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # a binary file (a PNG, a policy table) says nothing to a reader
        out.append((str(path.relative_to(ROOT)), text))
    return out


def hits(pattern: re.Pattern[str], files: list[tuple[str, str]]) -> list[str]:
    return [
        f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
        for name, text in files
        for m in pattern.finditer(text)
    ]


@pytest.fixture(scope="module")
def files() -> list[tuple[str, str]]:
    found = texts()
    assert len(found) > 50 and any(name == "README.md" for name, _ in found)  # the scan sees the repository
    return found


def test_no_file_points_outside_the_repository(files: list[tuple[str, str]]) -> None:
    found = hits(OUTSIDE, files)
    assert not found, "name a file in the repository (docs/...) instead:\n" + "\n".join(found)


def test_code_carries_no_issue_numbers(files: list[tuple[str, str]]) -> None:
    code = [(name, text) for name, text in files if name.startswith(CODE_FOLDERS) and name != "tests/test_docs.py"]
    found = hits(ISSUE_MARK, code)
    assert not found, "say what the code does and why, not which issue asked for it:\n" + "\n".join(found)


def test_every_docs_page_named_exists(files: list[tuple[str, str]]) -> None:
    missing = [h for h in hits(DOCS_PAGE, files) if not (ROOT / "docs" / h.rsplit("'docs/", 1)[1][:-1]).exists()]
    assert not missing, "no such page:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    "line, bad",
    [
        ("see RESULTS" + ".md, Determinism", True),
        ("the contract is `../" + "shared/RULES" + ".md`", True),
        ("in /work/" + "shared/NOTES" + ".md", True),
        ("docs/records.md, the match record", False),
        ("a shared file (the stdlib, /usr/share/dict)", False),
        ("multiprocessing.shared_memory", False),
    ],
)
def test_the_patterns(line: str, bad: bool) -> None:
    """The checks above find what they are for, and only that."""
    assert bool(OUTSIDE.search(line)) is bad
    assert ISSUE_MARK.search("# --- arena check (issue 3) ---") and ISSUE_MARK.search("(issues 11 and 18)")
    assert not ISSUE_MARK.search("a known issue with pipes")
