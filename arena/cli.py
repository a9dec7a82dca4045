"""The ``arena`` command: thin wrappers that parse input, call one library
function and print. The only module that imports click; nothing imports it.

Each command lives in its own section; an :class:`ArenaError` becomes one
clear line on stderr and exit status 2 (click's usage-error convention).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, TypeVar

import click

from arena import __version__
from arena.errors import ArenaError

F = TypeVar("F", bound=Callable[..., Any])


def _friendly(fn: F) -> F:
    """Turn an ArenaError into a one-line message instead of a traceback."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArenaError as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
def main() -> None:
    """Dudo Arena: sandboxed, seeded, parallel tournaments for Dudo bots."""


# --- arena rules -----------------------------------------------------------


@main.command("rules")
@click.argument("preset", required=False)
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a rule key.")
@_friendly
def rules_cmd(preset: str | None, sets: tuple[str, ...]) -> None:
    """List the rule keys and presets, or print PRESET's resolved rule set."""
    from arena.rules import KEYS, PRESET_MEANINGS, Rules, parse_value

    if preset is None:
        if sets:
            raise ArenaError("--set needs a PRESET to apply to, e.g. `arena rules classic --set dice=3`")
        click.echo("Rule keys (default, allowed values, meaning):")
        for spec in KEYS.values():
            default = str(spec.default).lower() if isinstance(spec.default, bool) else spec.default
            click.echo(f"  {spec.name:<21} {str(default):<8} {spec.allowed():<28} {spec.meaning}")
        click.echo("\nPresets:")
        for name, meaning in PRESET_MEANINGS.items():
            click.echo(f"  {name:<10} {meaning}")
        click.echo("\nShow one: arena rules PRESET [--set key=value ...]")
        return
    overrides: dict[str, Any] = {}
    for item in sets:
        key, eq, value = item.partition("=")
        if not eq:
            raise ArenaError(f"--set {item!r}: write KEY=VALUE, e.g. --set dice=3")
        overrides[key.strip()] = parse_value(key.strip(), value)
    rules = Rules.preset(preset, overrides)
    for key, value in rules.to_dict().items():
        shown = str(value).lower() if isinstance(value, bool) else value
        click.echo(f"{key}: {shown}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
