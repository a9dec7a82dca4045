"""What a bot sees of the files, through `arena run` as an entrant would: its
own files (``bots/<name>.py`` or ``.yaml``, ``bots/<name>/``) and nothing else of the project.

Each attack bot is built in a throw-away project (``tmp_path``) holding a
past run's ``run.json`` (its seed derives every die of that run), a config,
and another bot. An attack is either refused before any match with one clear
line naming the bot, the path and why (and no run folder appears), or it
plays and lists what it could reach, and the test asserts on that list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.apps.cli import main
from arena.engine.records import MatchRecord
from arena.running.store import iter_records
from arena.sandbox import available

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
needs_bwrap = pytest.mark.skipif(available().bwrap is None, reason="bubblewrap is not installed")

# A Python bot that, on its first turn, tries to read every path in PATHS and
# lists every entry under TOPS (os.walk: never into a linked folder), then
# plays. Relative paths are relative to its own folder, which it reports
# relative too (so the report reads the same wherever its files were put).
PROBE = """\
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
PATHS = {paths!r}
TOPS = {tops!r}
_done = []


def _shown(path):
    rel = os.path.relpath(path, HERE)
    return path if rel.startswith("..") else rel


def act(turn):
    if not _done:
        _done.append(1)
        read = []
        for p in PATHS:
            try:
                with open(os.path.join(HERE, p), "rb") as f:
                    f.read(1)
                read.append(p)
            except OSError:
                pass
        seen = []
        for top in TOPS:
            for dirpath, dirnames, filenames in os.walk(os.path.join(HERE, top)):
                seen += [_shown(os.path.join(dirpath, n)) for n in dirnames + filenames]
        print("PROBE " + json.dumps({{"read": read, "seen": sorted(seen)}}), file=sys.stderr, flush=True)
    return "dudo" if turn.legal.dudo else next(turn.legal.bids())
"""

# The protocol's own shell example (docs/protocol.md), after a listing of the
# folder its command lives in and attempts to read other bots and the project.
PEEK = """\
#!/bin/sh
here=$(dirname "$(dirname "$0")")  # the bots' folder: this script is in the bot's own folder
ls -A "$here" | sed 's/^/PROBE-LS /' >&2
for f in "$here/victim.py" "$here/../league.yaml" "$here/../results/old/run.json"; do
  if cat "$f" >/dev/null 2>&1; then echo "PROBE-READ $f" >&2; fi
done
echo PROBE-DONE >&2
while IFS= read -r line; do
  case "$line" in
    *'"type": "hello"'*|*'"type":"hello"'*) echo '{"type": "ready", "name": "peek"}' ;;
    *'"type": "turn"'*|*'"type":"turn"'*)
      case "$line" in
        *'"dudo": true'*|*'"dudo":true'*) echo '{"action": "dudo"}' ;;
        *) q=$(echo "$line" | sed 's/.*"2": *\\([0-9]*\\).*/\\1/'); echo "{\\"action\\": \\"bid\\", \\"quantity\\": $q, \\"face\\": 2}" ;;
      esac ;;
  esac
