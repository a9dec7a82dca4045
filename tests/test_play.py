"""arena play: a human at the table, through the real referee and sandboxed bots.

The end-to-end test drives ``arena play`` through a pseudo-terminal like a
person would: it reads what is shown (dice, bids, legal moves, the assist
odds), makes a typo, tries an illegal bid, then plays a simple strategy to
the end of the match. The assist figures are checked against binomial odds
computed here from scratch with math.comb.
"""

from __future__ import annotations

import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.apps.play import LEFT_KIND, HumanPlayer, candidate_raises, illegal_reason, play_setup
from arena.engine.records import MatchRecord
from arena.engine.replay import check
from arena.engine.rules import CALZA, DUDO, Bid, Rules
from arena.errors import BotFault
from arena.protocol import parse
from arena.sdk import Turn

pytest.importorskip("pexpect", reason="the test extra is not installed (pip install -e '.[test]')")
import pexpect  # noqa: E402  (after the skip above)

ROOT = Path(__file__).resolve().parent.parent


# --- independent odds ---------------------------------------------------------


def binomial_tail(need: int, n: int, p: float) -> float:
    """P(X >= need), X ~ Binomial(n, p), from the definition."""
    if need <= 0:
        return 1.0
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(need, n + 1))


def odds(q: int, f: int, dice: list[int], unseen: int, wild: bool) -> float:
    counts_for_f = sum(1 for d in dice if d == f or (wild and f != 1 and d == 1))
    p = 1 / 3 if wild and f != 1 else 1 / 6
    return binomial_tail(q - counts_for_f, unseen, p)


# --- a turn message by hand ---------------------------------------------------


def match_start(rules: Rules, seat: int = 1, players: int = 3) -> dict[str, Any]:
    return {
        "type": "match_start",
        "match": "t-1",
        "seat": seat,
        "players": players,
        "names": [f"bot{s}" for s in range(players)],
        "rules": rules.to_dict(),
        "seed": 1,
    }


def turn_msg(
    dice: list[int],
    counts: list[int],
    history: list[list[int]],
    mins: dict[int, int],
    dudo: bool,
    calza: bool,
    palifico: bool = False,
    seat: int = 1,
) -> dict[str, Any]:
    return {
        "type": "turn",
        "match": "t-1",
        "round": 1,
        "seat": seat,
        "dice": dice,
        "counts": counts,
        "palifico": palifico,
        "history": history,
        "legal": {
            "dudo": dudo,
            "calza": calza,
            "min_quantity": {str(f): q for f, q in mins.items()},
            "max_quantity": sum(counts),
        },
        "time_ms": 1000,
    }


def make_turn(rules: Rules, msg: dict[str, Any]) -> Turn:
    import random

    return parse.parse_turn(msg, parse.parse_match_start(match_start(rules)), random.Random(0))


CLASSIC = Rules.preset("classic")
# Standing bid 4x4 by seat 0 at a table of 12 dice (classic, convert).
RAISE_MSG = turn_msg(
    [1, 3, 3, 5, 6], [4, 5, 3], [[0, 4, 4]], {1: 2, 2: 5, 3: 5, 4: 5, 5: 4, 6: 4}, dudo=True, calza=True
)


def test_illegal_reasons_name_the_smallest_legal_bid() -> None:
    turn = make_turn(CLASSIC, RAISE_MSG)
    assert illegal_reason(Bid(5, 3), turn) is None
    assert illegal_reason(DUDO, turn) is None and illegal_reason(CALZA, turn) is None
    low = illegal_reason(Bid(4, 3), turn)
    assert low is not None and "4x4" in low and "5x3" in low
    assert "12" in (illegal_reason(Bid(13, 5), turn) or "")


