"""``arena check BOT``: a conformance run that tells a bot author what to fix.

It plays the bot as a referee would, through any
:class:`~arena.protocol.player.Player` (a sandboxed
:class:`arena.match.process.BotProcess`, or in tests an in-process bot or a
scripted double):

1. the handshake (``hello`` -> ``ready``);
2. thousands of fuzzed turns: matches under every preset, with random
   variant keys (dice 1-10, calza and palifico settings, penalty; dead man's
   calza and veteran palifico for a bot that declares them, so that a bot
   out of a match is asked for its dead man's calza) and 2 to 10
   players, where every other seat plays random legal moves from a seeded
   generator. Only what the bot supports is fuzzed (its ``supports``
   declaration, :mod:`arena.botfile.supports`), narrowed further by the caller
   (``--preset``, ``--players``, ``--dice``): a :class:`FuzzSpace`. Every state is a real engine state and every message is what the
   referee sends (``match_start``, ``turn``, ``round_end``, ``match_end``);
3. each reply is parsed (:func:`arena.protocol.parse.parse_reply`) and checked
   (:func:`arena.engine.rules.why_illegal`); a failure is reported with the message
   that caused it, the reply, the reason and what to do. A faulting bot is
   restarted and the check goes on with the next match, as in a tournament;
4. the whole run is repeated with a fresh bot and the same seed: every reply
   must be the same (a bot must draw only on the ``seed`` of ``match_start``).
   The repeat starts a new process before each of its first few matches, so
   state carried from one match into the next shows up too;
5. latency percentiles of the replies (wall clock, and CPU where the
   transport measures it).

Pure logic over a transport: the process, sandbox and time control are the
transport's business.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.botfile.supports import ADMIN_KEYS, OPT_IN_KEYS, Supports
from arena.engine.dice import roll_table
from arena.engine.records import derive_seed
from arena.engine.rules import KEYS, PRESETS, Bid, Rules, State, apply, deal, legal_actions, new_match, why_illegal
from arena.errors import ArenaError, BotFault, ConfigError, FaultKind, ProtocolError
from arena.match.referee import first_opener
from arena.protocol.messages import (
    ReadyMessage,
    RefereeMessage,
    TurnMessage,
    hello_message,
    match_end_message,
    match_start_message,
    round_end_message,
    turn_message,
)
from arena.protocol.parse import parse_ready, parse_reply
from arena.protocol.player import Player
from arena.untrusted import printable

__all__ = [
    "CheckReport",
    "FuzzSpace",
    "PlayerFactory",
    "Problem",
    "fuzz_rules",
    "fuzz_space",
    "own_traceback",
    "percentiles",
    "run_check",
]

PlayerFactory = Callable[[], Player]  # a fresh player (a new process) per call

FRESH_IN_REPEAT: frozenset[int] = frozenset(range(1, 6))  # matches the repeat plays in a new process

# What to tell the author, per fault kind (docs/protocol.md's kinds, plus the check's own).
ADVICE: dict[str, str] = {
    FaultKind.ILLEGAL: "choose from turn.legal (Python: turn.legal.actions() or turn.legal.is_legal(action); "
    "protocol: a face in legal.min_quantity, a quantity from its minimum to max_quantity, "
    "dudo/calza only where legal.dudo/legal.calza are true; pass only where legal.pass is: "
    "a dead man's turn)",
    FaultKind.MALFORMED: 'reply with exactly one JSON object on one line: {"action": "bid", "quantity": Q, '
    '"face": F} with JSON integers, {"action": "dudo"} or {"action": "calza"}',
    FaultKind.TIMEOUT: "reply within time_ms of CPU time; a decision should take well under a millisecond",
    FaultKind.CRASH: "the bot process exited or raised: its stderr, shown with the problem, says where",
    FaultKind.UNASKED: "write to stdout only in answer to hello and turn; log to stderr instead",
    "handshake": 'answer {"type": "hello"} with {"type": "ready", "name": "...", "version": "..."} '
    "within the start-up limit",
    "nondeterministic": "draw randomness only from the match_start seed (Python: self.rng or turn.rng), "
    "never from time, os.urandom, the global random module or hash order",
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One failure, with everything an author needs to reproduce and fix it."""

    kind: str  # a FaultKind (illegal, malformed, timeout, crash, unasked), or handshake or nondeterministic
    match: str
    detail: str  # what happened
    message: RefereeMessage | None = None  # the message the bot was answering (or last sent)
    reply: str | None = None  # what the bot answered, clipped
    context: str = ""  # the rules and table, in words
    stderr: str = ""
    reason: str = ""  # what makes problems alike (an illegal move's rule), for grouping
    fix: str = ""  # what to do, when the kind's general advice does not fit

    @property
    def key(self) -> tuple[str, str]:
        """Problems with equal keys are one bug: the same kind and the same
        reason but for its numbers (a quantity, a line, a match)."""
        return (self.kind, _alike(self.reason or self.detail))

    @property
    def advice(self) -> str:
        return self.fix or ADVICE.get(self.kind, "see docs/protocol.md")

    def render(self, own: Sequence[str] = ()) -> str:
        """The problem's lines but its fix (printed once per report); ``own``:
        the bot's own files, where its tracebacks start."""
        detail = self.detail
        if self.stderr:  # shown whole below: the detail's excerpt of it would say it twice
            detail = _STDERR_PART.sub("", detail)
        detail = printable(detail, newlines=False)  # it quotes what the bot wrote
        lines = [f"  {self.match}: {detail}" if self.match != "-" else f"  {detail}"]
        if self.context:
            lines.append(f"  table:   {self.context}")
        if self.message is not None:
            lines.append(f"  message: {_cut(json.dumps(self.message), 700)}")
        if self.reply is not None:
            lines.append(f"  reply:   {printable(self.reply)}")
        if self.stderr:
            text = printable(_cut(own_traceback(self.stderr, own).rstrip("\n"), 1500))
            lines.append("  stderr:  " + text.replace("\n", "\n" + " " * 11))
        return "\n".join(lines)


