"""One table of ``arena serve``: a match with people and sandboxed bots, and
what each page at it may see.

The match is played by the referee (:func:`arena.match.referee.play_match`,
through :func:`arena.serve.seating.play_seats`) in a thread of its own; the
server is the only authority, and a page only ever sends a move, which the
person's :class:`PersonSeat` checks as ``arena play`` does.

What a page sees is a list of events, each built here from named fields
(never a message passed on as it came), for one audience:

- public, to every page of the table and to spectators: the table (names,
  rules, each bot's own name for itself), each round's dice counts, every bid
  as it is made (the turn the next player is asked for), the reveal (every
  hand: the round is over), the placements and faults;
- private, to one person's pages only: their seat, their own dice, their legal
  moves and assisted-mode figures, why a move was refused.

No event but a seat's own ``dice`` and the public ``reveal`` holds a die, so a
page cannot learn another seat's hand before the reveal (tests/test_serve.py
checks the frames a page receives).
"""

from __future__ import annotations

import dataclasses
import queue
import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botfile.spec import BotSpec
from arena.engine import dice as dice_mod
from arena.engine.records import MatchRecord
from arena.engine.rules import Rules, aces_wild, parse_action
from arena.errors import ArenaError, BotFault, FaultKind, InvalidAction, RunError, StateError
from arena.match.referee import MatchOutcome
from arena.protocol.messages import Notification, ReadyMessage, TurnMessage, ready_message, reply_message
from arena.protocol.parse import parse_match_start, parse_turn
from arena.protocol.player import Player
from arena.sdk import MatchInfo
from arena.serve.seating import Assist, assist, illegal_reason, legal_text, match_spec, pct, play_seats

__all__ = ["AWAY_S", "Event", "PersonSeat", "Table", "TableSeat", "assist_json", "move_refusal"]

Event = dict[str, Any]
Listener = Callable[[Event], None]

AWAY_S = 300.0
"""How long a person may be gone (no page open at their seat) while it is their
turn before the seat forfeits, as ``arena play``'s ``quit`` does."""

LEFT_KIND = FaultKind.CRASH  # as arena play: the closed set of fault kinds stays closed
MOVE_CHARS = 40  # a move is "12x3", "dudo" or "calza": anything longer is refused unread


@dataclass(frozen=True)
class TableSeat:
    """One seat as the lobby asked for it: a person (by name) or a bot."""

    name: str  # the person's name, or the bot's label
    bot: BotSpec | None = None  # None: a person


def move_refusal(text: str, legal: Any, turn: Any) -> str | None:
    """``None`` if ``text`` is a legal move now, else the message ``arena play``
    prints for it (the same words, from :func:`arena.serve.seating.illegal_reason`)."""
    try:
        action = parse_action(text)
    except InvalidAction:
        extra = " (or pass, when you are out)" if turn.rules.dead_mans_calza else ""
        return f"{text!r} is not a move: write QxF for a bid (5x3 = five 3s), dudo or calza{extra}."
    reason = illegal_reason(action, turn)
    if reason is not None:
        return f"Not allowed: {reason}. Legal: {legal_text(legal)}"
    return None


def assist_json(a: Assist) -> Event:
    """The assisted-mode figures as JSON: each probability, and as the page
    shows it, formatted by the same function as ``arena play --assist``."""
    return {
        "unseen": a.unseen,
        "wild": a.wild,
        "faces": [
            {
                "face": o.face,
                "expected": o.expected,
                "expected_text": f"{o.expected:.1f}",
                "likely": o.likely,
                "p_likely": o.p_likely,
            }
            for o in a.faces
        ],
        "standing": [a.standing.quantity, a.standing.face] if a.standing is not None else None,
        "p_standing": a.p_standing,
        "p_calza": a.p_calza,
        "p_standing_text": pct(a.p_standing) if a.p_standing is not None else None,
        "p_dudo_text": pct(1.0 - a.p_standing) if a.p_standing is not None else None,
        "p_calza_text": pct(a.p_calza) if a.p_calza is not None else None,
        "raises": [[b.quantity, b.face, p, pct(p)] for b, p in a.raises],
        "any_bid": a.any_bid,
    }