def test_illegal_reasons_for_calls_and_openings() -> None:
    opening = make_turn(
        Rules.preset("lizumo"),
        turn_msg([2, 2, 5], [3, 3, 3], [], {2: 1, 3: 1, 4: 1, 5: 1, 6: 1}, dudo=False, calza=False),
    )
    assert "open with a bid" in (illegal_reason(DUDO, opening) or "")
    assert "calza: false" in (illegal_reason(CALZA, opening) or "")
    assert "open on 1s" in (illegal_reason(Bid(1, 1), opening) or "")
    two_left = make_turn(CLASSIC, turn_msg([2, 2, 5], [3, 0, 3], [[0, 1, 4]], {4: 2}, dudo=True, calza=False))
    assert "calza_min_players" in (illegal_reason(CALZA, two_left) or "")


def test_candidate_raises_are_the_likeliest_smallest_bids() -> None:
    turn = make_turn(CLASSIC, RAISE_MSG)
    cands = candidate_raises(turn, k=6)
    assert sorted(b for b, _ in cands) == sorted(Bid(q, f) for f, q in {1: 2, 2: 5, 3: 5, 4: 5, 5: 4, 6: 4}.items())
    probs = [p for _, p in cands]
    assert probs == sorted(probs, reverse=True)
    for b, p in cands:
        assert p == pytest.approx(odds(b.quantity, b.face, [1, 3, 3, 5, 6], 7, True), abs=1e-12)


def test_typo_and_illegal_action_are_asked_again_and_never_a_fault() -> None:
    out = io.StringIO()
    human = HumanPlayer(io.StringIO("5y3\n\n4x3\nhelp\n5x3\n"), out, assist=True)
    human.notify(match_start(CLASSIC))
    reply, cpu = human.request(RAISE_MSG)
    assert reply == {"action": "bid", "quantity": 5, "face": 3}
    assert cpu == 0.0  # the human's thinking time is never counted
    text = out.getvalue()
    assert "'5y3' is not a move" in text
    assert "Not allowed: 4x3 does not beat the standing bid 4x4" in text
    assert text.count("Your move: ") == 5
    # The assist line for the standing bid: independent binomial odds.
    shown = float(re.search(r"standing 4x4: P\(true\) ([\d.]+)%", text).group(1))  # type: ignore[union-attr]
    assert shown == pytest.approx(100 * odds(4, 4, [1, 3, 3, 5, 6], 7, True), abs=0.05)


def test_end_of_input_is_a_forfeit_of_kind_crash() -> None:
    human = HumanPlayer(io.StringIO("7y"), io.StringIO())  # a typo, then end of input
    human.notify(match_start(CLASSIC))
    with pytest.raises(BotFault) as exc:
        human.request(RAISE_MSG)
    assert exc.value.kind == LEFT_KIND == "crash" and "left the table" in exc.value.detail
    assert human.left


def test_setup_refuses_conflicting_options() -> None:
    from arena.errors import ArenaError

    with pytest.raises(ArenaError, match="--preset and --config"):
        play_setup(preset="classic", config="configs/quick.yaml")
    with pytest.raises(ArenaError, match="does not exist"):
        play_setup(sets=["colour=blue"])
    with pytest.raises(ArenaError, match="nosuchbot"):
        play_setup(bots=["nosuchbot"])


def test_quit_through_pipes_records_the_forfeit(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena",
            "play",
            "--preset",
            "lizumo",
            "--bots",
            "random",
            "--bots",
            "cautious",
            "--seed",
            "3",
            "--out",
            str(out),
        ],
        input="quit\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "You leave the table" in proc.stdout and "Match over" in proc.stdout
    record = json.loads(out.read_text())
    human = record["bots"].index("human")
    assert record["placements"][human] == 3
    assert [f["kind"] for f in record["faults"]] == ["crash"] and record["faults"][0]["seat"] == human
    assert record["end"] == "elimination"  # the two bots played it out
    check(MatchRecord.from_dict(record))  # the record replays under the rules, dice and all


# --- the full match through a pseudo-terminal ---------------------------------


def likely_quantity(f: int, dice: list[int], unseen: int, wild: bool) -> int:
    """The largest quantity of face ``f`` at least 50% likely, from the binomial tail (0: none)."""
    best = 0
    for q in range(1, len(dice) + unseen + 1):
        if odds(q, f, dice, unseen, wild) >= 0.5:
            best = q
    return best


