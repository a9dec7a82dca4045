"""Run configs: YAML in, a validated, frozen :class:`RunConfig` out.

Every mistake becomes one :class:`ConfigError` line naming the file, the key,
the value and what is allowed. Relative paths (bots, globs, ``out``) are
resolved against the current directory, the way ``arena run configs/x.yaml``
is typed from a project's root; bot names without a path (``random``) are
looked up in ``./bots`` and then in the built-in bots shipped with Dudo Arena.
"""

from __future__ import annotations

import dataclasses
import glob as globmod
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from arena.botfile.builtin import BUILTIN_BOTS
from arena.botfile.spec import BotSpec, load_bot
from arena.engine.rules import KEYS, PRESETS, Rules
from arena.errors import ArenaError, ConfigError, RulesError
from arena.match.process import TimeControl
from arena.running import backends
from arena.running.schedule import seat_plan
from arena.running.sprt import SprtParams
from arena.sandbox import SandboxLimits

FORMATS = ("league", "round-robin", "gauntlet", "sprt")
SEATINGS = ("roll", "rotate")
BACKENDS = backends.names()  # the modules of arena/running/backends/
TOP_KEYS = (
    "name",
    "seed",
    "bots",
    "players",
    "matches",
    "format",
    "gauntlet",
    "seating",
    "variants",
    "time",
    "sandbox",
    "workers",
    "backend",
    "address",
    "out",
    "fresh_process",
    "compress",
    "sprt",
)


@dataclass(frozen=True)
class Entrant:
    """One entrant of the run: a bot file under a unique label."""

    label: str
    spec: BotSpec


@dataclass(frozen=True)
class RunConfig:
    """A validated run config (see docs/config.md)."""

    path: Path
    name: str
    seed: int | None
    entrants: tuple[Entrant, ...]
    players: tuple[int, ...]
    matches: int
    format: str
    gauntlet: str | None
    seating: str
    variants: Mapping[str, Mapping[str, Any]]  # name -> every rule key
    time: TimeControl
    sandbox: SandboxLimits
    workers: int
    backend: str
    address: str | None
    out: Path
    fresh_process: bool
    compress: bool
    raw: Mapping[str, Any] = field(repr=False, default_factory=dict)
    sprt: SprtParams | None = None  # format sprt: what is tested (arena.running.sprt)

    def fingerprint(self) -> dict[str, Any]:
        """What must match for a run folder to be resumed with this config."""
        return {
            "seed": self.seed,
            "players": list(self.players),
            "matches": self.matches,
            "format": self.format,
            "gauntlet": self.gauntlet,
            "seating": self.seating,
            "variants": {k: dict(v) for k, v in self.variants.items()},
            "bots": [[e.label, e.spec.sha256] for e in self.entrants],
            **({"sprt": self.sprt.to_data()} if self.sprt is not None else {}),
        }


class ConfigKeyError(ConfigError):
    """A config error at one key: :func:`load_config` names the ``--set`` flag
    instead of the file when the value came from the command line."""

    def __init__(self, path: Path | str, key: str, detail: str) -> None:
        super().__init__(f"{path}: {key}: {detail}")
        self.key = key
        self.detail = detail


def _fail(path: Path, key: str, message: str) -> ConfigError:
    return ConfigKeyError(path, key, message)


