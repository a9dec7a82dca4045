"""Output that knows where it goes: with stdout and stderr redirected to files
(a CI log), `arena run`, `stats`, `report` and `sprt` write plain lines, no
progress bar, no redrawn line, no step percentages; and `arena sprt` shows
the pair outcomes as fastchess does, and what a resume found."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from arena.running.store import read_records

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
# What a terminal's progress display leaves in a file: a carriage return, an
# escape sequence, a bar, a step's percentage.
FRAGMENTS = re.compile(r"\r|\x1b|\[#+\.*\]|\[\.+\]|\(\d+%\)|\d+/\d+ \(\d+%\)")


def arena(*args: str, cwd: Path) -> tuple[int, str, str]:
    """Run with stdout and stderr redirected to files, as a CI job does."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with open(out, "w") as o, open(err, "w") as e:
        code = subprocess.run(
            [*ARENA, *args], cwd=cwd, stdout=o, stderr=e, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)}
        ).returncode
    return code, out.read_text(), err.read_text()


def plain(text: str) -> None:
    found = FRAGMENTS.findall(text)
    assert not found, f"progress fragments {found!r} in:\n{text}"


def test_redirected_run_stats_and_report_have_no_progress_fragments(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        json.dumps(
            {
                "name": "o",
                "bots": ["random", "probabilistic", "cautious", "bluffer"],
                "players": 4,
                "matches": 30,
                "seed": 12345678901,
                "variants": {"classic": {"preset": "classic"}},
            }
        )
    )
    code, out, err = arena("run", str(cfg), "--out", "o", "--live-every", "0.5", cwd=tmp_path)
    assert code == 0, err
    plain(out + err)
    assert "Plackett-Luce Elo" in out and "30 matches played" in err
    # The header names the sandbox once ("sandbox auto: bwrap ..." or another mode), not "sandbox: sandbox auto".
    assert re.search(r"^sandbox (auto|strict|off): ", err, re.MULTILINE) and "sandbox: sandbox" not in err
    for args in (["stats", "o", "--resamples", "400"], ["ratings", "o", "--resamples", "400"], ["report", "o"]):
        code, out, err = arena(*args, cwd=tmp_path)
        assert code == 0, err
        plain(out + err)
        assert err == ""  # nothing but the result: no step counts in a log


def test_sprt_shows_wins_losses_and_the_pentanomial_and_what_a_resume_found(tmp_path: Path) -> None:
    args = [
        "sprt",
        "probabilistic",
        "random",
        "--max-matches",
        "60",
        "--seed",
        "12345678901",
        "--out",
        "s",
        "--workers",
        "2",
    ]
    code, out, err = arena(*args, cwd=tmp_path)
    assert code == 0, err
    plain(out + err)
    meta = json.loads((tmp_path / "s" / "run.json").read_text())
    pairs = meta["sprt"]["pairs"]
    # The counts, from the records themselves: heads up, probabilistic's games won in the pairs the test read.
    recs = {r.match: r for r in read_records(tmp_path / "s").records}
    wins = sum(
        recs[f"m-{i:06d}"].placements[recs[f"m-{i:06d}"].bots.index("probabilistic")] == 1 for i in range(2 * pairs)
    )
    c = meta["sprt"]["counts"]
    line = (
        f"Games: {2 * pairs}, Wins: {wins}, Losses: {2 * pairs - wins}, Draws: 0, "
        f"Ptnml(0-2): [{int(c['below'])}, 0, {int(c['level'])}, 0, {int(c['above'])}]"
    )
    assert line in out.splitlines(), out
    # A resume: the folder as a stop after ten matches leaves it; the same command says what it found.
    games = tmp_path / "s" / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    games.write_bytes(b"".join(sorted(lines, key=lambda raw: json.loads(raw)["match"])[:10]))
    (tmp_path / "s" / "run.json").write_text(json.dumps({**meta, "status": "interrupted"}))
    code, out, err = arena(*args, cwd=tmp_path)
    assert code == 0, err
    plain(out + err)
    assert re.search(
        r"^resumed: 10 matches were already recorded; the test so far: LLR [-+]\d+\.\d\d .* 5 pairs .*; "
        r"Games: 10, Wins: \d+, Losses: \d+, Draws: 0, Ptnml\(0-2\): \[\d+, 0, \d+, 0, \d+\]$",
        err,
        re.MULTILINE,
    ), err
    assert line in out.splitlines()  # the same verdict on the same pairs


def test_sprt_in_a_field_counts_pairs() -> None:
    from arena.running.sprt import SprtParams, SprtTest

    test = SprtTest(SprtParams("a", "b"), 10)
    for t, (pa, pb) in enumerate([(1, 2), (2, 2), (3, 1)]):
        test.observe_places(2 * t, ["a", "x", "y"], [pa, 3, 2] if pa != 3 else [3, 1, 2])
        test.observe_places(2 * t + 1, ["b", "x", "y"], [pb, 3, 2] if pb != 1 else [1, 3, 2])
    assert test.outcomes() == "Pairs: 3, a above b: 1, level: 1, below: 1"
