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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from arena.botfile.spec import BotSpec
from arena.engine.odds import probability_exact
from arena.engine.records import MatchSpec, derive_seed, record_line
from arena.engine.rules import Action, Bid, Calza, Dudo, Pass, Rules, parse_action
from arena.errors import ArenaError, BotCrashed, BotFault, FaultKind, InvalidAction, RunError
from arena.match.referee import MatchOutcome, play_match
from arena.protocol.messages import Notification, ReadyMessage, ReplyMessage, TurnMessage, ready_message, reply_message
from arena.protocol.parse import parse_match_end, parse_match_start, parse_round_end, parse_turn
from arena.running.config import unique_labels
from arena.sdk import Legal, MatchInfo, RoundEnd, Turn
from arena.untrusted import printable

__all__ = ["DEFAULT_BOTS", "LEFT_KIND", "FaceOdds", "HumanPlayer", "PlaySetup", "candidate_raises", "face_odds",
           "illegal_reason", "play_human", "play_setup", "resolve_opponents"]

DEFAULT_BOTS: tuple[str, ...] = ("probabilistic", "cautious", "bluffer")
"""The opponents when none are named: three built-ins of different styles
(the odds player, the tight player, the liar), a table of four."""

LEFT_KIND = FaultKind.CRASH
"""The fault kind recorded when the human leaves the table (see the module docstring)."""

QUIT_WORDS = frozenset({"quit", "exit", "resign", "q"})
HELP_WORDS = frozenset({"help", "h", "?"})
ASSIST_CANDIDATES = 4  # raises shown by --assist: the smallest raise of the likeliest faces
HALF = 0.5  # the assist's "still likely" line: a bid at least this likely to be true


def _face_name(face: int) -> str:
    return f"{face}s"


def illegal_reason(action: Action, turn: Turn) -> str | None:
    """``None`` if ``action`` is legal in ``turn``, else why not, in words.

    Works from the turn's ``legal`` summary (what every player is sent), so the
    human player needs nothing a bot does not get. The summary is exact
    (docs/protocol.md: every quantity from ``min_quantity`` to ``max_quantity`` is
    legal for a listed face), so the verdict agrees with the referee's.
    """
    legal, rules = turn.legal, turn.rules
    standing = turn.standing
    if turn.dead and not isinstance(action, (Calza, Pass)):
        return "you are out: call calza (a dead man's calza, once a match) or pass"
    if isinstance(action, Pass):
        return None if legal.may_pass else "only a player who is out passes; bid or call"
    if isinstance(action, Dudo):
        if legal.dudo:
            return None
        return "nobody has bid yet this round: open with a bid" if standing is None else "dudo is not allowed now"
    if isinstance(action, Calza):
        if legal.calza:
            return None
        if not rules.calza:
            return "calza is not played under these rules (calza: false)"
        if standing is None:
            return "nobody has bid yet this round: open with a bid"
        players_in = sum(1 for c in turn.counts if c > 0)
        if players_in < rules.calza_min_players:
            return (f"calza needs at least {rules.calza_min_players} players still in "
                    f"(calza_min_players), there are {players_in}")
        return "calza is not allowed now"
    if not isinstance(action, Bid):
        return f"{action!r} is not an action"
    q, f = action
    low = legal.min_quantity.get(f)
    if low is None:
        if standing is None and f == 1 and not rules.open_on_ones and not turn.palifico:
            return "a round may not open on 1s under these rules (open_on_ones: false)"
        if turn.palifico and standing is not None:
            return (f"this is a palifico round: the face stays {standing.face}; "
                    f"raise the quantity of {_face_name(standing.face)}")
        return f"a bid on {_face_name(f)} is not allowed now"
    if q > legal.max_quantity:
        return f"only {legal.max_quantity} dice are in play, so no bid can be above {legal.max_quantity}"
    if q < low:
        beat = f"does not beat the standing bid {standing.quantity}x{standing.face}" if standing else "is too low"
        return f"{q}x{f} {beat}: the smallest bid on {_face_name(f)} now is {low}x{f}"
    return None


