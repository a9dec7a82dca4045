"""Live standings: the bots followed stay in view, `--live all` shows every
bot, a block redraws the last in place on a terminal, a log gets one line a
display, and an interval is not shown before it means anything."""

from __future__ import annotations

import random
import re

import pytest

from arena.apps.standings import MIN_INTERVAL, LiveStandings, check_follow
from arena.errors import ArenaError
from arena.running.observe import Finished

BOTS = [f"bot{k}" for k in range(8)]


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def feed(standings: LiveStandings, n: int, seed: int = 1) -> None:
    """n four-seat matches; a lower bot number wins more often (bot0 strongest, bot7 weakest)."""
    rng = random.Random(seed)
    for m in range(n):
        seats = rng.sample(BOTS, 4)
        order = sorted(seats, key=lambda b: int(b[3:]) + rng.gauss(0, 2))
        standings.observe(Finished(f"m-{m:06d}", tuple(seats), tuple(order.index(b) + 1 for b in seats)))


def make(tty: bool, **kw: object) -> tuple[LiveStandings, list[str], Clock]:
    out: list[str] = []
    clock = Clock()
    st = LiveStandings(out.append, every=5.0, tty=tty, clock=clock, **kw)  # type: ignore[arg-type]
    return st, out, clock


def test_leaders_then_the_followed_bot_at_its_rank() -> None:
    st, out, clock = make(True, follow=["bot7"])
    feed(st, 400)
    clock.t = 6
    assert st.tick(400, 1000)
    rows = [line for line in out[-1].splitlines() if re.match(r"\s+\d+\. ", line)]
    names = [line.split()[1] for line in rows]
    assert len(names) == 6 and names[-1] == "bot7" and rows[-1].lstrip().startswith("8. ")
    assert "... and 2 more (--live all shows every bot, --follow BOT one)" in out[-1]


def test_live_all_shows_every_bot() -> None:
    st, out, clock = make(True, leaders=None)
    feed(st, 400)
    clock.t = 6
    st.tick(400, 1000)
    names = [m.group(1) for m in re.finditer(r"^\s+\d+\. (\S+)", out[-1], re.MULTILINE)]
    assert sorted(names) == BOTS and "more" not in out[-1]


def test_a_terminal_block_redraws_the_last_in_place() -> None:
    st, out, clock = make(True)
    feed(st, 200)
    clock.t = 6
    st.tick(200, 1000)
    first = out[-1]
    assert first.startswith("\r\x1b[J") and first.count("\n") == 7  # header, five leaders, "... and 3 more"
    feed(st, 200, seed=2)
    clock.t = 10_000
    st.tick(400, 1000)
    assert out[-1].startswith("\r\x1b[7A\x1b[J")  # up over the seven lines, cleared, drawn again
    # A warning in between stays: the next block is drawn below it, not over it.
    st.pending.append("warning: bot7 faulted")
    clock.t = 20_000
    st.tick(400, 1000)
    assert out[-2].endswith("warning: bot7 faulted\n") and out[-1].startswith("\r\x1b[J")


def test_a_log_gets_one_plain_line_a_display() -> None:
    st, out, clock = make(False, follow=["bot6"])
    feed(st, 400)
    clock.t = 61
    st.tick(400, 1000)
    assert len(out) == 1 and out[0].count("\n") == 1 and "\r" not in out[0] and "\x1b" not in out[0]
    assert re.fullmatch(
        r"live after 400/1000 matches \(1:01, 0 with faults\), Elo: 1\. bot0 \d+±\d+, "
        r"(\d\. bot\d \d+±\d+, ){4}7\. bot6 \d+±\d+ \(\+2 more\)\n",
        out[0],
    ), out[0]


def test_no_interval_before_a_bot_has_played_enough() -> None:
    st, out, clock = make(True)
    feed(st, 1)
    clock.t = 6
    st.tick(1, 1000)
    assert "± " not in out[-1].replace("±   ?", "") and out[-1].count("±   ?") == 4
    feed(st, 10 * MIN_INTERVAL, seed=3)
    clock.t = 10_000
    st.tick(51, 1000)
    assert "?" not in out[-1]


def test_follow_names_a_bot_of_the_run() -> None:
    check_follow(["bot3", "mybot"], ["bot3", "mybot@1a2b3c4d", "mybot#2"])
    with pytest.raises(ArenaError) as info:
        check_follow(["bto3"], ["bot3", "bot4"])
    assert str(info.value) == "--follow bto3: no such bot in this run (did you mean bot3?); the bots are bot3, bot4"