class PersonSeat:
    """A person's :class:`~arena.protocol.player.Player`: moves come from their
    pages (:meth:`Table.move`), checked here; as in ``arena play`` a refused
    move is never a fault, and thinking time is not counted."""

    def __init__(self, table: Table, entrant: int, name: str) -> None:
        self.table = table
        self.entrant = entrant
        self.name = name
        self.info: MatchInfo | None = None
        self.start_msg: Notification | None = None  # this seat's match_start, for a fallback bot
        self.stand_in: Any = None  # the fallback bot's BotProcess once it took the seat
        self.moves: queue.Queue[str] = queue.Queue()
        self.waiting = False  # asked for a move, none accepted yet
        self.left = False  # the person pressed leave: their next turn forfeits
        self.dealt: list[int] | None = None  # the dice this seat was shown this round
        self.pages = 0  # pages open at this seat
        self.gone_since: float | None = time.monotonic()  # None while a page is open
        self._rng = random.Random(0)  # Turn needs one; a person's choices are not random

    def start(self) -> ReadyMessage:
        return ready_message(self.name, None)

    def notify(self, msg: Notification) -> None:
        if self.stand_in is not None:
            self.stand_in.notify(msg)
            return
        if msg["type"] == "match_start":
            self.info = parse_match_start(msg)
            self.start_msg = msg

    def request(self, msg: TurnMessage) -> tuple[Any, float]:
        if self.stand_in is not None:
            return self.stand_in.request(msg)  # type: ignore[no-any-return]  # a BotProcess
        if self.info is None:
            raise BotFault(
                f"the person at seat {msg.get('seat')} was asked to move before the match started", LEFT_KIND
            )
        turn = parse_turn(msg, self.info, self._rng)
        if self.dealt != list(msg["dice"]):  # the page was shown the referee's deal: the same dice, or a bug here
            # (no dice in the message: it goes to every page of the table)
            raise StateError(f"table: seat {msg['seat']} was shown other dice than the referee dealt it")
        if self.left:
            self._leave("the person left the table")
        legal = msg["legal"]
        self.table.private(
            self.entrant,
            {
                "type": "your_turn",
                "round": msg["round"],
                "legal": {
                    "dudo": legal["dudo"],
                    "calza": legal["calza"],
                    "pass": bool(legal.get("pass", False)),  # a dead man's turn (dead man's calza)
                    "max_quantity": legal["max_quantity"],
                    "min_quantity": dict(legal["min_quantity"]),
                },
                "assist": assist_json(assist(turn)),
            },
        )
        while True:
            try:
                text = self.moves.get(timeout=0.2)
            except queue.Empty:
                if self._away():
                    return self._hand_over(msg)
                continue
            if text == "leave":
                self._leave("the person left the table")
            refused = move_refusal(text, turn.legal, turn)
            if refused is not None:
                self.table.private(self.entrant, {"type": "refused", "text": refused})
                continue
            with self.table.lock:
                self.waiting = False
            return reply_message(parse_action(text)), 0.0

    def _away(self) -> bool:
        """Whether the person has been gone (no page open) longer than the limit."""
        with self.table.lock:
            gone = self.gone_since
        return gone is not None and time.monotonic() - gone > self.table.away_s

    def _hand_over(self, msg: TurnMessage) -> tuple[Any, float]:
        """The person is gone: the table's fallback bot takes the seat for the
        rest of the match (sandboxed, as every bot), or, without one, the seat
        forfeits."""
        why = f"the person was away longer than {self.table.away_s:g} s"
        fallback = self.table.fallback
        if fallback is None or self.start_msg is None:
            self._leave(why)
        assert fallback is not None and self.start_msg is not None  # _leave raised otherwise
        label, spec = fallback
        try:
            proc = self.table.start_bot(label, spec)
        except BotFault as exc:
            raise BotFault(f"{why}; the fallback bot {label} did not start: {exc.detail}", exc.kind) from None
        with self.table.lock:
            self.stand_in = proc
            self.waiting = False
            self.table.replaced[self.entrant] = label
        self.table.public({"type": "replaced", "seat": msg["seat"], "by": label, "why": why})
        proc.notify(self.start_msg)
        return proc.request(msg)  # type: ignore[no-any-return]  # a BotProcess

    def _leave(self, why: str) -> None:
        with self.table.lock:
            self.waiting = False
        raise BotFault(f"{why} (the seat forfeits)", LEFT_KIND)

    def close(self) -> None:
        """Close the fallback bot, if one took the seat (the pages are the server's)."""
        if self.stand_in is not None:
            self.stand_in.close()