def did_you_mean(word: object, choices: Sequence[str]) -> str:
    """`` (did you mean X?)`` for the closest of ``choices`` to a misspelt ``word``, else ``""``."""
    import difflib

    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def shown(value: Any) -> str:
    """A config value as the user wrote it in YAML, for a message: no Python
    reprs (``None`` is an empty value, ``True`` is true)."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _yaml_value(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def apply_sets(data: dict[str, Any], sets: Sequence[str], path: Path) -> dict[str, Any]:
    """Apply ``--set key=value`` overrides; dotted keys reach into maps
    (``time.budget_ms=500``, ``variants.classic.dice=3``)."""
    out = dict(data)
    for item in sets:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--set {item!r}: write KEY=VALUE, e.g. --set matches=100")
        parts = key.strip().split(".")
        if parts[0] not in TOP_KEYS:
            raise ConfigError(
                f"--set {item!r}: {parts[0]!r} is not a config key{did_you_mean(parts[0], TOP_KEYS)}; "
                f"the keys are {', '.join(TOP_KEYS)}"
            )
        node = out
        for p in parts[:-1]:
            child = node.get(p)
            child = dict(child) if isinstance(child, dict) else {}
            node[p] = child
            node = child
        node[parts[-1]] = _yaml_value(value)
    return out


def read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ConfigError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: a config is a mapping of keys (name, bots, matches, ...), not {type(data).__name__}"
        )
    return data


def load_config(path: str | Path, sets: Sequence[str] = (), **flags: Any) -> RunConfig:
    """Read, override (``--set``, then the explicit flags) and validate a config.

    A mistake in a value given on the command line names the flag it came
    from (``--set 'matches=-5': matches: ...``), not the file, which does not
    hold it."""
    p = Path(path)
    data = apply_sets(read_yaml(p), sets, p)
    origins = {item.partition("=")[0].strip().split(".")[0]: f"--set {item!r}" for item in sets}
    for key, value in flags.items():
        if value is not None:
            data[key] = value
            origins[key] = f"--{key.replace('_', '-')} {value}"
    try:
        return build_config(data, p)
    except ConfigKeyError as exc:
        origin = origins.get(exc.key.split(".")[0])
        if origin is None:
            raise
        raise ConfigKeyError(origin, exc.key, exc.detail) from None


def _int(path: Path, key: str, value: Any, low: int, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        allowed = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
        raise _fail(path, key, f"{shown(value)} is not allowed; use {allowed}")
    return value


def _choice(path: Path, key: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise _fail(
            path, key, f"{shown(value)} is not allowed{did_you_mean(value, choices)}; use one of {', '.join(choices)}"
        )
    return str(value)


def _bool(path: Path, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, key, f"{shown(value)} is not allowed; use true or false")
    return value


def _dataclass_from(path: Path, key: str, cls: type, data: Any) -> Any:
    if data is None:
        return cls()
    if not isinstance(data, dict):
        raise _fail(path, key, f"expected a mapping of {', '.join(f.name for f in dataclasses.fields(cls))}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    for k, v in data.items():
        if k not in names:
            raise _fail(
                path, f"{key}.{k}", f"unknown key{did_you_mean(k, list(names))}; the keys are {', '.join(names)}"
            )
        default = names[k].default
        if isinstance(default, bool) and not isinstance(v, bool):
            raise _fail(path, f"{key}.{k}", f"{shown(v)} is not allowed; use true or false")
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise _fail(path, f"{key}.{k}", f"{shown(v)} is not allowed; use a positive number")
            if isinstance(default, int) and not isinstance(v, int):
                raise _fail(path, f"{key}.{k}", f"{shown(v)} is not allowed; use a positive integer")
    try:
        return cls(**data)
    except (TypeError, ValueError, ArenaError) as exc:
        raise _fail(path, key, str(exc)) from None


def resolve_variants(path: Path, data: Any) -> dict[str, dict[str, Any]]:
    """``variants`` -> name -> the full rule set; default: one variant, classic."""
    if data is None:
        return {"classic": Rules.preset("classic").to_dict()}
    if not isinstance(data, dict) or not data:
        raise _fail(path, "variants", "expected a mapping of variant names to {preset: NAME, key: value, ...}")
    out: dict[str, dict[str, Any]] = {}
    for name, body in data.items():
        key = f"variants.{name}"
        if not isinstance(name, str) or not name or any(c in name for c in "/\\\n"):
            raise _fail(path, "variants", f"{shown(name)} is not a usable variant name")
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise _fail(path, key, "expected a mapping such as {preset: classic, dice: 3}")
        body = dict(body)
        preset = body.pop("preset", "classic")
        if preset not in PRESETS:
            raise _fail(
                path,
                f"{key}.preset",
                f"{shown(preset)} is not a preset{did_you_mean(preset, list(PRESETS))}; "
                f"use one of {', '.join(PRESETS)}",
            )
        for k in body:
            if k not in KEYS:
                raise _fail(
                    path,
                    f"{key}.{k}",
                    f"unknown rule key{did_you_mean(k, list(KEYS))}; the keys are preset, {', '.join(KEYS)}",
                )
        try:
            out[name] = Rules.preset(preset, body).to_dict()
        except RulesError as exc:
            raise _fail(path, key, str(exc)) from None
    return out


def _bot_path(p: Path) -> Path:
    """A bot file's absolute path in its real folder; the file itself is not
    resolved, so a bot file that is a symlink is seen (and refused) as one."""
    return p.absolute().parent.resolve() / p.name


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _in_bots(item: str) -> str:
    """``bots/...`` as the built-in bots where the current folder has no
    ``bots/`` of its own (an installed package run outside a checkout), so
    that the default league's ``bots/*.py`` plays the built-in bots there; a
    ``bots/`` folder here always wins, and in a checkout it is the built-in
    bots' folder itself."""
    parts = Path(item).parts
    if len(parts) > 1 and parts[0] == "bots" and not os.path.lexists("bots"):
        return str(BUILTIN_BOTS.joinpath(*parts[1:]))
    return item


