"""What a bot says it can play: table sizes, starting dice, presets, rule values.

A bot that only plays two players with one die each declares so, and the
scheduler never seats it anywhere else (``arena check`` fuzzes only what it
supports). The declaration is data, read without running the bot's code:

- a manifest's ``supports:`` key;
- in a Python bot file, a module-level literal ``SUPPORTS = {...}``, read from
  the file's syntax tree (the file is never imported outside the sandbox).

Both take the same mapping, every key optional (absent: anything)::

    supports:
      players: [2]            # table sizes, a list or a range "2-4"
      dice: [1, 2]            # starting dice per player (the rule key dice)
      presets: [neller]       # rule sets equal to one of these presets
      rules: {calza: [false]} # rule key -> the values allowed

The rule variants of protocol 2 (``dead_mans_calza``, ``veteran_palifico``:
``OPT_IN_KEYS``) are the exception to "absent: anything": a bot plays a table
with one of them on only if it lists the key with ``true`` in ``rules``
(``rules: {dead_mans_calza: [true, false]}``), since a bot written before
them cannot answer a dead man's turn, or may assume the palifico face fixed.

A rule set matches a preset when every rule key but ``dice``, ``seating``,
``first`` and ``max_rounds`` has the preset's value: the starting dice have
their own key, and the other three change who sits where and when a match is
cut short, not how a round is played.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arena.engine.rules import KEYS, PRESETS, Rules
from arena.errors import ArenaError, ConfigError
from arena.untrusted import short_repr

__all__ = ["Supports", "ADMIN_KEYS", "OPT_IN_KEYS", "hello_version", "opt_in"]

ADMIN_KEYS = frozenset({"dice", "seating", "first", "max_rounds"})
# Rule switches a bot must declare it plays before it is seated where they are on.
OPT_IN_KEYS = ("dead_mans_calza", "veteran_palifico")


def hello_version(supports: Supports, python: bool) -> int:
    """The protocol version a bot is greeted with: 2 where it can meet a
    version 2 message (a Python bot, whose host is the arena's own, or a bot
    that declares one of ``OPT_IN_KEYS``), else 1, so that a program written
    for version 1, even one that insists on it, plays on unchanged."""
    rules = supports.rules or {}
    return 2 if python or any(True in rules.get(k, ()) for k in OPT_IN_KEYS) else 1


def opt_in(rules: Mapping[str, Any]) -> tuple[str, ...]:
    """The switches of ``OPT_IN_KEYS`` that are on in ``rules``."""
    return tuple(k for k in OPT_IN_KEYS if rules.get(k) is True)


_KEYS = ("players", "dice", "presets", "rules")


def _numbers(value: Any, where: str, low: int, high: int) -> frozenset[int]:
    """A list of integers, or a range written ``"2-4"``, each from ``low`` to ``high``."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, str):
        lo, dash, hi = value.partition("-")
        try:
            if not dash:
                raise ValueError
            value = list(range(int(lo), int(hi) + 1))
        except ValueError:
            raise ConfigError(
                f'{where}: {short_repr(value)} is not a list of integers or a range such as "2-4"'
            ) from None
    if not isinstance(value, list) or not value:
        raise ConfigError(f'{where}: {short_repr(value)} is not a list of integers or a range such as "2-4"')
    out = set()
    for v in value:
        if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= high:
            raise ConfigError(f"{where}: {short_repr(v)} is not an integer from {low} to {high}")
        out.add(v)
    return frozenset(out)


