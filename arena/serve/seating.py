"""A person at the table, shared by ``arena play`` (the terminal) and ``arena serve`` (the browser).

What both front ends need and must agree on lives here, once: why a move is
refused (:func:`illegal_reason`, from the turn's ``legal`` summary, the data a
bot gets), the assisted-mode figures (:func:`assist`, from
:mod:`arena.engine.odds`), what a table is asked to play
(:class:`PlaySetup`, :func:`play_setup`) and how a match with people in it is
played: every bot a sandboxed :class:`arena.match.process.BotProcess` under the
run's time control, the referee (:func:`arena.match.referee.play_match`) the
only authority (:func:`play_seats`). A person is just another
:class:`~arena.protocol.player.Player`; the front end decides how it reads
moves and shows messages.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botfile.spec import BotSpec
from arena.engine.odds import probability_exact
from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Action, Bid, Calza, Dudo, Pass, Rules
from arena.errors import ArenaError, BotFault, RunError
from arena.match.referee import MatchOutcome, play_match
from arena.protocol.messages import ReadyMessage
from arena.protocol.player import Player
from arena.running.config import unique_labels
from arena.sdk import Legal, Turn
from arena.untrusted import printable

__all__ = [
    "ASSIST_CANDIDATES",
    "DEFAULT_BOTS",
    "HALF",
    "Assist",
    "FaceOdds",
    "PlaySetup",
    "assist",
    "candidate_raises",
    "face_odds",
    "illegal_reason",
    "legal_text",
    "pct",
    "play_seats",
    "play_setup",
    "resolve_opponents",
]

DEFAULT_BOTS: tuple[str, ...] = ("probabilistic", "cautious", "bluffer")
"""The opponents when none are named: three built-ins of different styles
(the odds player, the tight player, the liar), a table of four."""

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
            return (
                f"calza needs at least {rules.calza_min_players} players still in "
                f"(calza_min_players), there are {players_in}"
            )
        return "calza is not allowed now"
    if not isinstance(action, Bid):
        return f"{action!r} is not an action"
    q, f = action
    low = legal.min_quantity.get(f)
    if low is None:
        if standing is None and f == 1 and not rules.open_on_ones and not turn.palifico:
            return "a round may not open on 1s under these rules (open_on_ones: false)"
        if turn.palifico and standing is not None:
            return (
                f"this is a palifico round: the face stays {standing.face}; "
                f"raise the quantity of {_face_name(standing.face)}"
            )
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
    cands = [Bid(low, face) for face, low in sorted(turn.legal.min_quantity.items()) if low <= turn.legal.max_quantity]
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


def pct(p: float) -> str:
    """A probability as the assisted mode shows it: ``37.5%``."""
    return f"{100 * p:.1f}%"


def legal_text(legal: Legal) -> str:
    """The legal moves in words: ``bid 2x3 1x1 ... or more (quantity up to 8); dudo, calza``."""
    parts = [f"{q}x{f}" for f, q in sorted(legal.min_quantity.items()) if q <= legal.max_quantity]
    text = ("bid " + " ".join(parts) + f" or more (quantity up to {legal.max_quantity})") if parts else "no bid"
    calls = [c for c, ok in (("dudo", legal.dudo), ("calza", legal.calza), ("pass", legal.may_pass)) if ok]
    return text + ("; " + ", ".join(calls) if calls else "")


@dataclass(frozen=True, slots=True)
class Assist:
    """The assisted-mode figures of one turn, for the person to act only
    (everything is computed from their own dice and the unseen count)."""

    unseen: int
    wild: bool  # aces count for every face this round (wild_ones, and not palifico)
    faces: tuple[FaceOdds, ...]  # faces 1-6
    standing: Bid | None
    p_standing: float | None  # P(the standing bid is true); dudo wins with 1 - this
    p_calza: float | None  # P(exactly the standing bid): calza wins; None where calza is not allowed now
    raises: tuple[tuple[Bid, float], ...]  # the smallest legal bid of each face that can be true, likeliest first
    any_bid: bool  # some bid is legal (when ``raises`` is empty: none of them can be true)


def assist(turn: Turn) -> Assist:
    """Every assisted-mode figure of ``turn``, from :mod:`arena.engine.odds`
    (``arena play --assist`` prints these; ``arena serve`` draws them)."""
    standing = turn.standing
    p_standing = turn.probability(standing) if standing is not None else None
    p_calza = (
        probability_exact(standing, turn.dice, turn.unseen, wild=turn.wild)
        if standing is not None and turn.legal.calza
        else None
    )
    any_bid = any(q <= turn.legal.max_quantity for q in turn.legal.min_quantity.values())
    return Assist(
        turn.unseen,
        turn.wild,
        tuple(face_odds(turn)),
        standing,
        p_standing,
        p_calza,
        tuple(candidate_raises(turn, 6)),
        any_bid,
    )


def match_spec(prefix: str, variant: str, rules: Rules, seed: int, players: int) -> MatchSpec:
    """The spec of one match at a table with people: ``seed`` is the dice seed
    (the one the record carries); the bots' seeds are one-way from it
    (:func:`arena.engine.records.derive_seed`) and the match id is drawn apart
    from it, so nothing a bot is sent says anything about the dice."""
    # The match id goes to every bot: it is drawn on its own (an id made from
    # the seed let a bot derive every hand).
    return MatchSpec(
        index=0,
        match=f"{prefix}-{secrets.token_hex(6)}",
        variant=variant,
        rules=rules.to_dict(),
        entrants=tuple(range(players)),
        seed=derive_seed("play", seed, "match"),
        dice_seed=seed,
        table=0,
        rotation=0,
    )


def play_seats(
    spec: MatchSpec,
    seats: Sequence[tuple[str, Player | BotSpec]],
    *,
    time: Any = None,
    sandbox: Any = None,
    watch: Callable[[int, Player], Player] | None = None,
    ready: Callable[[int, ReadyMessage], None] | None = None,
) -> MatchOutcome:
    """Play ``spec`` with ``seats[i]`` = (name, player) of entrant position ``i``.

    A :class:`BotSpec` is started as a sandboxed :class:`arena.match.process.BotProcess`
    under ``time`` (:class:`arena.match.process.TimeControl`, None = the
    defaults) and ``sandbox`` (:class:`arena.sandbox.SandboxLimits`), exactly
    as in a run; any other player (a person) is played as it is. ``ready`` is
    told each bot's handshake (its own name and version, bot-controlled text);
    ``watch`` may wrap each player (to show the table as it plays). Every
    process is closed however the match ends (Ctrl-C included).
    """
    from arena.match.process import BotProcess, TimeControl
    from arena.sandbox import SandboxLimits

    time_control = time or TimeControl()
    limits = sandbox or SandboxLimits()
    procs: list[BotProcess] = []
    players: list[Player] = []
    try:
        for i, (label, who) in enumerate(seats):
            if isinstance(who, BotSpec):
                proc = BotProcess(who, limits.for_bot(who.limits, f"bot {label} ({who.path})"), time_control)
                procs.append(proc)
                try:
                    hello = proc.start()
                except BotFault as exc:
                    raise RunError(
                        f"bot {label} ({who.path}) failed its handshake: {exc.kind}: {printable(exc.detail)}"
                    ) from None
                if ready is not None:
                    ready(i, hello)
                player: Player = proc
            else:
                player = who
            players.append(watch(i, player) if watch is not None else player)
        return play_match(spec, players, [label for label, _ in seats], time_control.budget_ms)
    finally:
        for proc in procs:
            proc.close()


def seat_names(people: Sequence[str], bots: Sequence[str]) -> tuple[list[str], list[str]]:
    """The people's names as given (refused if two are the same) and the bots'
    labels made distinct from them and from each other (``name#2``)."""
    if len(set(people)) != len(people):
        raise RunError(f"two people have the same name at one table ({', '.join(people)}): give each its own")
    return list(people), unique_labels(list(bots), taken=set(people))


def check_name(name: str, what: str = "--name") -> str:
    """A person's name: short and printable (it is shown to every seat and written in the record)."""
    if not isinstance(name, str) or not name.strip() or len(name) > 40 or any(not c.isprintable() for c in name):
        raise RunError(f"{what} {name!r}: use a short printable name (1 to 40 characters)")
    return name.strip()


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


def resolve_opponents(names: Sequence[str]) -> tuple[tuple[str, BotSpec], ...]:
    """Bot names or files (as a config's ``bots`` list) -> (label, spec) pairs."""
    from arena.running.config import resolve_bots

    try:
        entrants = resolve_bots(Path("--bots"), list(names))
    except ArenaError as exc:
        raise RunError(str(exc).replace("--bots: bots: ", "--bots: ")) from None
    return tuple((e.label, e.spec) for e in entrants)


def refuse_undeclared(rules: Rules, opponents: Sequence[tuple[str, BotSpec]], instead: str) -> None:
    """The protocol 2 variants: an opponent that does not declare one it would
    meet could not answer it (``supports``), so the table is refused, naming
    the bots and the declaration; ``instead``: the other way out, in words."""
    from arena.botfile.supports import opt_in

    for key in opt_in(rules.to_dict()):
        refused = [label for label, spec in opponents if True not in (spec.supports.rules or {}).get(key, ())]
        if refused:
            raise RunError(
                f"{key}: {', '.join(refused)} {'does' if len(refused) == 1 else 'do'} not declare that "
                f"{'it plays' if len(refused) == 1 else 'they play'} it (supports: {{rules: {{{key}: "
                f"[true, false]}}}}); {instead}, or leave {key} off"
            )


def play_setup(
    *,
    bots: Sequence[str] = (),
    preset: str | None = None,
    config: str | Path | None = None,
    variant: str | None = None,
    sets: Sequence[str] = (),
    seed: int | None = None,
    name: str = "human",
) -> PlaySetup:
    """What ``arena play`` was asked for, validated: rules from ``preset`` (default
    classic) or from ``config``'s variant, with ``sets`` (``KEY=VALUE``) on top;
    opponents from ``bots``, else the config's bots, else :data:`DEFAULT_BOTS`."""
    from arena.engine.rules import parse_sets

    if preset is not None and config is not None:
        raise RunError("--preset and --config both set the rules: give one of them")
    if variant is not None and config is None:
        raise RunError(f"--variant {variant!r} picks a variant of a --config file; none was given")
    name = check_name(name)
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
    refuse_undeclared(rules, opponents, "choose other --bots")
    return PlaySetup(
        rules=rules,
        bots=opponents,
        variant=label,
        seed=seed,
        human_name=name.strip(),
        time=time_control,
        sandbox=limits,
    )
