"""Replace one ``## Heading`` section of a markdown file, leaving the others alone."""

from __future__ import annotations

from pathlib import Path


def replace_section(path: Path, heading: str, text: str) -> None:
    """Put ``text`` (which starts with ``heading``) in place of that section, or append it."""
    old = path.read_text(encoding="utf-8") if path.exists() else "# Performance\n"
    lines = old.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        new = old.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "\n".join(lines[:start] + text.rstrip("\n").splitlines() + [""] + lines[end:]).rstrip("\n") + "\n"
    path.write_text(new, encoding="utf-8")
