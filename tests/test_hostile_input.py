"""A referee that survives any input, and a terminal that bots cannot reach:
deep nesting in replies, YAML alias bombs in manifests, escape sequences in
stderr, names and versions, through the commands a user runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.apps.cli import main
from arena.running.store import iter_records

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _copy_bot(folder: Path, name: str, env: dict[str, str] | None = None) -> Path:
    """A private copy of a program bot (manifest + its folder with the script), with extra env."""
    folder.mkdir(exist_ok=True)
    shutil.copytree(BOTS / name, folder / name)
    script = next(p for p in (folder / name).iterdir() if p.suffix == ".sh")
    manifest = folder / f"{name}.yaml"
    manifest.write_text(json.dumps({"command": ["bash", f"./{name}/{script.name}"], "env": env or {}}))
    return manifest


def _run(tmp_path: Path, bots: list[str], name: str = "h") -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(
        json.dumps(
            {
                "name": name,
                "seed": 2**40 + 5,
                "bots": bots,
                "players": 3,
                "matches": 4,
                "workers": 1,
                "time": {"budget_ms": 500},
            }
        )
    )
    return subprocess.run(
        [sys.executable, "-m", "arena", "run", str(cfg), "--out", str(tmp_path / name)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_reply_nested_1015_levels_deep_in_a_turn_is_malformed_and_the_run_completes(tmp_path: Path) -> None:
    deep = _copy_bot(tmp_path / "b", "deep")
    r = _run(tmp_path, [str(deep), "probabilistic", "cautious"])
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    records = list(iter_records(tmp_path / "h"))
    assert len(records) == 4
    for rec in records:
        seat = rec.bots.index("deep")
        faults = [f for f in rec.faults if f.seat == seat]
        assert faults and faults[0].kind == "malformed" and "nested" in faults[0].detail


def test_a_reply_nested_1015_levels_deep_to_hello_is_one_clear_line(tmp_path: Path) -> None:
    deep = _copy_bot(tmp_path / "b", "deep", {"DEEP_AT": "hello"})
    r = _run(tmp_path, [str(deep), "probabilistic", "cautious"])
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "deep" in r.stderr and "failed its handshake" in r.stderr and "nested" in r.stderr
    assert not (tmp_path / "h").exists()  # refused before the run folder is touched
    check = CliRunner().invoke(main, ["check", str(deep), "--turns", "20"])
    assert check.exit_code == 1 and "Traceback" not in check.output
    assert "handshake" in check.output and "nested" in check.output


ALIAS_BOMB = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
command: [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


@pytest.mark.parametrize("how", ["check", "run"])
def test_a_yaml_alias_bomb_manifest_is_refused_at_once(tmp_path: Path, how: str) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(ALIAS_BOMB)
    assert len(ALIAS_BOMB) < 1024
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
        "from arena.apps.cli import main; sys.exit(main())"
    )
    if how == "check":
        args = ["check", str(bomb)]
    else:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(json.dumps({"bots": [str(bomb), "random"], "players": 2}))
        args = ["run", str(cfg), "--out", str(tmp_path / "o")]
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "bomb.yaml" in r.stderr and "aliases" in r.stderr and len(r.stderr) < 1000
    assert elapsed < 10  # the interpreter starts in well under a second; a bomb took minutes
    assert "lol" not in r.stderr


def test_a_manifest_over_the_size_cap_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("command: [/bin/true]\n" + "# padding\n" * 10000)
    r = CliRunner().invoke(main, ["check", str(big)])
    assert r.exit_code != 0 and "big.yaml" in r.output and "bytes" in r.output


def test_escape_sequences_never_reach_the_terminal(tmp_path: Path) -> None:
    check = CliRunner().invoke(main, ["check", str(BOTS / "escapes.py"), "--turns", "30"])
    assert check.exit_code == 1
    assert not CONTROL.search(check.output), repr(check.output[:2000])
    assert "\\x1b[2J" in check.output  # shown, visibly escaped, so the author sees what was written
    bots = tmp_path / "b"
    bots.mkdir()
    shutil.copy(BOTS / "escapes.py", bots / "escapes.py")
    r = _run(tmp_path, [str(bots / "escapes.py"), "probabilistic", "cautious"])
    assert r.returncode == 0, r.stderr
    assert not CONTROL.search(r.stdout + r.stderr.replace("\r", "")), repr((r.stdout + r.stderr)[:2000])
    rec = next(iter(iter_records(tmp_path / "h")))
    replay = CliRunner().invoke(main, ["replay", str(tmp_path / "h"), rec.match])
    assert replay.exit_code == 0 and not CONTROL.search(replay.output)