def candidate_raises(turn: Turn, k: int = ASSIST_CANDIDATES) -> list[tuple[Bid, float]]:
    """The ``k`` likeliest of the smallest legal bids, one per face, with their odds.

    These are the raises worth looking at: for each face you may bid, the
    cheapest bid on it (a bigger quantity of the same face is always less
    likely), ranked by the chance it is true given your dice. A raise that
    cannot be true (more dice of the face than you hold plus all unseen dice)
    is left out.
    """
    cands = [Bid(low, face) for face, low in sorted(turn.legal.min_quantity.items())
             if low <= turn.legal.max_quantity]
    scored = [(b, p) for b in cands if (p := turn.probability(b)) > 0.0]
    scored.sort(key=lambda bp: (-bp[1], bp[0].quantity, bp[0].face))
    return scored[:k]


@dataclass(frozen=True, slots=True)
class FaceOdds:
    """What the table likely holds of one face, given your dice."""

    face: int
    expected: float  # expected dice on the table counting for the face (yours plus unseen x p)
    likely: int  # the largest quantity with P(true) >= 1/2 (0: not even one die)
    p_likely: float  # P(true) of ``likely`` x face (1.0 when likely is 0)


def face_odds(turn: Turn) -> list[FaceOdds]:
    """For each face 1-6: the expected count and the largest quantity still at
    least even odds, under this round's wilds (none in palifico)."""
    out = []
    for face in range(1, 7):
        likely, p_likely = 0, 1.0
        for q in range(1, turn.total + 1):  # P(true) falls as q grows: stop at the first below 1/2
            p = turn.probability(Bid(q, face))
            if p < HALF:
                break
            likely, p_likely = q, p
        out.append(FaceOdds(face, turn.expected(face), likely, p_likely))
    return out


def _pct(p: float) -> str:
    return f"{100 * p:.1f}%"


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
        extras = [f"{r.dice} dice each", "1s wild" if r.wild_ones else "1s not wild",
                  "calza" if r.calza else "no calza", "palifico" if r.palifico else "no palifico",
                  "may open on 1s" if r.open_on_ones else "no opening on 1s"]
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
        self.say("Dice: " + ", ".join(f"{self._name(s)} {c or 'out'}" for s, c in enumerate(turn.counts))
                 + f"  (dice in play: {turn.total})")
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
        parts = [f"{q}x{f}" for f, q in sorted(legal.min_quantity.items()) if q <= legal.max_quantity]
        text = ("bid " + " ".join(parts) + f" or more (quantity up to {legal.max_quantity})") if parts else "no bid"
        calls = [c for c, ok in (("dudo", legal.dudo), ("calza", legal.calza), ("pass", legal.may_pass)) if ok]
        return text + ("; " + ", ".join(calls) if calls else "")

    def _show_assist(self, turn: Turn) -> None:
        wild = "1s wild" if turn.wild else "1s not wild"
        self.say(f"Assist (your dice, {turn.unseen} unseen dice, {wild}):")
        odds = face_odds(turn)
        rows = (("face", [_face_name(o.face) for o in odds]),
                ("expected", [f"{o.expected:.1f}" for o in odds]),
                ("50% up to", [f"{o.likely}x{o.face}" if o.likely else "-" for o in odds]))
        for label, cells in rows:
            self.say(f"  {label:<10}" + "".join(f"{c:>7}" for c in cells))
        self.say("  (expected: dice counting for the face on the whole table; 50% up to: the largest bid on it "
                 "still at least 50% likely)")
        standing = turn.standing
        if standing is None:
            return  # an opening: every smallest bid is nearly sure; the table above is what to open from
        self.say(f"  standing {standing.quantity}x{standing.face}: P(true) {_pct(turn.probability(standing))}")
        if turn.legal.calza:
            exact = probability_exact(standing, turn.dice, turn.unseen, wild=turn.wild)
            self.say(f"  calza on {standing.quantity}x{standing.face}: P(exactly) {_pct(exact)}")
        raises = candidate_raises(turn)
        for b, p in raises:
            self.say(f"  raise {b.quantity}x{b.face}: P(true) {_pct(p)}")
        if not raises and any(q <= turn.legal.max_quantity for q in turn.legal.min_quantity.values()):
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
            self.say(f"  {self._name(caller)} called {'a dead man' + chr(39) + 's ' if dead else ''}{call} on "
                     f"{self._possessive(bidder)} {b.quantity}x{b.face}: there were {end.count}")
            seat, delta = end.change
            who = self._name(seat)
            verb = "lose" if who == "you" else "loses"
            if dead:
                self.say(f"  {who} {'come' if who == 'you' else 'comes'} back with {delta} "
                         f"{'die' if delta == 1 else 'dice'}" if delta else
                         f"  {who} {'stay' if who == 'you' else 'stays'} out (the call is spent)")
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
                self.say(f"{text!r} is not a move: write QxF for a bid (5x3 = five 3s), dudo or calza"
                         f"{' (or pass, when you are out)' if turn.rules.dead_mans_calza else ''}.")
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
        if turn.rules.dead_mans_calza:
            self.say("Out of the match, you may once call calza on a bid (right: you come back) or 'pass'.")
        self.say("Legal now: " + self._legal_text(turn.legal))

    def _leave(self, why: str) -> None:
        self.left = True
        self.say("")
        self.say("You leave the table: the match goes on without you.")
        raise BotFault(f"the human left the table ({why})", LEFT_KIND)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# ---------------------------------------------------------------------------
