"""Each bot's stderr is kept per run, match by match, by the run's one writer.

``tests/bots/match_logger.py`` names the match on every line it logs (at
match_start, every turn and match_end), forges a header line and writes bytes
that are not UTF-8; two workers play it as two entrants.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import arena.running.store
from arena.running.config import load_config
from arena.running.runner import run
from arena.running.store import iter_records

ROOT = Path(__file__).resolve().parent.parent
LOGGER = str(ROOT / "tests" / "bots" / "match_logger.py")
HEADER = re.compile(r"^### arena: (m-\d{6}) · worker (\d+)(?: · (.*))?$")


def play(folder: Path, matches: int) -> Path:
    cfg = folder / "c.yaml"
    cfg.write_text(
        json.dumps(
            {
                "name": "logs",
                "seed": 9,
                "matches": matches,
                "players": 3,
                "workers": 2,
                "bots": [LOGGER, LOGGER, "probabilistic", "random"],
                "out": str(folder / "run"),
            }
        )
    )
    result = run(load_config(cfg))
    assert result.status == "complete", result.error
    return folder / "run"


def sections(path: Path) -> list[tuple[str, str, str, list[str]]]:
    """(match, worker, note, lines) for each header of a stderr file."""
    out: list[tuple[str, str, str, list[str]]] = []
    for line in path.read_bytes().decode("utf-8", "replace").splitlines():
        m = HEADER.match(line)
        if m:
            out.append((m.group(1), m.group(2), m.group(3) or "", []))
        else:
            assert out, f"a line before any header: {line!r}"
            out[-1][3].append(line)
    return out


def test_two_workers_every_line_under_its_match_and_nothing_lost(tmp_path: Path) -> None:
    folder = play(tmp_path, 40)
    records = list(iter_records(folder))
    for label in ("match_logger", "match_logger#2"):
        secs = sections(folder / "bots" / f"{label}.stderr")
        workers = {w for _, w, _, _ in secs}
        assert len(workers) == 2  # both workers wrote into the one file, neither overwrote the other
        lines: dict[str, list[str]] = defaultdict(list)
        ends: list[str] = []
        for match, _, note, body in secs:
            assert match != "m-999999"  # the forged header was not taken for one
            for i, line in enumerate(body):
                words = line.split()
                if words and words[0] in ("start", "turn"):
                    assert words[1] == match, (line, match, note)  # under the right header
                if words and words[0] == "end":
                    # Written on match_end, while the worker had already begun the
                    # process's next match: under that match's header, before its start.
                    ends.append(words[1])
                    assert words[1] == match or f"start {match}" in " ".join(body[i + 1 :]), (line, match)
                    continue
                lines[match].append(line)
            assert note in ("", "after its end"), note
        mine = [r for r in records if label in r.bots]
        assert mine
        for rec in mine:
            seat = rec.bots.index(label)
            got = lines[rec.match]
            turns = sum(1 for rnd in rec.rounds for a in rnd.actions if a.seat == seat)
            assert f"start {rec.match} seat {seat}" in got
            assert "\\### arena: m-999999 · worker 0" in got  # escaped, kept
            assert "bytes \ufffd\ufffd not utf-8" in got
            assert Counter(w.split()[0] for w in got)["turn"] == turns  # nothing lost
        played = {rec.match for rec in mine}
        assert sorted(ends) == sorted(played)  # every match_end line, the last match's included
        assert set(lines) == played  # and nothing filed under a match it did not play
    assert not any("match_logger" in f.detail for r in records for f in r.faults)


def test_the_file_is_bounded_and_rotates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bound = 8192
    monkeypatch.setattr(arena.running.store, "STDERR_MAX", bound)
    folder = play(tmp_path, 120)
    path = folder / "bots" / "match_logger.stderr"
    older = path.with_name(path.name + ".1")
    assert older.exists()  # the log outgrew the bound at least once
    assert path.stat().st_size <= bound and older.stat().st_size <= bound
    # The newest file starts at a header, and its sections are whole.
    first = path.read_bytes().split(b"\n", 1)[0].decode()
    assert HEADER.match(first), first
    # The newest match's log is kept: in the newest file or, when another
    # worker's later-arriving section pushed it out, in the one before.
    last_match = max(r.match for r in iter_records(folder) if "match_logger" in r.bots)
    assert any(m == last_match for m, _, _, _ in sections(path) + sections(older))


def test_take_stderr_hands_out_each_byte_once_and_counts_what_it_dropped(tmp_path: Path) -> None:
    from arena.botfile.spec import load_bot
    from arena.match.process import BotProcess
    from arena.sandbox import SandboxLimits

    bot = tmp_path / "noisy.py"
    bot.write_text(
        "import sys\nfrom arena.sdk import DUDO\n\n"
        "def act(turn):\n"
        "    sys.stderr.write('x' * 3000 + '\\n'); sys.stderr.flush()\n"
        "    return DUDO if turn.legal.dudo else next(iter(turn.legal.bids()))\n"
    )
    from arena.engine.rules import Rules, deal, new_match
    from arena.protocol.messages import match_start_message, turn_message

    state = deal(new_match(Rules(), 2, 0), [(1, 2, 3, 4, 5), (2, 2, 3, 3, 6)])
    with BotProcess(load_bot(bot), SandboxLimits(stderr_tail=4096)) as proc:
        proc.start()
        assert proc.take_stderr() == (b"", 0)
        proc.notify(match_start_message("m-1", 0, ["noisy", "other"], Rules().to_dict(), 1))
        proc.request(turn_message("m-1", state, 1000))
        data, lost = proc.take_stderr()
        assert data == b"x" * 3000 + b"\n" and lost == 0
        assert proc.take_stderr() == (b"", 0)  # nothing twice
        for _ in range(3):
            proc.request(turn_message("m-1", state, 1000))
        data, lost = proc.take_stderr()
        assert len(data) == 4096 and lost == 3 * 3001 - 4096 and data.endswith(b"x\n")