def resolve_bots(path: Path, data: Any) -> tuple[Entrant, ...]:
    """Expand ``bots``: paths, globs, built-in names; a bot listed twice is two entrants."""

    if not isinstance(data, list) or not data:
        raise _fail(path, "bots", "expected a list of bot files, globs (bots/*.py) or built-in bot names")
    files: list[Path] = []
    globbed: set[Path] = set()
    for item in data:
        if not isinstance(item, str) or not item.strip():
            raise _fail(path, "bots", f"{shown(item)} is not a bot file, glob or name")
        item = item.strip()
        if _is_glob(item):
            hits = sorted(
                _bot_path(Path(h))
                for h in globmod.glob(_in_bots(os.path.expanduser(item)))
                if Path(h).suffix in (".py", ".yaml", ".yml") and not Path(h).name.startswith("_")
            )
            if not hits:
                raise _fail(path, "bots", f"{item!r} matches no .py or .yaml bot file (from {Path.cwd()})")
            for h in hits:
                if h not in globbed and h not in files:
                    files.append(h)
                    globbed.add(h)
            continue
        candidate = Path(_in_bots(os.path.expanduser(item)))
        if "/" in item or candidate.suffix:
            if not candidate.is_file():
                raise _fail(path, "bots", f"{item!r}: no such bot file (from {Path.cwd()})")
            files.append(_bot_path(candidate))
            continue
        found = None
        for folder in (Path("bots"), BUILTIN_BOTS):
            for suffix in (".py", ".yaml", ".yml"):
                if (folder / f"{item}{suffix}").is_file():
                    found = _bot_path(folder / f"{item}{suffix}")
                    break
            if found:
                break
        if found is None:
            known = sorted(
                {
                    f.stem
                    for folder in (Path("bots"), BUILTIN_BOTS)
                    if folder.is_dir()
                    for f in folder.iterdir()
                    if f.suffix in (".py", ".yaml", ".yml") and not f.name.startswith("_")
                }
            )
            raise _fail(
                path,
                "bots",
                f"{item!r} is neither a file nor a bot in ./bots or the built-in bots{did_you_mean(item, known)}",
            )
        files.append(found)
    specs = []
    for f in files:
        try:
            specs.append(load_bot(f))
        except ConfigError as exc:
            raise _fail(path, "bots", str(exc)) from None
    labels = unique_labels([spec.name for spec in specs])
    return tuple(Entrant(label, spec) for label, spec in zip(labels, specs))


