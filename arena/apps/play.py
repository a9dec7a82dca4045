"""A human at the table: ``arena play``.

The human is just another player of the referee (:func:`arena.match.referee.play_match`):
:class:`HumanPlayer` is a :class:`~arena.protocol.player.Player`, as a sandboxed
:class:`arena.match.process.BotProcess` is; it reads each message it is sent
with the protocol's parsers (:mod:`arena.protocol.parse`, the Python bots'
own), renders it as text, and reads its reply from an input stream. The bots it plays against are real
sandboxed processes under the usual time control, so a match here is played
exactly as in a run and its record is an ordinary match record (docs/records.md).

Two things differ from a bot, on purpose:

- A typo or an illegal action is never a fault: the human is told why (the
  turn's legal summary, the same data a bot gets) and asked again.
- The human's thinking time is not counted: ``request`` reports 0 CPU
  seconds, and there is no deadline on the keyboard.

Leaving the table (end of input, or typing ``quit``) is a forfeit, recorded as
a fault of kind ``crash`` with the detail ``"the human left the table ..."``:
the closed set of fault kinds (docs/protocol.md) stays closed, the statistics
charge the forfeit to the player who left (it is not an administrative
fault), and ``crash`` already means "the player stopped answering".
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from arena.botfile.spec import BotSpec
from arena.engine.records import record_line
from arena.engine.rules import Action, Bid, parse_action
from arena.errors import BotCrashed, BotFault, FaultKind, InvalidAction, RunError
from arena.match.referee import MatchOutcome
from arena.protocol.messages import Notification, ReadyMessage, ReplyMessage, TurnMessage, ready_message, reply_message
from arena.protocol.parse import parse_match_end, parse_match_start, parse_round_end, parse_turn
from arena.protocol.player import Player
from arena.sdk import Legal, MatchInfo, RoundEnd, Turn
from arena.serve.seating import (
    ASSIST_CANDIDATES,
    DEFAULT_BOTS,
    HALF,
    FaceOdds,
    PlaySetup,
    assist,
    candidate_raises,
    face_odds,
    illegal_reason,
    legal_text,
    match_spec,
    pct,
    play_seats,
    play_setup,
    resolve_opponents,
    seat_names,
)
from arena.untrusted import printable

__all__ = [
    "DEFAULT_BOTS",
    "HALF",
    "LEFT_KIND",
    "FaceOdds",
    "HumanPlayer",
    "PlaySetup",
    "candidate_raises",
    "face_odds",
    "illegal_reason",
    "play_human",
    "play_setup",
    "resolve_opponents",
]

LEFT_KIND = FaultKind.CRASH
"""The fault kind recorded when the human leaves the table (see the module docstring)."""

QUIT_WORDS = frozenset({"quit", "exit", "resign", "q"})
HELP_WORDS = frozenset({"help", "h", "?"})


def _face_name(face: int) -> str:
    return f"{face}s"


_pct = pct


class HumanPlayer:
    """A player whose moves are typed: renders messages to ``out``, reads ``inp``.

    ``assist`` adds the odds of the standing bid and of a few candidate raises
    (the figures of Lizumo's assisted mode, :mod:`arena.engine.odds`).
    """

    def __init__(self, inp: TextIO, out: TextIO, *, assist: bool = False, name: str = "human") -> None:
        self.name = name
        self.inp = inp
        self.out = out
        self.assist = assist
        self.info: MatchInfo | None = None
        self.ended = False  # match_end seen
        self.left = False  # the human left the table (forfeit)
        self._rng = random.Random(0)  # Turn needs one; the human's choices are not random

    # -- output ----------------------------------------------------------------

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _name(self, seat: int) -> str:
        if self.info is None:
            return f"seat {seat}"
        return "you" if seat == self.info.seat else printable(self.info.names[seat], newlines=False)

    def _bids(self, history: Sequence[tuple[int, Bid]]) -> str:
        return ", ".join(f"{self._name(s)} {b.quantity}x{b.face}" for s, b in history)

    def _possessive(self, seat: int) -> str:
        name = self._name(seat)
        return "your" if name == "you" else f"{name}'s"

    # -- the Player protocol ---------------------------------------------------

    def start(self) -> ReadyMessage:
        return ready_message(self.name, None)  # nothing to start: the human is already at the table

    def notify(self, msg: Notification) -> None:
        kind = msg["type"]
        if kind == "match_start":
            self.info = parse_match_start(msg)
            self._show_start()
        elif self.info is None:
            return  # not in a match: nothing to show
        elif kind == "round_end":
            self._show_round_end(parse_round_end(msg, self.info))
        elif kind == "match_end":
            self.ended = True
            self.show_placements(parse_match_end(msg, self.info))

    def request(self, msg: TurnMessage) -> tuple[ReplyMessage, float]:
        if self.info is None:
            raise BotCrashed(f"the human player was asked for {msg.get('type')!r} before the match started")
        turn = parse_turn(msg, self.info, self._rng)
        self._show_turn(turn)
        # The human's thinking time is not counted against any budget.
        return reply_message(self._read_action(turn)), 0.0

    def close(self) -> None:
        """Nothing to close: the streams are the caller's."""

    # -- rendering ---------------------------------------------------------------

    def _show_start(self) -> None:
        info = self.info
        assert info is not None  # set just before by notify
        r = info.rules
        extras = [
            f"{r.dice} dice each",
            "1s wild" if r.wild_ones else "1s not wild",
            "calza" if r.calza else "no calza",
            "palifico" if r.palifico else "no palifico",
            "may open on 1s" if r.open_on_ones else "no opening on 1s",
        ]
        if r.dead_mans_calza:
            extras.append(f"dead man's calza (back with {min(r.dead_mans_dice, r.dice)} dice)")
        if r.veteran_palifico:
            extras.append("veteran palifico" + (" (any survivor)" if r.veteran_from == "any" else ""))
        self.say(f"Match {info.match}: {info.players} players, {', '.join(extras)}.")
        for s, name in enumerate(info.names):
            mark = "  <- you" if s == info.seat else ""
            self.say(f"  seat {s}: {name}{mark}")
        self.say("Type a bid as QxF (5x3 = five 3s), or dudo, or calza; 'help' for help, 'quit' to leave.")

    def _show_turn(self, turn: Turn) -> None:
        pal = " (palifico: 1s not wild, the face is fixed)" if turn.palifico else ""
        standing = turn.standing
        if turn.palifico and standing is not None and set(turn.legal.min_quantity) - {standing.face}:
            pal = " (palifico: 1s not wild; you may change the face)"
        self.say("")
        if turn.dead:
            self.say(f"== Round {turn.round}: you are out; a dead man's calza (right: you come back), or pass{pal}")
        else:
            self.say(f"== Round {turn.round}, your turn{pal}")
        self.say(
            "Dice: "
            + ", ".join(f"{self._name(s)} {c or 'out'}" for s, c in enumerate(turn.counts))
            + f"  (dice in play: {turn.total})"
        )
        self.say("Your dice: " + (" ".join(str(d) for d in turn.dice) or "none (out)"))
        if turn.history:
            self.say("Bids: " + self._bids(turn.history))
        else:
            self.say("Bids: none yet: you open the round")
        self.say("Legal: " + self._legal_text(turn.legal))
        if self.assist:
            self._show_assist(turn)

    @staticmethod
    def _legal_text(legal: Legal) -> str:
        return legal_text(legal)

    def _show_assist(self, turn: Turn) -> None:
        figures = assist(turn)
        wild = "1s wild" if figures.wild else "1s not wild"
        self.say(f"Assist (your dice, {figures.unseen} unseen dice, {wild}):")
        odds = figures.faces
        rows = (
            ("face", [_face_name(o.face) for o in odds]),
            ("expected", [f"{o.expected:.1f}" for o in odds]),
            ("50% up to", [f"{o.likely}x{o.face}" if o.likely else "-" for o in odds]),
        )
        for label, cells in rows:
            self.say(f"  {label:<10}" + "".join(f"{c:>7}" for c in cells))
        self.say(
            "  (expected: dice counting for the face on the whole table; 50% up to: the largest bid on it "
            "still at least 50% likely)"
        )
        standing = figures.standing
        if standing is None or figures.p_standing is None:
            return  # an opening: every smallest bid is nearly sure; the table above is what to open from
        self.say(f"  standing {standing.quantity}x{standing.face}: P(true) {_pct(figures.p_standing)}")
        if figures.p_calza is not None:
            self.say(f"  calza on {standing.quantity}x{standing.face}: P(exactly) {_pct(figures.p_calza)}")
        for b, p in figures.raises[:ASSIST_CANDIDATES]:
            self.say(f"  raise {b.quantity}x{b.face}: P(true) {_pct(p)}")
        if not figures.raises and figures.any_bid:
            self.say("  no raise can be true: every legal bid needs more dice than you hold and cannot see")

    def _show_round_end(self, end: RoundEnd) -> None:
        self.say("")
        pal = " (palifico)" if end.palifico else ""
        self.say(f"-- Round {end.round}{pal} ends.")
        self.say("  Bidding: " + (self._bids(end.history) if end.history else "no bid"))
        self.say("  Everyone's dice:")
        for s, hand in enumerate(end.dice):
            if hand:
                self.say(f"    {self._name(s):<16} {' '.join(str(d) for d in sorted(hand))}")
        if end.fault is not None:
            seat, kind = end.fault
            self.say(f"  {self._name(seat)} is out of the match ({kind}); the round is void")
        elif end.bid is not None and end.call is not None and end.change is not None:
            bidder, b = end.bid
            caller, call = end.call
            dead = not end.dice[caller]  # the caller was out: a dead man's calza
            self.say(
                f"  {self._name(caller)} called {'a dead man' + chr(39) + 's ' if dead else ''}{call} on "
                f"{self._possessive(bidder)} {b.quantity}x{b.face}: there were {end.count}"
            )
            seat, delta = end.change
            who = self._name(seat)
            verb = "lose" if who == "you" else "loses"
            if dead:
                self.say(
                    f"  {who} {'come' if who == 'you' else 'comes'} back with {delta} {'die' if delta == 1 else 'dice'}"
                    if delta
                    else f"  {who} {'stay' if who == 'you' else 'stays'} out (the call is spent)"
                )
            elif delta < 0:
                self.say(f"  {who} {verb} {-delta} {'die' if delta == -1 else 'dice'}")
            elif delta > 0:
                self.say(f"  {who} {'regain' if who == 'you' else 'regains'} a die")
            else:
                self.say(f"  {who} {'are' if who == 'you' else 'is'} right, but already at the most dice")
        self.say("  dice left: " + ", ".join(f"{self._name(s)} {c}" for s, c in enumerate(end.counts)))

    def show_placements(self, placements: Sequence[int]) -> None:
        """The final placements, best first (also used after a forfeit)."""
        self.say("")
        self.say("== Match over. Placements:")
        for s in sorted(range(len(placements)), key=lambda s: placements[s]):
            self.say(f"  {placements[s]}. {self._name(s)}")
        if self.info is not None:
            mine = placements[self.info.seat]
            self.say("You win!" if mine == 1 else f"You finish {_ordinal(mine)} of {len(placements)}.")

    # -- input -------------------------------------------------------------------

    def _read_action(self, turn: Turn) -> Action:
        while True:
            self.out.write("Your move: ")
            self.out.flush()
            line = self.inp.readline()
            if line == "":
                self._leave("end of input")
            text = line.strip()
            if not text:
                continue
            word = text.lower()
            if word in QUIT_WORDS:
                self._leave(f"typed {word!r}")
            if word in HELP_WORDS:
                self._help(turn)
                continue
            try:
                action = parse_action(text)
            except InvalidAction:
                self.say(
                    f"{text!r} is not a move: write QxF for a bid (5x3 = five 3s), dudo or calza"
                    f"{' (or pass, when you are out)' if turn.rules.dead_mans_calza else ''}."
                )
                continue
            reason = illegal_reason(action, turn)
            if reason is not None:
                self.say(f"Not allowed: {reason}. Legal: {self._legal_text(turn.legal)}")
                continue
            return action

    def _help(self, turn: Turn) -> None:
        self.say("A bid QxF claims at least Q dice on the whole table show F (1s count as any face when wild).")
        self.say("Raise with more dice, or the same number of a higher face; 'dudo' doubts the standing bid;")
        self.say("'calza' claims it is exactly right. 'quit' leaves the table (you forfeit).")
        for line in aces_help(turn.rules.ones):
            self.say(line)
        if turn.rules.dead_mans_calza:
            self.say("Out of the match, you may once call calza on a bid (right: you come back) or 'pass'.")
        self.say("Legal now: " + self._legal_text(turn.legal))

    def _leave(self, why: str) -> None:
        self.left = True
        self.say("")
        self.say("You leave the table: the match goes on without you.")
        raise BotFault(f"the human left the table ({why})", LEFT_KIND)


def aces_help(ones: str) -> list[str]:
    """How bids on aces (1s) rank under the rules' ``ones`` mode, with examples
    (the same words as ``arena play --help``, for the mode being played)."""
    if ones == "convert":
        return [
            "Aces (1s) count double: to switch to aces, halve the quantity, rounding up (after 6x3, 3x1;",
            "after 5x4, 3x1); to leave aces, double it and add one (after 3x1, 7x2 or any 7xF).",
        ]
    if ones == "rank_high":
        return [
            "Aces (1s) rank above 6s at the same quantity: after 4x6, 4x1 is a raise; after 4x1, 5x2 (5 of any face)."
        ]
    return ["Aces (1s) are the lowest face: after 4x6, 5x1 (5 of any face) is the smallest raise."]


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# ---------------------------------------------------------------------------
# The match driver
# ---------------------------------------------------------------------------


def play_human(setup: PlaySetup, human: HumanPlayer, out_file: str | Path | None = None) -> MatchOutcome:
    """Play one match of ``human`` against ``setup.bots`` through the referee.

    The bots run in their sandboxes (:class:`arena.match.process.BotProcess`) under
    ``setup.time``; every process is closed however the match ends (Ctrl-C
    included): :func:`arena.serve.seating.play_seats`. With ``out_file`` the record is appended to it as one JSON line
    (a ``games.jsonl`` line: put it in a folder as ``games.jsonl`` and
    ``arena replay FOLDER MATCH`` re-checks it).

    One seed: the dice seed, the one the record carries and ``--seed`` takes,
    so the seed shown at the end and the record's deal the same dice again.
    Nothing the bots are sent derives the dice: the seed is a 63-bit secret
    (unless ``--seed`` names one), the bots' own seeds are one-way from it
    (:func:`arena.engine.records.derive_seed`), the match id is drawn apart
    from it, and a drawn seed is shown only once the match is over.
    """
    if not setup.bots:
        raise RunError("arena play needs at least one bot to play against")
    if len(setup.bots) > 9:
        raise RunError(f"{len(setup.bots)} bots and you make {len(setup.bots) + 1} players; a table seats at most 10")
    seed = setup.seed if setup.seed is not None else secrets.randbits(63)
    people, labels = seat_names([setup.human_name], [label for label, _ in setup.bots])
    spec = match_spec("play", setup.variant, setup.rules, seed, len(people) + len(labels))
    if setup.seed is not None:
        human.say(f"Seed {seed} (--seed).")
    seats: list[tuple[str, Player | BotSpec]] = [(people[0], human)]
    seats += [(label, bot) for label, (_, bot) in zip(labels, setup.bots)]
    outcome = play_seats(spec, seats, time=setup.time, sandbox=setup.sandbox)
    if not human.ended:  # the human left: it was not sent match_end
        human.show_placements(outcome.record.placements)
    human.say(f"Seed {seed}: arena play --seed {seed} deals the same dice again.")
    if out_file is not None:
        path = Path(out_file)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(record_line(outcome.record).decode())
        except OSError as exc:
            raise RunError(f"--out {path}: could not write the match record: {exc.strerror}") from None
        human.say(f"Match record appended to {path}.")
    return outcome
