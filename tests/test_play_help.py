"""`arena play` explains bids on aces, and every example it gives is true:
each is a legal raise under its rules, and the smallest one of its face."""

from __future__ import annotations

import re

from click.testing import CliRunner

from arena.apps.cli import main
from arena.apps.play import aces_help
from arena.engine.rules import Bid, bid_key

BID = r"(\d+)x(\d)"


def bid(text: str) -> Bid:
    q, f = text.split("x")
    return Bid(int(q), int(f))


def smallest_raise(after: Bid, to: Bid, ones: str) -> bool:
    """``to`` raises ``after``, and one die fewer of its face would not."""
    raises = bid_key(to, ones) > bid_key(after, ones)
    fewer = Bid(to.quantity - 1, to.face)
    return raises and (to.quantity == 1 or bid_key(fewer, ones) <= bid_key(after, ones))


def chains(text: str) -> list[list[str]]:
    return [re.findall(r"\d+x\d", m.group(0)) for m in re.finditer(rf"{BID}(?: -> {BID})+", text)]


def test_the_help_explains_aces_with_true_examples() -> None:
    text = CliRunner().invoke(main, ["play", "--help"]).output
    assert "Bids on aces (1s)" in text
    convert = text.split("ones: convert")[1].split("With ones:")[0]
    examples = chains(convert)
    assert [e[0] + "->" + e[1] for e in examples] == ["6x3->3x1", "5x4->3x1", "3x1->7x2", "3x1->4x1"]
    for after, to in examples:
        assert smallest_raise(bid(after), bid(to), "convert"), (after, to)
    rank_high = chains(text.split("rank_high")[1].split(";")[0])
    plain = chains(text.split("ones:\n  plain")[1] if "ones:\n  plain" in text else text.split("plain")[1])
    for mode, found in (("rank_high", rank_high), ("plain", plain)):
        assert found, mode
        for chain in found:
            for after, to in zip(chain, chain[1:]):
                assert smallest_raise(bid(after), bid(to), mode), (mode, after, to)


def test_the_help_at_the_table_gives_true_examples_for_the_rules_played() -> None:
    for mode in ("convert", "rank_high", "plain"):
        text = " ".join(aces_help(mode))
        pairs = re.findall(rf"after {BID}, {BID}", text)
        assert pairs, mode
        for qa, fa, qb, fb in pairs:
            assert smallest_raise(Bid(int(qa), int(fa)), Bid(int(qb), int(fb)), mode), (mode, qa, fa, qb, fb)
