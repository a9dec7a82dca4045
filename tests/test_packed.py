"""The packed policy file (arena/solve/packed.py) and the bots' policy reader
(arena/sdk/policy.py): the packed form holds exactly the JSON form, reads fast
enough for a turn, and a bot draws the same actions from either."""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from test_solve import _turn  # the turn a referee would send (tests/ is on the path)

from arena.engine.rules import Bid, Rules, apply, deal, legal_actions
from arena.sdk.policy import SolvedPolicies, policy_key
from arena.solve.game import SolveError, round_start
from arena.solve.match import solve_match, to_policy
from arena.solve.packed import read_meta, read_rounds
from arena.solve.policy import read_policy, write_policy

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "bots" / "equilibrium"


def small_policy(dice: int = 1) -> dict[str, object]:
    """A quick solve: with 2 dice, the 1-1 round exact, the 1-2 round in the abstraction
    remembering 2 bids, the 2-2 round left out (``upto``: its certification is the slow part)."""
    rules = Rules.preset("neller", {"dice": dice})
    if dice == 1:
        return to_policy(solve_match(rules, 60))
    return to_policy(solve_match(rules, 30, abstract_from=3, recall=2, upto=3))


def test_packed_round_trip_is_exact_and_reproducible(tmp_path: Path) -> None:
    data = small_policy(2)
    as_json = read_policy(write_policy(tmp_path / "p.json.gz", data))
    packed = write_policy(tmp_path / "p.npz", as_json)
    assert read_policy(packed) == as_json  # every key, action and probability, as floats
    assert write_policy(tmp_path / "q.npz", as_json).read_bytes() == packed.read_bytes()
    _, rounds = read_rounds(packed)
    for name, entry in as_json["rounds"].items():  # type: ignore[attr-defined]
        assert len(rounds[name]) == len(entry["infosets"])
        for key, probs in list(entry["infosets"].items())[:500]:
            assert rounds[name].get(key) == list(probs.items())  # the file's order: a draw walks it
        assert rounds[name].get("9|1x2") is None and rounds[name].get("") is None


def test_more_than_six_digits_cannot_be_packed(tmp_path: Path) -> None:
    data = small_policy()
    entry = next(iter(data["rounds"].values()))  # type: ignore[attr-defined]
    key = next(iter(entry["infosets"]))
    entry["infosets"][key] = {"dudo": 0.1234567}
    with pytest.raises(SolveError, match=r"0\.1234567 has more than 6 digits"):
        write_policy(tmp_path / "p.npz", data)


def test_a_damaged_packed_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SolveError, match="bad.npz: not a readable packed policy"):
        read_policy(bad)
    np.savez(tmp_path / "other.npz", meta=np.frombuffer(b'{"x": 1}', dtype=np.uint8))
    with pytest.raises(SolveError, match="not a packed policy"):
        read_meta(tmp_path / "other.npz")


@pytest.mark.parametrize("name", ["neller-2", "plain-wild-2", "classic-2"])
def test_shipped_packed_policy_reads_within_a_turn(name: str) -> None:
    """The reason for the packed form: the 2-dice policies remember four bids
    (over 300,000 information sets) and must be read inside the 1 s a bot has
    for its first solved decision. A tenth of that is the bar here, in CPU time."""
    t0 = time.process_time()
    meta, rounds = read_rounds(SHIPPED / f"{name}.npz")
    cpu = time.process_time() - t0
    assert meta["dice"] == 2 and rounds["2-2"].get("11|") is not None
    assert sum(len(r) for r in rounds.values()) > 300_000
    assert cpu < 0.1 * 1.0 * 3, f"{name}: {cpu:.2f} s of CPU to read"  # x3: slack for a loaded machine


def test_a_bot_draws_the_same_from_either_form(tmp_path: Path) -> None:
    data = small_policy(2)
    json_dir, npz_dir = tmp_path / "json", tmp_path / "npz"
    write_policy(json_dir / "p.json.gz", data)
    write_policy(npz_dir / "p.npz", read_policy(json_dir / "p.json.gz"))
    a, b = SolvedPolicies(str(json_dir)), SolvedPolicies(str(npz_dir))
    rules = Rules.preset("neller", {"dice": 2})
    rng = random.Random(3)
    checked = 0
    for seed in range(300):
        counts = rng.choice([(1, 1), (1, 2), (2, 2)])
        hands = [tuple(rng.randint(1, 6) for _ in range(c)) for c in counts]
        state = deal(round_start(rules, counts), hands)
        bids = []
        for _ in range(rng.randrange(0, 6)):
            raises = [x for x in legal_actions(state) if isinstance(x, Bid)]
            if not raises:
                break
            x = rng.choice(raises[:4])
            bids.append(x)
            state = apply(state, x)
        turn, _ = _turn(rules, len(bids) % 2, hands, bids, seed, counts)
        got_a = a.action(turn, random.Random(seed))
        got_b = b.action(turn, random.Random(seed))
        assert got_a == got_b
        checked += got_a is not None
    assert checked > 30  # the solved strategy covered a good share of the turns


def test_reader_skips_foreign_and_damaged_files_and_keeps_the_least_exploitable(tmp_path: Path) -> None:
    shutil.copy(SHIPPED / "neller-1.json.gz", tmp_path / "a.json.gz")
    data = read_policy(SHIPPED / "neller-1.json.gz")
    worse = dict(data, rounds={"1-1": dict(data["rounds"]["1-1"], exploitability=0.5, infosets={"3|": {"dudo": 1.0}})})
    write_policy(tmp_path / "b.npz", worse)
    (tmp_path / "c.json").write_text("{not json")
    (tmp_path / "d.npz").write_bytes(b"garbage")
    (tmp_path / "notes.txt").write_text("ignored")
    pol = SolvedPolicies(str(tmp_path))
    rules = Rules.preset("neller")
    solved = pol.rounds(tuple(rules.to_dict()[k] for k in ("wild_ones", "ones", "open_on_ones", "penalty")))
    assert set(solved) == {(1, 1)} and solved[(1, 1)].exploitability < 1e-3
    assert solved[(1, 1)].probabilities([3], []) == list(data["rounds"]["1-1"]["infosets"]["3|"].items())
    # Another rule set: nothing solved; a folder that does not exist: nothing either.
    assert pol.rounds((False, "plain", True, "one")) == {}
    assert SolvedPolicies(str(tmp_path / "none")).rounds(("x",)) == {}
    assert policy_key([5, 2], []) == "25|"