# The match driver
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PlaySetup:
    """What ``arena play`` plays: the rules, the opponents and their limits."""

    rules: Rules
    bots: tuple[tuple[str, BotSpec], ...]  # (label, spec) of each opponent
    variant: str = "play"
    seed: int | None = None  # None: a fresh secret one is drawn (and shown after the match)
    human_name: str = "human"
    time: Any = None  # arena.match.process.TimeControl; None = the defaults
    sandbox: Any = None  # arena.sandbox.SandboxLimits; None = the defaults


def play_human(setup: PlaySetup, human: HumanPlayer, out_file: str | Path | None = None) -> MatchOutcome:
    """Play one match of ``human`` against ``setup.bots`` through the referee.

    The bots run in their sandboxes (:class:`arena.match.process.BotProcess`) under
    ``setup.time``; every process is closed however the match ends (Ctrl-C
    included). With ``out_file`` the record is appended to it as one JSON line
    (a ``games.jsonl`` line: put it in a folder as ``games.jsonl`` and
    ``arena replay FOLDER MATCH`` re-checks it).

    One seed: the dice seed, the one the record carries and ``--seed`` takes,
    so the seed shown at the end and the record's deal the same dice again.
    Nothing the bots are sent derives the dice: the seed is a 63-bit secret
    (unless ``--seed`` names one), the bots' own seeds are one-way from it
    (:func:`arena.engine.records.derive_seed`), the match id is drawn apart
    from it, and a drawn seed is shown only once the match is over.
    """
    from arena.match.process import BotProcess, TimeControl
    from arena.sandbox import SandboxLimits

    if not setup.bots:
        raise RunError("arena play needs at least one bot to play against")
    if len(setup.bots) > 9:
        raise RunError(f"{len(setup.bots)} bots and you make {len(setup.bots) + 1} players; a table seats at most 10")
    time_control = setup.time or TimeControl()
    limits = setup.sandbox or SandboxLimits()
    seed = setup.seed if setup.seed is not None else secrets.randbits(63)
    names = [setup.human_name] + unique_labels([label for label, _ in setup.bots], taken={setup.human_name})
    # The match id goes to every bot: it is drawn on its own, so it says nothing
    # about the seed (an id made from the seed let a bot derive every hand).
    match = f"play-{secrets.token_hex(6)}"
    spec = MatchSpec(index=0, match=match, variant=setup.variant, rules=setup.rules.to_dict(),
                     entrants=tuple(range(len(names))), seed=derive_seed("play", seed, "match"),
                     dice_seed=seed, table=0, rotation=0)
    if setup.seed is not None:
        human.say(f"Seed {seed} (--seed).")
    procs: list[BotProcess] = []
    try:
        for label, bot in setup.bots:
            proc = BotProcess(bot, limits.for_bot(bot.limits, f"bot {label} ({bot.path})"), time_control)
            procs.append(proc)
            try:
                proc.start()
            except BotFault as exc:
                raise RunError(f"bot {label} ({bot.path}) failed its handshake: {exc.kind}: "
                               f"{printable(exc.detail)}") from None
        outcome = play_match(spec, [human, *procs], names, time_control.budget_ms)
    finally:
        for proc in procs:
            proc.close()
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