_STDERR_PART = re.compile(r"; stderr(?: ends)?: .*\Z", re.S)
_FRAME = re.compile(r'^  File "([^"]+)", line \d+')


def own_traceback(text: str, own: Sequence[str]) -> str:
    """``text`` (a bot's stderr) with each Python traceback starting at the
    first frame in the bot's own files (``own``: files, or folders ending in
    ``/``): the frames above it (an interpreter's start-up, a launcher, a
    framework) say nothing to the bot's author. A traceback with no frame of
    the bot's is left whole."""
    if not own:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        if not lines[i].startswith("Traceback (most recent call last):"):
            i += 1
            continue
        i += 1
        frames: list[tuple[str, list[str]]] = []  # (file, its lines)
        while i < len(lines) and (m := _FRAME.match(lines[i])):
            block = [lines[i]]
            i += 1
            while i < len(lines) and lines[i].startswith("    "):
                block.append(lines[i])
                i += 1
            frames.append((m.group(1), block))
        first = next(
            (
                k
                for k, (path, _) in enumerate(frames)
                if any(path == o or (o.endswith("/") and path.startswith(o)) for o in own)
            ),
            0,
        )
        if first:
            out.append(f"  ({first} frame{'s' if first > 1 else ''} above the bot's own code left out)")
        for _, block in frames[first:]:
            out.extend(block)
    return "\n".join(out)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50, p90, p99 (nearest rank) and max of ``values``; empty -> {}."""
    if not values:
        return {}
    s = sorted(values)
    n = len(s)

    def rank(q: float) -> float:
        return s[min(n - 1, max(0, int(q * n + 0.999999) - 1))]

    return {"p50": rank(0.50), "p90": rank(0.90), "p99": rank(0.99), "max": s[-1]}


@dataclass
class CheckReport:
    """The outcome of :func:`run_check`; ``ok`` is False on any problem."""

    bot: str
    seed: int
    turns_asked: int
    ready: ReadyMessage | None = None
    turns: int = 0  # turns answered in the first run (legal or not)
    matches: int = 0
    presets: Counter[str] = field(default_factory=Counter)
    players: Counter[int] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)  # bid / dudo / calza
    problems: list[Problem] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    deterministic: bool | None = None  # None: not compared
    restarts: int = 0
    stopped_early: str = ""  # why the run stopped before ``turns_asked`` ("3 timeouts"), if it did
    space: str = ""  # the fuzzed space, in words (FuzzSpace.describe)
    own: tuple[str, ...] = ()  # the bot's own files (a folder ends in /): its tracebacks start there

    @property
    def ok(self) -> bool:
        return not self.problems and self.ready is not None and self.turns > 0

    def render(self, show: int = 10) -> str:
        out: list[str] = []
        name = self.ready["name"] if self.ready is not None else self.bot
        out.append(
            f"arena check {printable(self.bot, newlines=False)} "
            f"(seed {self.seed}: --seed {self.seed} repeats this check)"
        )
        if self.ready is None:
            out.append("  handshake: FAILED")
        else:
            version = self.ready["version"]
            shown = f"version {printable(repr(version), newlines=False)}" if version is not None else "no version"
            out.append(f"  handshake: ok, ready as {printable(repr(name), newlines=False)} ({shown})")
        if self.space:
            out.append(f"  fuzzed:    {self.space}")
        turns = [f"{self.turns} in {self.matches} match{'' if self.matches == 1 else 'es'}"]
        if self.presets:
            turns.append("presets " + ", ".join(f"{k} {v}" for k, v in sorted(self.presets.items())))
        if self.players:
            turns.append("players " + ", ".join(f"{k}:{v}" for k, v in sorted(self.players.items())))
        out.append("  turns:     " + "; ".join(turns))
        if self.actions:
            out.append("  actions:   " + ", ".join(f"{k} {v}" for k, v in sorted(self.actions.items())))
        for label, values in (("latency", self.wall_ms), ("cpu", self.cpu_ms)):
            pc = percentiles(values)
            if pc:
                out.append(f"  {label + ':':<10} " + "  ".join(f"{k} {v:.3f} ms" for k, v in pc.items()))
        if self.deterministic is None:
            why = " (the first run stopped early)" if self.stopped_early else ""
            out.append(f"  same seed, same actions: not compared{why}")
        else:
            out.append(f"  same seed, same actions: {'yes' if self.deterministic else 'NO'}")
        if self.restarts:
            out.append(f"  restarts after a fault: {self.restarts}")
        if self.stopped_early:
            out.append(f"  stopped after {self.stopped_early}, before {self.turns_asked} turns; fix these first")
        if self.problems:
            kinds = Counter(p.kind for p in self.problems)
            groups: dict[tuple[str, str], list[Problem]] = {}
            for p in self.problems:
                groups.setdefault(p.key, []).append(p)
            n = len(self.problems)
            out.append(
                f"FAILED: {n} problem{'s' if n > 1 else ''} ("
                + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
                + (
                    f"), {len(groups)} distinct: one example of each below"
                    if len(groups) > 1
                    else "), all alike: one example below"
                )
            )
            fixes: dict[str, list[str]] = {}  # each piece of advice once, with the kinds it is for
            for alike in list(groups.values())[:show]:
                first = alike[0]
                matches = list(dict.fromkeys(p.match for p in alike))
                where = (
                    f" {len(alike)} times, in {len(matches)} match{'es' if len(matches) > 1 else ''} ("
                    + ", ".join(matches[:5])
                    + (", ..." if len(matches) > 5 else "")
                    + ")"
                    if len(alike) > 1
                    else ""
                )
                shown = first.render(self.own)
                if where:
                    out.append(f"[{first.kind}]{where}\n{shown}")
                else:  # one of a kind: its line is the heading
                    out.append(f"[{first.kind}] {shown[2:]}")
                kinds_for = fixes.setdefault(first.advice, [])
                if first.kind not in kinds_for:
                    kinds_for.append(first.kind)
            if len(groups) > show:
                out.append(f"... and {len(groups) - show} more distinct problems (--show {len(groups)} lists them)")
            out.append("How to fix:")
            for advice, for_kinds in fixes.items():
                out.append(f"  [{', '.join(for_kinds)}] {advice}")
        elif self.ok:
            out.append("OK: every reply was legal and the same seed gave the same actions")
        else:
            out.append("FAILED: no turn was answered")
        return "\n".join(out)


# ---------------------------------------------------------------------------
# Fuzzed rule sets and random opponents
# ---------------------------------------------------------------------------


ALL_PLAYERS: tuple[int, ...] = tuple(range(2, 11))
ALL_DICE: tuple[int, ...] = tuple(range(1, 11))


@dataclass(frozen=True)
class FuzzSpace:
    """What ``arena check`` draws matches from: the presets (each covered in
    turn), table sizes and starting dice, within what the bot declares.

    ``dice`` ``None`` is the default spread (mostly small, some 1 and some up
    to 10); ``fixed_rules``: the bot declared presets, so only the keys a
    preset leaves open (dice, who opens) vary, the others keep the preset's
    values."""

    presets: tuple[str, ...] = tuple(PRESETS)
    players: tuple[int, ...] = ALL_PLAYERS
    dice: tuple[int, ...] | None = None
    supports: Supports = Supports()
    narrowed: tuple[str, ...] = ()  # the caller's narrowing, in words

    @property
    def fixed_rules(self) -> bool:
        return self.supports.presets is not None

    def describe(self) -> str:
        dice = "1-10" if self.dice is None else _span(self.dice)
        by = []
        if self.supports.restricted:
            by.append(f"the bot's supports {json.dumps(self.supports.to_data(), separators=(', ', ': '))}")
        by += list(self.narrowed)
        return f"presets {', '.join(self.presets)}; players {_span(self.players)}; dice {dice}" + (
            f" (narrowed by {' and '.join(by)})" if by else " (everything)"
        )


def _span(values: Sequence[int]) -> str:
    v = sorted(values)
    if len(v) > 2 and v == list(range(v[0], v[-1] + 1)):
        return f"{v[0]}-{v[-1]}"
    return ", ".join(map(str, v))


def _forced(supports: Supports, preset: str, rng: random.Random | None, over: dict[str, Any]) -> dict[str, Any]:
    """``over`` with every key the bot restricts set to a value it allows (drawn
    with ``rng``, or the first allowed value), when it is not one already."""
    base = Rules.preset(preset)
    out = dict(over)
    for key, allowed in (supports.rules or {}).items():
        if out.get(key, getattr(base, key)) not in allowed:
            choices = sorted(allowed, key=repr)
            out[key] = rng.choice(choices) if rng is not None else choices[0]
    return out


def fuzz_space(
    supports: Supports = Supports(),
    *,
    presets: Sequence[str] | None = None,
    players: Sequence[int] | None = None,
    dice: Sequence[int] | None = None,
) -> FuzzSpace:
    """The space to fuzz: what ``supports`` allows, narrowed by ``presets``,
    ``players`` and ``dice`` (``None``: no narrowing). A narrowing that leaves
    nothing to play raises :class:`ConfigError` saying why."""
    narrowed = []
    for flag, given, allowed in (
        ("--preset", presets, PRESETS),
        ("--players", players, ALL_PLAYERS),
        ("--dice", dice, ALL_DICE),
    ):
        if given is None:
            continue
        if not given:
            raise ConfigError(f"{flag}: give at least one value")
        bad = [v for v in given if v not in allowed]
        if bad:
            raise ConfigError(f"{flag} {bad[0]}: not allowed; use any of {', '.join(map(str, allowed))}")
        narrowed.append(f"{flag} {','.join(map(str, dict.fromkeys(given)))}")
    sizes = [n for n in ALL_PLAYERS if (players is None or n in players)]
    why_size = ""
    if supports.players is not None:
        if players is not None and not set(sizes) & supports.players:
            why_size = f"it plays only {_span(sorted(supports.players))} players (supports.players)"
        sizes = [n for n in sizes if n in supports.players]
    if not sizes:
        raise ConfigError(f"--players {','.join(map(str, players or ()))}: nothing to fuzz: {why_size}")
    dice_ok = [
        d
        for d in ALL_DICE
        if (dice is None or d in dice)
        and (supports.dice is None or d in supports.dice)
        and d in (supports.rules or {}).get("dice", ALL_DICE)
    ]
    if not dice_ok:
        common = sorted(set(supports.dice or ALL_DICE) & set((supports.rules or {}).get("dice", ALL_DICE)))
        what = (
            f"the bot plays only {_span(common)} starting dice (supports)"
            if common
            else "the bot's supports.dice and supports.rules.dice have no value in common"
        )
        flag = f"--dice {','.join(map(str, dice))}: " if dice is not None else ""
        raise ConfigError(f"{flag}nothing to fuzz: {what}")
    restricted_dice = dice is not None or supports.dice is not None or "dice" in (supports.rules or {})
    names = [p for p in PRESETS if presets is None or p in presets]
    kept, why_not = [], {}
    for p in names:
        # Supported if the preset itself, with the bot's restricted keys set to
        # values it allows, is a rule set it declares it plays.
        rules = Rules.preset(p, _forced(supports, p, None, {"dice": dice_ok[0]})).to_dict()
        why = supports.why_not(rules, None)
        if why is None:
            kept.append(p)
        else:
            why_not[p] = why
    if not kept:
        detail = "; ".join(f"{p}: {w}" for p, w in why_not.items())
        flag = f"--preset {','.join(presets)}: " if presets is not None else ""
        raise ConfigError(f"{flag}nothing to fuzz: the bot supports none of these presets ({detail})")
    return FuzzSpace(
        presets=tuple(kept),
        players=tuple(sizes),
        dice=tuple(dice_ok) if restricted_dice else None,
        supports=supports,
        narrowed=tuple(narrowed),
    )


FULL_SPACE = FuzzSpace()


def parse_narrowing(values: Sequence[str], flag: str, numbers: bool) -> list[Any] | None:
    """``--preset``/``--players``/``--dice`` values: repeated, comma lists, and
    for numbers ranges ``2-4``; nothing given is ``None`` (no narrowing)."""
    if not values:
        return None
    out: list[Any] = []
    for value in values:
        for item in (part.strip() for part in value.split(",")):
            if not item:
                continue
            if not numbers:
                out.append(item)
                continue
            lo, dash, hi = item.partition("-")
            try:
                out += list(range(int(lo), int(hi) + 1)) if dash else [int(item)]
            except ValueError:
                raise ConfigError(
                    f"{flag} {value!r}: write numbers, comma lists or ranges, e.g. {flag} 2,3 or {flag} 2-4"
                ) from None
    return out


def fuzz_rules(rng: random.Random, index: int, space: FuzzSpace = FULL_SPACE) -> tuple[str, Rules, int]:
    """The preset (cycled, so every preset of the space is covered), rules and
    player count of match ``index``; always a table the space allows.

    With the whole space the draws are the ones this function always made (the
    same seed fuzzes the same matches as before declarations existed)."""
    names = space.presets
    preset = names[index % len(names)]
    players = rng.randint(2, 10) if space.players == ALL_PLAYERS else rng.choice(space.players)
    base = Rules.preset(preset)
    over: dict[str, Any] = {}
    roll = rng.random()
    if space.dice is not None:
        over["dice"] = rng.choice(space.dice)
    elif roll < 0.15:
        over["dice"] = 1
    elif roll < 0.25:
        over["dice"] = rng.randint(6, 10)  # up to 100 dice in play: the largest quantities
    elif roll < 0.5:
        over["dice"] = rng.randint(2, 5)
    if not space.fixed_rules:  # a declared preset is played as it is, but for the dice and the opener
        if base.calza:
            over["calza_reward"] = rng.choice(KEYS["calza_reward"].choices)
            over["calza_min_players"] = rng.randint(2, 4)
        if base.palifico:
            over["palifico_change_face"] = rng.random() < 0.3
            over["palifico_min_players"] = rng.randint(2, 4)
        if rng.random() < 0.2:
            over["penalty"] = "difference"
    over["first"] = rng.choice(KEYS["first"].choices)
    # The protocol 2 variants, for a bot that declares them (drawn only then, so
    # a bot without them fuzzes the matches it always did): half the matches.
    for key in OPT_IN_KEYS:
        if True in (space.supports.rules or {}).get(key, ()) and rng.random() < 0.5:
            over[key] = True
            if key == "dead_mans_calza":
                over["dead_mans_dice"] = rng.randint(1, 3)
            else:
                over["veteran_from"] = rng.choice(KEYS["veteran_from"].choices)
    rules = Rules.preset(preset, _forced(space.supports, preset, rng, over))
    if space.supports.why_not(rules.to_dict(), players) is not None:
        # A drawn key the declaration rules out in a way _forced cannot mend (a
        # rule value that would take the rules off the declared presets): play
        # the preset as fuzz_space found it supported, with the drawn dice and opener.
        keep = {k: v for k, v in over.items() if k in ADMIN_KEYS}
        rules = Rules.preset(preset, _forced(space.supports, preset, None, keep))
    return preset, rules, players


def _random_move(state: State, rng: random.Random) -> Any:
    """A legal move for a fuzzing opponent: mostly low raises, often a call, so rounds end."""
    actions = legal_actions(state)
    calls = [a for a in actions if not isinstance(a, Bid)]
    bids = [a for a in actions if isinstance(a, Bid)]
    if calls and (not bids or rng.random() < 0.3):
        return rng.choice(calls)
    if not state.history:  # open anywhere up to about half the dice in play
        return rng.choice(bids[: max(1, 3 * state.total)])
    return rng.choice(bids[:12])


def _table(preset: str, rules: Rules, state: State, seat: int) -> str:
    base = Rules.preset(preset)
    changed = {k: v for k, v in rules.to_dict().items() if v != getattr(base, k)}
    over = "" if not changed else " with " + ", ".join(f"{k}={v}" for k, v in changed.items())
    return (
        f"preset {preset}{over}; {len(state.counts)} players; you are seat {seat}; "
        f"round {state.round}{' (palifico)' if state.palifico else ''}"
    )


def _alike(detail: str) -> str:
    """A fault detail with its numbers blanked, so the same fault in other matches groups together."""
    return re.sub(r"\d+(\.\d+)?", "N", detail)[:120]


def _dump(reply: Any) -> str:
    try:
        return _cut(json.dumps(reply), 300)
    except (TypeError, ValueError):
        return _cut(repr(reply), 300)


def _describe(action: Any) -> str:
    return f"bid {action.quantity}x{action.face}" if isinstance(action, Bid) else str(action)


# ---------------------------------------------------------------------------
# One run over the fuzzed matches
# ---------------------------------------------------------------------------


@dataclass
class _Run:
    transcript: list[tuple[str, int, int, str]] = field(default_factory=list)  # match, round, bids, reply
    messages: list[TurnMessage] = field(default_factory=list)  # the turn message of each entry


def _stderr(bot: Player) -> str:
    tail = getattr(bot, "stderr_tail", None)
    if not callable(tail):
        return ""
    try:
        return str(tail())
    except Exception:  # a diagnostic must never hide the fault it decorates
        return ""


def _session(
    factory: PlayerFactory,
    report: CheckReport,
    run: _Run,
    *,
    record: bool,
    max_problems: int,
    max_timeouts: int,
    time_ms: int,
    name: str,
    space: FuzzSpace,
    fresh_before: frozenset[int] = frozenset(),
) -> None:
    """Play fuzzed matches until ``report.turns_asked`` turns have been answered."""
    rng = random.Random(derive_seed(report.seed, "check"))
    problems = report.problems if record else []
    bot: Player | None = None
    answered = 0
    try:
        bot = factory()
        try:
            ready = _handshake(bot)
        except BotFault as exc:
            problems.append(
                Problem(
                    "handshake",
                    "-",
                    f"{exc.kind}: {exc.detail}",
                    hello_message(),
                    stderr=_stderr(bot),
                    fix=handshake_fix(exc),
                )
            )
            return
        if record:
            report.ready = ready
        index = 0

        def enough() -> bool:  # each timeout waits out the wall-clock cap: stop after a few
            return len(problems) >= max_problems or sum(p.kind == FaultKind.TIMEOUT for p in problems) >= max_timeouts

        while answered < report.turns_asked and not enough():
            if index in fresh_before:  # a new process for this match: catches state kept across matches
                bot = _restart(bot, factory, report, False, problems)
                if bot is None:
                    return
            preset, rules, n = fuzz_rules(rng, index, space)
            mid = f"check-{index:05d}"
            index += 1
            seat = rng.randrange(n)
            names = [name if s == seat else f"fuzz{s}" for s in range(n)]
            dice_seed = derive_seed(report.seed, "dice", index)
            state = new_match(rules, n, first_opener(rules, n, dice_seed))
            if record:
                report.matches += 1
                report.presets[preset] += 1
                report.players[n] += 1
            start = match_start_message(mid, seat, names, rules.to_dict(), derive_seed(report.seed, "bot", index))
            last_sent: RefereeMessage = start
            try:
                bot.notify(start)
                while state.placements is not None or answered < report.turns_asked:
                    if state.placements is not None:
                        last_sent = end = match_end_message(mid, state.placements)
                        bot.notify(end)
                        break
                    state = deal(state, roll_table(dice_seed, state.round, state.counts))
                    while state.dice is not None and answered < report.turns_asked:
                        if state.to_act != seat:
                            state = apply(state, _random_move(state, rng))
                            continue
                        last_sent = turn = turn_message(mid, state, time_ms)
                        t0 = time.perf_counter()
                        reply, cpu = bot.request(turn)
                        wall = time.perf_counter() - t0
                        answered += 1
                        run.messages.append(turn)
                        if record:
                            report.turns += 1
                            report.wall_ms.append(wall * 1000)
                            report.cpu_ms.append(cpu * 1000)
                        try:
                            action = parse_reply(reply)
                        except ProtocolError as exc:
                            run.transcript.append((mid, state.round, len(state.history), _dump(reply)))
                            raise BotFault(exc.detail, FaultKind.MALFORMED) from None
                        text = _describe(action)
                        run.transcript.append((mid, state.round, len(state.history), text))
                        if record:
                            report.actions[type(action).__name__.lower()] += 1
                        reason = why_illegal(state, action)
                        if reason is not None:
                            problems.append(
                                Problem(
                                    FaultKind.ILLEGAL,
                                    mid,
                                    f"{text} is illegal: {reason}",
                                    last_sent,
                                    _dump(reply),
                                    _table(preset, rules, state, seat),
                                    reason=reason,
                                )
                            )
                            raise _Restart()
                        state = apply(state, action)
                    if state.dice is None:
                        last_sent = result = round_end_message(mid, state)
                        bot.notify(result)
            except BotFault as exc:
                problems.append(
                    Problem(
                        exc.kind,
                        mid,
                        exc.detail,
                        last_sent,
                        None,
                        _table(preset, rules, state, seat),
                        _stderr(bot),
                        reason=_alike(exc.detail),
                    )
                )
                bot = _restart(bot, factory, report, record, problems)
            except _Restart:
                bot = _restart(bot, factory, report, record, problems)
            if bot is None:
                return
        if record and enough():
            timeouts = sum(p.kind == FaultKind.TIMEOUT for p in problems)
            report.stopped_early = f"{timeouts} timeouts" if timeouts >= max_timeouts else f"{len(problems)} problems"
    finally:
        if bot is not None:
            bot.close()


def _handshake(bot: Player) -> ReadyMessage:
    """``bot.start()``, its ``ready`` parsed again: a player returns it parsed,
    but this check is where a wrong one must show, whatever the player."""
    return parse_ready(bot.start())


def handshake_fix(exc: BotFault) -> str:
    """What to do about a failed handshake: the hello advice only when the
    process was alive and answered wrongly or not at all."""
    if exc.kind == FaultKind.CRASH:
        # The detail reads "bot X exited ... with status N; CAUSE; ...; stderr: ...".
        found = exc.detail.split("; stderr", 1)[0].split("; ")[1:2]
        first = f"fix this first: {found[0]}. " if found else ""
        return (
            f"{first}The process ended before it could answer hello, so the handshake itself was never "
            f"reached; the first and last lines of its stderr are shown above"
        )
    if exc.kind == FaultKind.TIMEOUT:
        return ADVICE["handshake"] + " (load tables before answering, and flush stdout after the line)"
    return ADVICE["handshake"] + "; write anything else to stderr"


class _Restart(Exception):
    """The bot faulted: start a fresh one before the next match (as a tournament does)."""


def _restart(
    bot: Player, factory: PlayerFactory, report: CheckReport, record: bool, problems: list[Problem]
) -> Player | None:
    """Close ``bot`` and start a fresh one; ``None`` (and a problem) if it fails its handshake."""
    bot.close()
    if record:
        report.restarts += 1
    fresh = factory()
    try:
        _handshake(fresh)
    except BotFault as exc:
        problems.append(
            Problem(
                "handshake",
                "-",
                f"restarting after a fault: {exc.kind}: {exc.detail}",
                hello_message(),
                stderr=_stderr(fresh),
                fix=handshake_fix(exc),
            )
        )
        fresh.close()
        return None
    return fresh


def run_check(
    factory: PlayerFactory,
    *,
    turns: int = 2000,
    seed: int = 0,
    time_ms: int = 1000,
    name: str = "bot",
    repeat: bool = True,
    max_problems: int = 50,
    max_timeouts: int = 3,
    space: FuzzSpace = FULL_SPACE,
) -> CheckReport:
    """Check the bot that ``factory`` starts (a fresh transport per call): see the module doc.

    ``turns`` bot decisions are asked for in each of the two runs (one with
    ``repeat=False``). A run stops early after ``max_problems`` problems or
    ``max_timeouts`` timeouts (each costs the wall-clock cap); the repeat is
    then skipped, since the bot must be fixed first.
    """
    if turns < 1:
        raise ArenaError(f"--turns {turns}: ask for at least 1 turn (thousands find more)")
    report = CheckReport(bot=name, seed=seed, turns_asked=turns, space=space.describe())
    first = _Run()
    limits = {
        "max_problems": max_problems,
        "max_timeouts": max_timeouts,
        "time_ms": time_ms,
        "name": name,
        "space": space,
    }
    _session(factory, report, first, record=True, **limits)  # type: ignore[arg-type]
    if not repeat or report.ready is None or report.stopped_early:
        return report
    second = _Run()
    # The repeat starts a fresh process before each of the first few matches, so
    # a bot that carries state (or a once-per-process seed) from one match into
    # the next answers differently there.
    _session(factory, report, second, record=False, fresh_before=FRESH_IN_REPEAT, **limits)  # type: ignore[arg-type]
    report.deterministic = True
    for i, (a, b) in enumerate(zip(first.transcript, second.transcript)):
        if a != b:
            report.deterministic = False
            msg = first.messages[i]
            report.problems.append(
                Problem(
                    "nondeterministic",
                    a[0],
                    f"round {a[1]}, after {a[2]} bid(s): the first run answered {a[3]}, "
                    f"the second run answered {b[3]} to the same message"
                    + (
                        " (in the second run a freshly started process played this match: does the bot keep "
                        "state from one match to the next, or seed its randomness once per process instead "
                        "of from each match_start?)"
                        if int(a[0].rsplit("-", 1)[1]) in FRESH_IN_REPEAT
                        else ""
                    ),
                    msg,
                )
            )
            break
    else:
        if len(first.transcript) != len(second.transcript):
            report.deterministic = False
            report.problems.append(
                Problem(
                    "nondeterministic",
                    "-",
                    f"the first run answered {len(first.transcript)} turns, the second {len(second.transcript)}",
                )
            )
    return report


def check_bot(
    path: str,
    *,
    turns: int = 2000,
    seed: int | None = None,
    time_ms: int = 1000,
    sandbox: str = "auto",
    presets: Sequence[str] | None = None,
    players: Sequence[int] | None = None,
    dice: Sequence[int] | None = None,
) -> CheckReport:
    """``arena check``: run :func:`run_check` on the bot file ``path`` in its
    sandbox, over what it supports narrowed by ``presets``, ``players`` and
    ``dice`` (:func:`fuzz_space`; an empty result is refused before the bot starts).

    Without ``seed`` a 63-bit secret one is drawn (and shown in the report, so
    the check can be repeated): the fuzzed dice derive from it, and a seed a
    bot could guess would let it compute every hand.
    """
    import secrets

    if seed is None:
        seed = secrets.randbits(63)
    # Imported here: the process layer is only needed to talk to a real bot.
    from arena.botfile.spec import load_bot
    from arena.match.process import BotProcess, TimeControl
    from arena.sandbox import SandboxLimits

    spec = load_bot(path)
    try:
        space = fuzz_space(spec.supports, presets=presets, players=players, dice=dice)
    except ConfigError as exc:
        raise ConfigError(f"arena check {path}: {exc}") from None
    # The bot's own limits: the defaults, with the raises it asks for (up to the default ceilings).
    limits = SandboxLimits(mode=sandbox).for_bot(spec.limits, f"bot {spec.name} ({spec.path})")  # type: ignore[arg-type]
    clock = TimeControl(budget_ms=time_ms)
    report = run_check(
        lambda: BotProcess(spec, limits, clock), turns=turns, seed=seed, time_ms=time_ms, name=spec.name, space=space
    )
    report.bot = str(path)
    # Real paths: the sandbox shows the bot's files at their real paths, which its tracebacks name.
    real = os.path.realpath(spec.path)
    report.own = (real, os.path.join(os.path.dirname(real), Path(real).stem) + "/")
    return report