def unique_labels(names: Sequence[str], taken: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Distinct entrant labels: a bot listed twice plays as ``name#2`` (and so on),
    never taking a name in ``taken``."""
    out: list[str] = []
    seen = set(taken)
    for name in names:
        label, k = name, 1
        while label in seen:
            k += 1
            label = f"{name}#{k}"
        seen.add(label)
        out.append(label)
    return out


def build_config(data: Mapping[str, Any], path: Path) -> RunConfig:

    for key in data:
        if key not in TOP_KEYS:
            raise _fail(path, str(key), f"unknown key{did_you_mean(key, TOP_KEYS)}; the keys are {', '.join(TOP_KEYS)}")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip() or any(c in name for c in "/\\"):
        raise _fail(path, "name", f"{shown(name)} is not allowed; use a short name without slashes")
    seed = data.get("seed")
    if seed is not None:
        seed = _int(path, "seed", seed, 0)
    players_raw = data.get("players", 4)
    players_list = players_raw if isinstance(players_raw, list) else [players_raw]
    if not players_list:
        raise _fail(path, "players", "expected a table size from 2 to 10, or a list of them")
    players = tuple(_int(path, "players", p, 2, 10) for p in players_list)
    matches = _int(path, "matches", data.get("matches", 100), 1)
    fmt = _choice(path, "format", data.get("format", "league"), FORMATS)
    seating = _choice(path, "seating", data.get("seating", "roll"), SEATINGS)
    variants = resolve_variants(path, data.get("variants"))
    time = _dataclass_from(path, "time", TimeControl, data.get("time"))
    sandbox = _dataclass_from(path, "sandbox", SandboxLimits, data.get("sandbox"))
    workers = _int(path, "workers", data.get("workers", os.cpu_count() or 1), 1, 1024)
    backend = _choice(path, "backend", data.get("backend", "local"), BACKENDS)
    address = data.get("address")
    if address is not None and not isinstance(address, str):
        raise _fail(path, "address", f"{shown(address)} is not allowed; use auto or HOST:PORT")
    out = data.get("out", f"results/{name}")
    if not isinstance(out, str) or not out.strip():
        raise _fail(path, "out", f"{shown(out)} is not allowed; use a folder path")
    fresh = _bool(path, "fresh_process", data.get("fresh_process", False))
    compress = _bool(path, "compress", data.get("compress", False))
    entrants = resolve_bots(path, data.get("bots"))
    out_real = os.path.realpath(out)
    for e in entrants:  # a raise above the run's ceiling stops the run here, before any match
        sandbox.for_bot(e.spec.limits, f"{path}: bots: {e.label} ({e.spec.path})")
        for own in e.spec.files():
            if own.is_dir() and (out_real == str(own) or out_real.startswith(str(own) + os.sep)):
                raise _fail(
                    path,
                    "out",
                    f"{out!r} is inside the data folder of bot {e.label} ({own}), which "
                    f"the bot sees: its run.json holds the seed of every die; put the run elsewhere",
                )
    if len(entrants) < 2:
        raise _fail(path, "bots", f"a run needs at least 2 entrants, found {len(entrants)}")
    gauntlet = data.get("gauntlet")
    if fmt == "gauntlet":
        labels = [e.label for e in entrants]
        if gauntlet is None:
            raise _fail(
                path,
                "gauntlet",
                f"format gauntlet needs the bot that plays every table: add "
                f"`gauntlet: BOT`, one of {', '.join(labels)}",
            )
        if gauntlet not in labels:
            raise _fail(
                path,
                "gauntlet",
                f"{shown(gauntlet)} is not an entrant{did_you_mean(gauntlet, labels)}; name one of {', '.join(labels)}",
            )
    elif gauntlet is not None:
        raise _fail(path, "gauntlet", "only used with format: gauntlet")
    for size in players:
        if size > len(entrants):
            raise _fail(
                path,
                "players",
                f"a table of {size} needs at least {size} entrants, there are "
                f"{len(entrants)} (list a bot twice to play it as two entrants)",
            )
    sprt = None
    if fmt == "sprt":
        if len(players) != 1 or len(variants) != 1:
            raise _fail(
                path, "players" if len(players) != 1 else "variants", "format sprt plays one table size and one variant"
            )
        sprt = SprtParams.from_data(data.get("sprt"), [e.label for e in entrants], str(path))
        if players[0] > 2 and len(entrants) - 2 < players[0] - 1:
            raise _fail(
                path,
                "bots",
                f"a table of {players[0]} needs {players[0] - 1} opponents besides "
                f"{sprt.a} and {sprt.b}, there are {len(entrants) - 2}",
            )
    elif data.get("sprt") is not None:
        raise _fail(path, "sprt", "only used with format: sprt")
    # What the bots declare they can play (arena.botfile.supports), checked before any match.
    try:
        seat_plan(
            [e.label for e in entrants],
            [e.spec.supports for e in entrants],
            players,
            variants,
            "league" if fmt == "sprt" else fmt,
            [e.label for e in entrants].index(gauntlet) if isinstance(gauntlet, str) else None,
        )
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return RunConfig(
        path=path,
        name=name.strip(),
        seed=seed,
        entrants=entrants,
        players=players,
        matches=matches,
        format=fmt,
        gauntlet=gauntlet,
        seating=seating,
        variants=variants,
        time=time,
        sandbox=sandbox,
        workers=workers,
        backend=backend,
        address=address,
        out=Path(out),
        fresh_process=fresh,
        compress=compress,
        raw=dict(data),
        sprt=sprt,
    )