def parse_screen_turn(block: str) -> dict[str, Any]:
    """What the screen shows for one turn."""
    dice = [int(d) for d in re.search(r"Your dice: ([\d ]+)", block).group(1).split()]  # type: ignore[union-attr]
    total = int(re.search(r"dice in play: (\d+)", block).group(1))  # type: ignore[union-attr]
    legal_line = re.search(r"Legal: (.*)", block).group(1)  # type: ignore[union-attr]
    mins = {int(f): int(q) for q, f in re.findall(r"(\d+)x(\d)", legal_line.split(" or more")[0])}
    standing = re.findall(r"standing (\d+)x(\d): P\(true\) ([\d.]+)%", block)
    raises = re.findall(r"raise (\d+)x(\d): P\(true\) ([\d.]+)%", block)
    expected = [float(x) for x in re.search(r"expected +([\d. ]+)", block).group(1).split()]  # type: ignore[union-attr]
    likely_cells = re.search(r"50% up to +(.*)", block).group(1).split()  # type: ignore[union-attr]
    likely = [0 if c == "-" else int(c.split("x")[0]) for c in likely_cells]
    bids = re.search(r"Bids: (.*)", block).group(1)  # type: ignore[union-attr]
    return {
        "dice": dice,
        "total": total,
        "mins": mins,
        "dudo": "dudo" in legal_line.split(";")[-1],
        "standing": [(int(q), int(f), float(p)) for q, f, p in standing],
        "raises": [(int(q), int(f), float(p)) for q, f, p in raises],
        "expected": expected,
        "likely": likely,
        "opening": bids.startswith("none yet"),
        "wild": "1s wild" in block,
        "palifico": "palifico" in block.split("\n", 1)[0],
    }


def record_bidding(record: dict[str, Any], rnd: dict[str, Any]) -> str:
    """A round's bids in the record, as the screen writes them."""
    names = ["you" if b == "human" else b for b in record["bots"]]
    bids = [f"{names[a[0]]} {a[2]}x{a[3]}" for a in rnd["actions"] if a[1] == "bid"]
    return ", ".join(bids) if bids else "no bid"