class _Watched:
    """A player of the match, watched: what the table may show of each message
    it is sent becomes an event. The player itself is called as it is."""

    def __init__(self, table: Table, entrant: int, player: Player) -> None:
        self.table = table
        self.entrant = entrant
        self.player = player

    def start(self) -> ReadyMessage:
        return self.player.start()

    def notify(self, msg: Notification) -> None:
        self.table.seen(self.entrant, msg)
        self.player.notify(msg)

    def request(self, msg: TurnMessage) -> tuple[Any, float]:
        self.table.seen(self.entrant, msg)
        return self.player.request(msg)

    def close(self) -> None:
        self.player.close()


class Table:
    """A match at the browser table: the seats, their secret links, the events.

    ``record`` is called with the finished match's record and returns where it
    was written (or raises an :class:`ArenaError`).
    """

    def __init__(
        self,
        seats: Sequence[TableSeat],
        rules: Rules,
        variant: str,
        *,
        record: Callable[[MatchRecord], str],
        away_s: float = AWAY_S,
        time: Any = None,
        sandbox: Any = None,
        seed: int | None = None,
        fallback: tuple[str, BotSpec] | None = None,
    ) -> None:
        if not 2 <= len(seats) <= 10:
            raise RunError(f"a table seats 2 to 10 players; {len(seats)} were asked for")
        self.id = secrets.token_urlsafe(12)
        self.seats = tuple(seats)
        self.rules = rules
        self.variant = variant
        self.away_s = away_s
        self.fallback = fallback  # (label, bot) that takes a gone person's seat; None: the seat forfeits
        self.replaced: dict[int, str] = {}  # entrant -> the fallback bot's label, once it took the seat
        self._record = record
        self._time, self._sandbox = time, sandbox
        self.seed = seed if seed is not None else secrets.randbits(63)
        self.spec = match_spec("table", variant, rules, self.seed, len(seats))
        self.lock = threading.RLock()
        self.people: dict[int, PersonSeat] = {}
        self.tokens: dict[str, int] = {}  # seat secret -> entrant position
        for i, seat in enumerate(self.seats):
            if seat.bot is None:
                self.people[i] = PersonSeat(self, i, seat.name)
                self.tokens[secrets.token_urlsafe(18)] = i
        self._log: list[tuple[int | None, Event]] = []  # (audience: None = public, or an entrant), event
        self._listeners: list[tuple[int | None, Listener]] = []
        self._ready: dict[int, ReadyMessage] = {}
        self._seat_of: dict[int, int] = {}  # entrant -> referee seat
        self._round = 0  # the round whose dice were last sent
        self._revealed = 0
        self._started = self._ended = False
        self.done = threading.Event()
        self.outcome: MatchOutcome | None = None
        self._thread = threading.Thread(target=self._play, name=f"table-{self.id}", daemon=True)

    # -- who is who ----------------------------------------------------------------

    def seat_token(self, entrant: int) -> str:
        return next(t for t, e in self.tokens.items() if e == entrant)

    def entrant_of(self, token: str | None) -> int | None:
        """The entrant a seat secret opens, None for a spectator; an unknown
        secret is refused (a typo must not quietly make a spectator)."""
        if token is None:
            return None
        for known, entrant in self.tokens.items():
            if secrets.compare_digest(known, token):
                return entrant
        raise RunError("this seat link is not one of this table's: ask for the link again")

    # -- the match --------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def _play(self) -> None:
        seats: list[tuple[str, Player | BotSpec]] = [
            (s.name, s.bot if s.bot is not None else self.people[i]) for i, s in enumerate(self.seats)
        ]
        self.public(
            {"type": "starting", "names": [s.name for s in self.seats], "bots": [s.bot is not None for s in self.seats]}
        )
        try:
            try:
                outcome = play_seats(
                    self.spec,
                    seats,
                    time=self._time,
                    sandbox=self._sandbox,
                    watch=lambda i, p: _Watched(self, i, p),
                    ready=self._bot_ready,
                )
            finally:
                for person in self.people.values():
                    person.close()
        except ArenaError as exc:
            self.public({"type": "error", "text": str(exc)})
            self.done.set()
            return
        except Exception as exc:  # a bug here must still reach the pages, not leave them waiting
            # Only the kind of error: its text could hold anything (a hand), and
            # goes to every page; the whole of it goes to the server's stderr.
            self.public(
                {
                    "type": "error",
                    "text": f"the table stopped on an internal error ({type(exc).__name__}); "
                    f"the server's log has the details",
                }
            )
            self.done.set()
            raise
        rec = self._say_replaced(outcome.record)
        self.outcome = MatchOutcome(rec, outcome.faulted)
        try:
            where = Path(self._record(rec)).name  # the folder's name: a page need not know the server's paths
        except ArenaError as exc:
            where = f"not recorded: {exc}"
        self.public(
            {
                "type": "over",
                "placements": list(rec.placements),
                "match": rec.match,
                "end": str(rec.end),
                "recorded": where,
                "faults": [
                    {"seat": f.seat, "kind": str(f.kind), "detail": f.detail, "round": f.round} for f in rec.faults
                ],
            }
        )
        self.done.set()

    def _say_replaced(self, rec: MatchRecord) -> MatchRecord:
        """The record names a seat a fallback bot took over as ``person then bot``:
        the games a person left are not rated as theirs alone."""
        if not self.replaced:
            return rec
        names = list(rec.bots)
        for entrant, label in self.replaced.items():
            seat = self._seat_of[entrant]
            names[seat] = f"{names[seat]} then {label}"
        return dataclasses.replace(rec, bots=tuple(names))

    def start_bot(self, label: str, spec: BotSpec) -> Any:
        """A bot started mid-match (a fallback), sandboxed and timed as the table's others."""
        from arena.match.process import BotProcess, TimeControl
        from arena.sandbox import SandboxLimits

        time_control = self._time or TimeControl()
        limits = self._sandbox or SandboxLimits()
        proc = BotProcess(spec, limits.for_bot(spec.limits, f"bot {label} ({spec.path})"), time_control)
        try:
            proc.start()
        except BotFault:
            proc.close()
            raise
        return proc

    def _bot_ready(self, entrant: int, ready: ReadyMessage) -> None:
        with self.lock:
            self._ready[entrant] = ready

    def seen(self, entrant: int, msg: Notification | TurnMessage) -> None:
        """What the table shows of ``msg``, sent to ``entrant``'s player."""
        kind = msg["type"]
        with self.lock:
            if kind == "match_start":
                self._seat_of[entrant] = msg["seat"]  # type: ignore[typeddict-item]  # match_start has it
                if entrant in self.people:
                    self.private(entrant, {"type": "seat", "seat": msg["seat"]})  # type: ignore[typeddict-item]
                if not self._started:
                    self._started = True
                    self._show_start(msg)
            elif kind == "turn":
                self._show_turn(msg)  # type: ignore[arg-type]  # a turn
            elif kind == "round_end" and msg["round"] > self._revealed:  # type: ignore[typeddict-item]
                self._revealed = msg["round"]  # type: ignore[typeddict-item]
                self._show_reveal(msg)
            elif kind == "match_end" and not self._ended:
                self._ended = True
                self.public({"type": "placements", "placements": list(msg["placements"])})  # type: ignore[typeddict-item]

    def _show_start(self, msg: Any) -> None:
        names: list[str] = list(msg["names"])
        # The referee may roll the seats: the names are in seat order; the
        # table's entrants are mapped to seats once every match_start is seen,
        # so bots and self-given names are listed by the names' order.
        by_name = {s.name: i for i, s in enumerate(self.seats)}
        bots = [self.seats[by_name[n]].bot is not None for n in names]
        own: list[str | None] = []
        for n in names:
            ready = self._ready.get(by_name[n])
            own.append(
                None if ready is None else ready["name"] + (f" {ready['version']}" if ready.get("version") else "")
            )
        r = self.rules
        self.public(
            {
                "type": "start",
                "match": msg["match"],
                "names": names,
                "bots": bots,
                "own_names": own,
                "variant": self.variant,
                "rules": {
                    "dice": r.dice,
                    "wild_ones": r.wild_ones,
                    "calza": r.calza,
                    "palifico": r.palifico,
                    "open_on_ones": r.open_on_ones,
                    "dead_mans_calza": r.dead_mans_calza,
                    "veteran_palifico": r.veteran_palifico,
                },
            }
        )

    def _show_turn(self, msg: TurnMessage) -> None:
        rnd = msg["round"]
        if rnd != self._round:
            self._round = rnd
            counts = list(msg["counts"])
            self.public({"type": "round", "round": rnd, "counts": counts, "palifico": msg["palifico"]})
            hands = dice_mod.roll_table(self.spec.dice_seed, rnd, counts)  # the referee's deal, for people only
            for entrant in self.people:
                seat = self._seat_of[entrant]
                self.people[entrant].dealt = sorted(hands[seat])
                self.private(entrant, {"type": "dice", "round": rnd, "seat": seat, "dice": sorted(hands[seat])})
        self.public(
            {
                "type": "turn",
                "round": rnd,
                "to_act": msg["seat"],
                "counts": list(msg["counts"]),
                "palifico": msg["palifico"],
                "history": [list(h) for h in msg["history"]],
            }
        )
        if msg["seat"] in self._seat_of.values():
            entrant = next(e for e, s in self._seat_of.items() if s == msg["seat"])
            person = self.people.get(entrant)
            if person is not None:
                person.waiting = True
                person.moves = queue.Queue()  # a move sent before this turn is not an answer to it

    def _show_reveal(self, msg: Any) -> None:
        ev: Event = {
            "type": "reveal",
            "round": msg["round"],
            "palifico": msg["palifico"],
            "history": [list(h) for h in msg["history"]],
            "dice": [sorted(h) for h in msg["dice"]],
            "counts": list(msg["counts"]),
            "wild": aces_wild(self.rules, bool(msg["palifico"])),
        }
        for key in ("bid", "count"):
            if key in msg:
                ev[key] = msg[key]
        if "call" in msg:
            ev["call"] = {"seat": msg["call"]["seat"], "kind": msg["call"]["kind"]}
        if "change" in msg:
            ev["change"] = {"seat": msg["change"]["seat"], "delta": msg["change"]["delta"]}
        if "fault" in msg:
            ev["fault"] = {"seat": msg["fault"]["seat"], "kind": msg["fault"]["kind"]}
        self.public(ev)

    # -- events ---------------------------------------------------------------

    def public(self, event: Event) -> None:
        self._emit(None, event)

    def private(self, entrant: int, event: Event) -> None:
        self._emit(entrant, event)

    def _emit(self, audience: int | None, event: Event) -> None:
        with self.lock:
            self._log.append((audience, event))
            listeners = [fn for who, fn in self._listeners if audience is None or who == audience]
        for fn in listeners:
            fn(event)

    def join(self, entrant: int | None, listener: Listener) -> list[Event]:
        """Listen as ``entrant`` (None: a spectator); returns every event that
        audience was sent so far, in order, so a page (re)opened mid-match
        draws the table as it is."""
        with self.lock:
            self._listeners.append((entrant, listener))
            person = self.people.get(entrant) if entrant is not None else None
            if person is not None:
                person.pages += 1
                person.gone_since = None
            return [ev for who, ev in self._log if who is None or who == entrant]

    def leave(self, entrant: int | None, listener: Listener) -> None:
        with self.lock:
            self._listeners = [(w, fn) for w, fn in self._listeners if fn is not listener]
            person = self.people.get(entrant) if entrant is not None else None
            if person is not None:
                person.pages -= 1
                if person.pages <= 0:
                    person.pages = 0
                    person.gone_since = time.monotonic()

    def move(self, entrant: int, text: str) -> None:
        """A move from ``entrant``'s page; refused at once if it is not their turn."""
        person = self.people[entrant]
        text = text.strip()[:MOVE_CHARS]
        with self.lock:
            waiting = person.waiting
        if text == "leave":
            with self.lock:
                person.left = True
            if waiting:
                person.moves.put(text)
            return
        if not waiting:
            self.private(entrant, {"type": "refused", "text": "Not your turn: wait for the table."})
            return
        person.moves.put(text)
