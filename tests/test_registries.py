"""Each extension point reads one registry: the backends are the modules of
``arena/running/backends/``, and the config's ``backend`` key, ``arena run
--backend`` and the runner all name the same ones."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest

from arena.apps.cli import main
from arena.errors import ConfigError, RunError
from arena.running import backends
from arena.running.config import load_config

CONFIG = "name: c\nbots: [random, cautious]\nplayers: 2\nmatches: 2\nvariants:\n  classic: {preset: classic}\n"


def test_the_backends_are_the_modules_of_their_package() -> None:
    folder = Path(backends.__file__).parent
    modules = sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_"))
    assert backends.names() == tuple(modules)
    assert "local" in modules
    for name in backends.names():
        assert callable(backends.load(name).make), f"backend {name} has no make(config)"


def test_config_cli_and_runner_offer_the_same_backends(tmp_path: Path) -> None:
    run = main.commands["run"]
    option = next(p for p in run.params if p.name == "backend")
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == backends.names()
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG + "backend: lokal\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, ())
    assert str(info.value) == (
        f"{path}: backend: 'lokal' is not allowed (did you mean local?); use one of {', '.join(backends.names())}"
    )


def test_an_unknown_backend_is_one_clear_error() -> None:
    with pytest.raises(RunError, match="no backend 'nope'; use one of local"):
        backends.load("nope")


def test_ray_missing_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner's old check wrapped only the import of the backend's module,
    # which does not import Ray: a missing Ray surfaced as a bare ModuleNotFoundError.
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG + "backend: ray\n")
    config = load_config(path, ())
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(RunError, match=r"backend ray needs Ray: pip install '\.\[ray\]'"):
        backends.make(config)