@pytest.mark.slow
def test_full_match_in_a_pseudo_terminal(tmp_path: Path) -> None:
    """A whole match typed at a terminal: every turn's assist figures against
    binomial odds computed here, every round's whole bidding (bids made after
    the human's move, rounds the human never acted in) and palifico flag
    against the match record, and the seed shown is the record's."""
    out = tmp_path / "games.jsonl"
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "arena",
            "play",
            "--preset",
            "classic",
            "--bots",
            "random",
            "--bots",
            "cautious",
            "--seed",
            "11",
            "--assist",
            "--out",
            str(out),
        ],
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=90,
        dimensions=(50, 200),
    )
    typo_done = illegal_done = False
    checked = turns = openings = 0
    transcript: list[str] = []
    last_block = ""
    try:
        while True:
            i = child.expect(["Your move: ", pexpect.EOF])
            transcript.append(child.before)
            if i == 1:
                break
            block = child.before.replace("\r", "").split("== Round")[-1]
            if "Your dice:" not in block:  # re-asked after a typo or an illegal move: same turn
                block = last_block
            last_block = block
            seen = parse_screen_turn(block)
            unseen = seen["total"] - len(seen["dice"])
            wild = seen["wild"]
            assert wild == (not seen["palifico"])  # classic: 1s wild but in palifico rounds
            for f in range(1, 7):  # the face table: expected count and the largest 50% quantity
                p_face = 1 / 3 if wild and f != 1 else 1 / 6
                mine = sum(1 for d in seen["dice"] if d == f or (wild and f != 1 and d == 1))
                assert seen["expected"][f - 1] == pytest.approx(mine + unseen * p_face, abs=0.05)
                assert seen["likely"][f - 1] == likely_quantity(f, seen["dice"], unseen, wild)
                checked += 1
            for q, f, shown in seen["standing"] + seen["raises"]:
                assert shown == pytest.approx(100 * odds(q, f, seen["dice"], unseen, wild), abs=0.05)
                checked += 1
            for q, f, _ in seen["raises"]:
                assert odds(q, f, seen["dice"], unseen, wild) > 0  # a raise that cannot be true is not offered
            if seen["opening"]:
                openings += 1
                assert not seen["raises"] and not seen["standing"]  # no trivial "open 1x2: 100%"
            if not typo_done:
                child.sendline("5y3")
                child.expect("is not a move")
                typo_done = True
                continue
            if not illegal_done:
                absent = [f for f in range(1, 7) if f not in seen["mins"]]
                low = [(q, f) for f, q in seen["mins"].items() if q >= 2]
                bad = f"1x{absent[0]}" if absent else f"{low[0][0] - 1}x{low[0][1]}"
                child.sendline(bad)
                child.expect("Not allowed: ")
                illegal_done = True
                continue
            turns += 1
            # The strategy: doubt a standing bid the odds call unlikely; else the likeliest raise,
            # or open at the 50% line of the face held most.
            if seen["dudo"] and seen["standing"] and (seen["standing"][0][2] < 50 or not seen["raises"]):
                child.sendline("dudo")
            elif seen["raises"]:
                q, f, _ = seen["raises"][0]
                child.sendline(f"{q}x{f}")
            else:
                faces = [f for f in seen["mins"] if seen["likely"][f - 1] >= seen["mins"][f]] or list(seen["mins"])
                f = max(faces, key=lambda f: seen["likely"][f - 1])
                child.sendline(f"{max(seen['mins'][f], seen['likely'][f - 1])}x{f}")
        child.close()
    finally:
        if child.isalive():
            child.terminate(force=True)
    text = "".join(transcript).replace("\r", "")
    assert child.exitstatus == 0, text[-2000:]
    assert typo_done and illegal_done and turns >= 1 and openings >= 1
    assert checked >= 20
    assert "Match over. Placements:" in text
    assert re.search(r"You win!|You finish (2nd|3rd) of 3", text)

    record = json.loads(out.read_text())
    check(MatchRecord.from_dict(record))
    shown_seed = re.search(r"Seed (\d+): arena play --seed", text).group(1)  # type: ignore[union-attr]
    assert int(shown_seed) == record["seed"] == 11  # one seed: shown, taken and recorded
    ends = re.findall(r"-- Round (\d+)( \(palifico\))? ends\.\n  Bidding: (.*)\n", text)
    assert [int(n) for n, _, _ in ends] == [r["round"] for r in record["rounds"]]  # every round, acted in or not
    human = record["bots"].index("human")
    unseen_bids = 0
    for (_, pal, bidding), rnd in zip(ends, record["rounds"]):
        assert bidding == record_bidding(record, rnd)  # the whole bidding, in order
        assert bool(pal) == rnd["palifico"]
        acted = [k for k, a in enumerate(rnd["actions"]) if a[0] == human]
        after = rnd["actions"][acted[-1] + 1 :] if acted else rnd["actions"]
        unseen_bids += sum(1 for a in after if a[1] == "bid")  # bids after the human's last move
    assert unseen_bids >= 1  # some bids came after the human's move and were shown only at the round's end


def test_setup_from_a_config_takes_its_variant_limits_and_bots() -> None:
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)  # config bot paths are relative to where the command is typed
    try:
        setup = play_setup(config="configs/variants.yaml", variant="three-dice", sets=["palifico=false"])
    finally:
        os.chdir(cwd)
    assert setup.rules.dice == 3 and setup.rules.palifico is False
    assert setup.variant == "three-dice"
    assert setup.time is not None and setup.sandbox is not None
    assert {label for label, _ in setup.bots} >= {"random", "cautious", "probabilistic", "bluffer"}
    only = play_setup(bots=["random", "random"], preset="lizumo")
    assert [label for label, _ in only.bots] == ["random", "random#2"]
