"""Where the built-in bots are.

The project's ``bots/`` folder is the built-in bots. An installed package
(``pip install .``, not editable) carries a copy of it as ``arena/bots/``
(setup.py puts it there); a checkout or an editable install has the folder
itself beside the package. Looked up once, by path, never by import: the bots
are files a sandbox runs, not modules of the package.
"""

from __future__ import annotations

from pathlib import Path

import arena

_PACKAGE = Path(arena.__file__).resolve().parent


def builtin_bots() -> Path:
    """The folder of the built-in bots: the package's copy where it was
    installed with one, else the checkout's ``bots/`` beside the package (only
    where the package's parent holds ``pyproject.toml``: a ``bots/`` beside an
    installed package in site-packages would be someone else's)."""
    shipped = _PACKAGE / "bots"
    if not shipped.is_dir() and (_PACKAGE.parent / "pyproject.toml").is_file():
        return _PACKAGE.parent / "bots"
    return shipped


BUILTIN_BOTS = builtin_bots()