@dataclass(frozen=True)
class Supports:
    """A bot's declaration; ``None`` in a field means anything."""

    players: frozenset[int] | None = None
    dice: frozenset[int] | None = None
    presets: tuple[str, ...] | None = None
    rules: Mapping[str, frozenset[Any]] | None = None

    @classmethod
    def from_data(cls, data: Any, where: str) -> Supports:
        """Validate a ``supports`` mapping; ``where`` names the file and key in errors."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a mapping with any of {', '.join(_KEYS)}, got {short_repr(data)}")
        unknown = [k for k in data if k not in _KEYS]
        if unknown:
            raise ConfigError(f"{where}: unknown key {short_repr(unknown[0])}; the keys are {', '.join(_KEYS)}")
        players = _numbers(data["players"], f"{where}.players", 2, 10) if "players" in data else None
        dice = (
            _numbers(data["dice"], f"{where}.dice", KEYS["dice"].low or 1, KEYS["dice"].high or 10)
            if "dice" in data
            else None
        )
        presets = None
        if "presets" in data:
            raw = data["presets"]
            raw = [raw] if isinstance(raw, str) else raw
            if not isinstance(raw, list) or not raw or not all(isinstance(p, str) for p in raw):
                raise ConfigError(f"{where}.presets: expected a list of preset names, got {short_repr(raw)}")
            for p in raw:
                if p not in PRESETS:
                    raise ConfigError(
                        f"{where}.presets: {short_repr(p)} is not a preset; use any of {', '.join(PRESETS)}"
                    )
            presets = tuple(dict.fromkeys(raw))
        rules = None
        if "rules" in data:
            raw = data["rules"]
            if not isinstance(raw, dict) or not raw:
                raise ConfigError(
                    f"{where}.rules: expected a mapping of rule keys to allowed values, got {short_repr(raw)}"
                )
            rules = {}
            for key, values in raw.items():
                if key not in KEYS:
                    raise ConfigError(
                        f"{where}.rules: {short_repr(key)} is not a rule key; the keys are {', '.join(KEYS)}"
                    )
                values = values if isinstance(values, list) else [values]
                for v in values:
                    try:
                        KEYS[key].check(v)
                    except ArenaError as exc:  # KeySpec.check raises RulesError
                        raise ConfigError(f"{where}.rules.{key}: {exc}") from None
                rules[key] = frozenset(values)
        return cls(players=players, dice=dice, presets=presets, rules=rules)

    @property
    def restricted(self) -> bool:
        """It rules some table out. Declaring that it plays a variant of
        ``OPT_IN_KEYS`` (on or off) widens what it plays, it restricts nothing."""
        if any(v is not None for v in (self.players, self.dice, self.presets)):
            return True
        return any(k not in OPT_IN_KEYS or False not in v for k, v in (self.rules or {}).items())

    def why_not(self, rules: Mapping[str, Any], players: int | None = None) -> str | None:
        """``None`` if a table of ``players`` under ``rules`` (a full rule dict)
        is supported, else the reason in words (naming the declaration's key)."""
        if players is not None and self.players is not None and players not in self.players:
            return f"it plays only {_list(self.players)} players (supports.players), not {players}"
        if self.dice is not None and rules.get("dice") not in self.dice:
            return f"it plays only {_list(self.dice)} starting dice (supports.dice), not {rules.get('dice')}"
        if self.presets is not None:
            if not any(_is_preset(rules, p) for p in self.presets):
                return f"the rules are none of its presets {', '.join(self.presets)} (supports.presets)"
        for key, allowed in (self.rules or {}).items():
            if rules.get(key, KEYS[key].default) not in allowed:
                return (
                    f"it plays only {key} = {_list(allowed)} (supports.rules.{key}), "
                    f"not {rules.get(key, KEYS[key].default)!r}"
                )
        for key in opt_in(rules):
            if key not in (self.rules or {}):
                return (
                    f"it does not declare that it plays {key}, a variant of protocol 2 (a bot declares "
                    f"it with supports: {{rules: {{{key}: [true, false]}}}})"
                )
        return None

    def to_data(self) -> dict[str, Any]:
        """The declaration as plain data (run.json), the same shape it was given in."""
        out: dict[str, Any] = {}
        if self.players is not None:
            out["players"] = sorted(self.players)
        if self.dice is not None:
            out["dice"] = sorted(self.dice)
        if self.presets is not None:
            out["presets"] = list(self.presets)
        if self.rules is not None:
            out["rules"] = {k: sorted(v, key=repr) for k, v in self.rules.items()}
        return out


def _is_preset(rules: Mapping[str, Any], preset: str) -> bool:
    ref = Rules.preset(preset).to_dict()
    return all(rules.get(k) == v for k, v in ref.items() if k not in ADMIN_KEYS)


def _list(values: frozenset[Any]) -> str:
    return ", ".join(str(v) for v in sorted(values, key=repr))