done
"""


def project(tmp_path: Path, bots: list[str]) -> Path:
    """A project folder: bots/victim.py (another entrant), a past run's
    run.json, and league.yaml naming ``bots`` and the victim."""
    proj = tmp_path / "proj"
    (proj / "bots").mkdir(parents=True)
    shutil.copy(ROOT / "bots" / "random.py", proj / "bots" / "victim.py")
    (proj / "results" / "old").mkdir(parents=True)
    (proj / "results" / "old" / "run.json").write_text('{"seed": 4242}')
    cfg = {"name": "attack", "seed": 5, "bots": [*bots, "bots/victim.py"], "players": 2, "matches": 3, "workers": 1}
    (proj / "league.yaml").write_text(json.dumps(cfg))
    return proj


def refused(proj: Path, *needles: str, out: str = "results/live") -> str:
    """`arena run` refuses before any match: exit status 1 or 2, one message
    naming each of ``needles``, and no run folder."""
    old = os.getcwd()
    os.chdir(proj)
    try:
        result = CliRunner().invoke(main, ["run", "league.yaml", "--out", out])
    finally:
        os.chdir(old)
    assert result.exit_code in (1, 2), result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)
    assert not (proj / out).exists()
    return result.output


def plays(proj: Path, *args: str, **env: str) -> tuple[list[MatchRecord], str]:
    """`arena run` in ``proj``; the records and every stderr the run kept."""
    r = subprocess.run(
        [*ARENA, "run", "league.yaml", "--out", "results/live", *args],
        cwd=proj,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    out = proj / "results" / "live"
    kept = "\n".join(
        p.read_text(errors="replace")
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.suffix not in (".parquet", ".jsonl", ".json", ".csv")
    )
    return list(iter_records(out)), kept


def probe_report(kept: str) -> dict[str, Any]:
    lines = [line for line in kept.splitlines() if line.startswith("PROBE ")]
    assert lines, kept[-2000:]
    return json.loads(lines[-1][len("PROBE ") :])


def no_faults(records: list[MatchRecord]) -> None:
    assert records and all(r.faults == () for r in records), [r.faults for r in records]


# -- refused before the run ------------------------------------------------------


def test_a_symlinked_data_folder_is_refused(tmp_path: Path) -> None:
    """bots/spy -> .. would show the whole project (and results/*/run.json)."""
    proj = project(tmp_path, ["bots/spy.py"])
    (proj / "bots" / "spy.py").write_text(PROBE.format(paths=[], tops=[]))
    (proj / "bots" / "spy").symlink_to("..")
    refused(proj, "spy", str(proj / "bots" / "spy"), "symlink")


def test_a_symlinked_bot_file_or_own_file_is_refused(tmp_path: Path) -> None:
    proj = project(tmp_path, ["bots/spy.yaml"])
    (proj / "bots" / "spy.yaml").write_text("command: [sh, ./spy/spy.sh]\n")
    (proj / "bots" / "spy").mkdir()
    (proj / "bots" / "spy" / "spy.sh").symlink_to(proj / "results" / "old" / "run.json")
    refused(proj, "spy", "./spy/spy.sh", str(proj / "results" / "old" / "run.json"), "not one of the bot's own files")
    (proj / "bots" / "spy" / "spy.sh").unlink()
    (proj / "bots" / "spy" / "spy.sh").write_text("#!/bin/sh\n")
    (proj / "bots" / "spy.yaml").unlink()
    (proj / "bots" / "spy.yaml").symlink_to(proj / "league.yaml")
    refused(proj, "spy", "symlink", str(proj / "league.yaml"))


def test_an_absolute_argument_climbing_out_is_refused(tmp_path: Path) -> None:
    """command: [sh, ./climb.sh, /abs/bots/..] got the project root bound."""
    proj = project(tmp_path, ["bots/climb.yaml"])
    (proj / "bots" / "climb").mkdir()
    (proj / "bots" / "climb" / "climb.sh").write_text(PEEK)
    (proj / "bots" / "climb.yaml").write_text(f"command: [sh, ./climb/climb.sh, {proj}/bots/..]\n")
    refused(proj, "climb", f"{proj}/bots/..", "not one of the bot's own files")


def test_a_manifest_naming_another_bots_file_is_refused(tmp_path: Path) -> None:
    proj = project(tmp_path, ["bots/thief.yaml"])
    (proj / "bots" / "thief").mkdir()
    (proj / "bots" / "thief" / "thief.sh").write_text(PEEK)
    (proj / "bots" / "thief.yaml").write_text("command: [sh, ./thief/thief.sh, ./victim.py]\n")
    refused(proj, "thief", "./victim.py", str(proj / "bots" / "victim.py"), "not one of the bot's own files")
    # ... as its program, or by climbing out of its folder.
    (proj / "bots" / "thief.yaml").write_text("command: [./victim.py]\n")
    refused(proj, "thief", "./victim.py", "not one of the bot's own files")
    (proj / "bots" / "thief.yaml").write_text("command: [sh, ../league.yaml]\n")
    refused(proj, "thief", "../league.yaml", "not one of the bot's own files")
    (proj / "bots" / "thief.yaml").write_text(f"command: [{proj}/bots/victim.py]\n")
    refused(proj, "thief", str(proj / "bots" / "victim.py"))


def test_a_run_folder_inside_a_bots_data_folder_is_refused(tmp_path: Path) -> None:
    proj = project(tmp_path, ["bots/nest.py"])
    (proj / "bots" / "nest.py").write_text(PROBE.format(paths=[], tops=[]))
    (proj / "bots" / "nest").mkdir()
    refused(proj, "out", "bots/nest/run", "data folder of bot nest", out="bots/nest/run")


# -- plays, and sees nothing foreign ---------------------------------------------


LINKS = {
    "rel_old": "../../results/old/run.json",
    "rel_live": "../../results/live/run.json",
    "host": "/etc/hostname",
    "up": "..",
}


def leaky_project(tmp_path: Path) -> tuple[Path, list[str]]:
    """A bot whose data folder holds links out of it: to a past run's and the
    live run's run.json (relative and absolute), to /etc/hostname and to the
    project (relative and absolute). Returns the project and the data folder's
    entries, relative to the bots' folder."""
    proj = project(tmp_path, ["bots/leaky.py"])
    data = proj / "bots" / "leaky"
    data.mkdir()
    (data / "own.txt").write_text("mine")
    links = {
        **LINKS,
        "abs_old": str(proj / "results" / "old" / "run.json"),
        "abs_live": str(proj / "results" / "live" / "run.json"),
        "abs_up": str(proj),
    }
    for name, target in links.items():
        (data / name).symlink_to(target)
    paths = [
        "leaky/own.txt",
        *(f"leaky/{n}" for n in links),
        "leaky/up/victim.py",
        "leaky/abs_up/league.yaml",
        str(proj / "bots" / "victim.py"),
        str(proj / "league.yaml"),
        str(proj / "results" / "old" / "run.json"),
        str(proj / "results" / "live" / "run.json"),
        "/etc/hostname",
    ]
    (proj / "bots" / "leaky.py").write_text(PROBE.format(paths=paths, tops=[str(proj), "."]))
    assert os.path.exists("/etc/hostname")
    return proj, ["leaky.py", "leaky", *(f"leaky/{n}" for n in ["own.txt", *links])]


@needs_bwrap
def test_symlinks_inside_the_data_folder_dangle(tmp_path: Path) -> None:
    """The bot plays, and none of its links leads anywhere it can read."""
    proj, own = leaky_project(tmp_path)
    records, kept = plays(proj)
    no_faults(records)
    report = probe_report(kept)
    assert report["read"] == ["leaky/own.txt"]  # its own data, nothing through any link
    # Everything it finds of the project: its own files (the bots' folder "." leads to them).
    assert set(report["seen"]) == {".", *own}


@needs_bwrap
def test_a_command_in_a_folder_of_other_bots_sees_only_its_own_files(tmp_path: Path) -> None:
    """command: [./peek.sh] used to bind the folder of its program: all of bots/."""
    proj = project(tmp_path, ["bots/peek.yaml"])
    (proj / "bots" / "peek").mkdir()
    (proj / "bots" / "peek" / "peek.sh").write_text(PEEK)
    (proj / "bots" / "peek" / "peek.sh").chmod(0o755)
    (proj / "bots" / "peek.yaml").write_text("command: [./peek/peek.sh]\n")
    (proj / "bots" / "peek.log").write_text("the author's log beside the bot: not the bot's\n")
    (proj / "bots" / "peeker.py").write_text("# another bot whose name starts the same\n")
    records, kept = plays(proj)
    no_faults(records)
    assert "PROBE-DONE" in kept
    listed = {line.split(" ", 1)[1] for line in kept.splitlines() if line.startswith("PROBE-LS ")}
    assert listed == {"peek", "peek.yaml"}
    assert "PROBE-READ" not in kept


# -- bots copied to another node (the Ray backend's pack_bots / unpack_bots) -------


def test_shipped_bots_carry_links_as_links_and_the_worker_checks_the_data_folder(tmp_path: Path) -> None:
    from arena.botfile.spec import load_bot
    from arena.errors import RunError
    from arena.running.backends.ray import pack_bots, unpack_bots

    proj, own = leaky_project(tmp_path)
    spec = load_bot(proj / "bots" / "leaky.py")
    packed = pack_bots([("leaky", spec)])
    entries = {rel: (kind, payload) for rel, kind, _, payload in packed[0][3]}
    assert sorted(entries) == sorted(own)
    assert entries["leaky/rel_old"] == ("link", b"../../results/old/run.json")  # the link, not run.json
    assert all(b"4242" not in payload for _, payload in entries.values())
    [(label, copy)] = unpack_bots(packed, tmp_path / "node")
    assert label == "leaky" and copy.sha256 == spec.sha256
    assert os.readlink(copy.folder / "leaky" / "abs_old") == str(proj / "results" / "old" / "run.json")
    # A data folder that differs from the one the run recorded is refused on the worker.
    label, name, sha, shipped = packed[0]
    changed = [(rel, kind, x, b"not mine" if rel == "leaky/own.txt" else payload) for rel, kind, x, payload in shipped]
    with pytest.raises(RunError, match="leaky.*hash"):
        unpack_bots([(label, name, sha, changed)], tmp_path / "node2")
    relinked = [(rel, kind, x, b"/etc/passwd" if rel == "leaky/host" else payload) for rel, kind, x, payload in shipped]
    with pytest.raises(RunError, match="leaky.*hash"):
        unpack_bots([(label, name, sha, relinked)], tmp_path / "node3")
    # Nothing shipped is written outside the bot's folder or through a link.
    for bad in ("../escape.txt", "leaky/up/victim.py", "/tmp/escape.txt"):
        with pytest.raises(RunError, match="not"):
            unpack_bots([(label, name, sha, [*shipped, (bad, "file", False, b"x")])], tmp_path / "node4")
        shutil.rmtree(tmp_path / "node4")
    assert not (tmp_path / "escape.txt").exists() and not Path("/tmp/escape.txt").exists()
