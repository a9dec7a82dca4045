"""The compiled modules (arena/compiled.py) are their source, only faster.

A user relies on it in three ways: the records of a run are the same whether
the per-decision modules run compiled or from source; ``ARENA_PURE_PYTHON``
runs the source; and an edited source file is never shadowed by a stale
compiled module (a developer's change would silently not run). Each check
runs in a fresh interpreter, since the choice is made once per process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena import compiled

ROOT = Path(__file__).resolve().parent.parent
BUILT = compiled.active()
needs_build = pytest.mark.skipif(not BUILT, reason=f"the compiled modules are not in use here: {compiled.status()}")

# Matches of every preset, 2 to 5 seats, five built-in bots in-process: a
# digest of their records without the timings (think, seconds).
PLAY = r"""
import hashlib, json
from arena import compiled
from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import PRESETS, Rules
from arena.match.inprocess import InProcessTransport
from arena.match.referee import play_match
from arena.protocol.loader import load_python_bot

bots = [load_python_bot(f"bots/{n}.py") for n in ("probabilistic", "bluffer", "calza", "cautious", "random")]
digest = hashlib.sha256()
for preset in sorted(PRESETS):
    rules = Rules.preset(preset).to_dict()
    for i in range(6):
        n = 2 + i % 4
        spec = MatchSpec(index=i, match=f"m-{i}", variant=preset, rules=rules, entrants=tuple(range(n)),
                         seed=derive_seed(preset, i, "bots"), dice_seed=derive_seed(preset, i), table=0, rotation=0)
        players = [InProcessTransport(bots[(i + k) % len(bots)], f"b{k}") for k in range(n)]
        record = json.loads(play_match(spec, players, [f"b{k}" for k in range(n)], 1000).record.to_json())
        del record["think"], record["seconds"]
        digest.update(json.dumps(record, sort_keys=True).encode())
print(compiled.status())
print(digest.hexdigest())
"""


def run(code: str, cwd: Path, pure: bool) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_PURE_PYTHON"}
    if pure:
        env["ARENA_PURE_PYTHON"] = "1"
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_pure_python_runs_the_source() -> None:
    status, where = run(
        "from arena import compiled; import arena.engine.rules as r; print(compiled.status()); print(r.__file__)",
        ROOT,
        pure=True,
    )
    assert status == "pure Python: ARENA_PURE_PYTHON is set"
    assert where.endswith("rules.py")


@needs_build
def test_compiled_and_source_give_the_same_records() -> None:
    built = run(PLAY, ROOT, pure=False)
    source = run(PLAY, ROOT, pure=True)
    assert built[0] == "compiled (mypyc)" and source[0].startswith("pure Python")
    assert built[1] == source[1]


@needs_build
def test_a_source_newer_than_its_compiled_module_is_what_runs(tmp_path: Path) -> None:
    """After an edit (or a git pull) without a rebuild, every compiled module
    is loaded from its source: one stale module would call into the others'
    old code, so it is all of them or none."""
    shutil.copytree(ROOT / "arena", tmp_path / "arena", copy_function=shutil.copy2)
    shutil.copy2(ROOT / "pyproject.toml", tmp_path)  # a checkout: an installed package is never edited in place
    edited = tmp_path / "arena" / "protocol" / "parse.py"
    later = time.time() + 60
    os.utime(edited, (later, later))
    status, rules, parse = run(
        "from arena import compiled; import arena.engine.rules as r, arena.protocol.parse as p; "
        "print(compiled.status()); print(r.__file__); print(p.__file__)",
        tmp_path,
        pure=False,
    )
    assert status.startswith("pure Python: arena/protocol/parse.py changed after it was compiled"), status
    assert rules == str(tmp_path / "arena" / "engine" / "rules.py")
    assert parse == str(edited)


def test_the_install_leaves_the_bytecode_a_bot_host_loads() -> None:
    """Where PYTHONDONTWRITEBYTECODE is set (these machines, many container
    images), no import writes bytecode: every Python bot's start would compile
    the modules its host imports, 16 ms of its CPU. The editable install
    (setup.py) writes it beside the source."""
    code = (
        "import sys, os; import arena.protocol.hostloop, arena.protocol.host; "
        "print('\\n'.join(m.__cached__ for n, m in sorted(sys.modules.items()) "
        "if n.startswith('arena') and getattr(m, '__cached__', None)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert out.returncode == 0, out.stderr
    cached = out.stdout.split()
    # The host's own modules and the SDK's at least (the compiled ones have none to write).
    assert {"host", "loader", "__init__"} <= {Path(c).name.split(".")[0] for c in cached}, cached
    missing = [c for c in cached if not os.path.isfile(c)]
    assert not missing, f"no bytecode for {missing}: reinstall (pip install -e .) to write it"