def resolve_opponents(names: Sequence[str]) -> tuple[tuple[str, BotSpec], ...]:
    """Bot names or files (as a config's ``bots`` list) -> (label, spec) pairs."""
    from arena.running.config import resolve_bots

    try:
        entrants = resolve_bots(Path("--bots"), list(names))
    except ArenaError as exc:
        raise RunError(str(exc).replace("--bots: bots: ", "--bots: ")) from None
    return tuple((e.label, e.spec) for e in entrants)


def play_setup(*, bots: Sequence[str] = (), preset: str | None = None, config: str | Path | None = None,
               variant: str | None = None, sets: Sequence[str] = (), seed: int | None = None,
               name: str = "human") -> PlaySetup:
    """What ``arena play`` was asked for, validated: rules from ``preset`` (default
    classic) or from ``config``'s variant, with ``sets`` (``KEY=VALUE``) on top;
    opponents from ``bots``, else the config's bots, else :data:`DEFAULT_BOTS`."""
    from arena.engine.rules import parse_sets

    if preset is not None and config is not None:
        raise RunError("--preset and --config both set the rules: give one of them")
    if variant is not None and config is None:
        raise RunError(f"--variant {variant!r} picks a variant of a --config file; none was given")
    if not name.strip() or len(name) > 40 or any(not c.isprintable() for c in name):
        raise RunError(f"--name {name!r}: use a short printable name")
    overrides = parse_sets(sets)
    time_control = limits = None
    opponents: tuple[tuple[str, BotSpec], ...] = ()
    if config is not None:
        from arena.running.config import load_config

        cfg = load_config(config)
        names = list(cfg.variants)
        chosen = variant if variant is not None else names[0]
        if chosen not in cfg.variants:
            raise RunError(f"{config}: no variant {chosen!r}; it has {', '.join(names)}")
        rules = Rules.from_dict({**cfg.variants[chosen], **overrides})
        time_control, limits = cfg.time, cfg.sandbox
        if not bots:
            opponents = tuple((e.label, e.spec) for e in cfg.entrants)
        label = chosen
    else:
        rules = Rules.preset(preset or "classic", overrides)
        label = preset or "classic"
    if bots or not opponents:
        opponents = resolve_opponents(list(bots) or list(DEFAULT_BOTS))
    # The protocol 2 variants: an opponent that does not declare one could not answer it.
    from arena.botfile.supports import opt_in

    for key in opt_in(rules.to_dict()):
        refused = [label for label, spec in opponents if True not in (spec.supports.rules or {}).get(key, ())]
        if refused:
            raise RunError(f"{key}: {', '.join(refused)} {'does' if len(refused) == 1 else 'do'} not declare that "
                           f"{'it plays' if len(refused) == 1 else 'they play'} it (supports: {{rules: {{{key}: "
                           f"[true, false]}}}}); choose other --bots, or leave {key} off")
    return PlaySetup(rules=rules, bots=opponents, variant=label, seed=seed, human_name=name.strip(),
                     time=time_control, sandbox=limits)
