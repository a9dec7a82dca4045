"""The built-in bots travel with the package: a built package (what ``pip
install .`` installs) carries the project's ``bots/`` as ``arena/bots/`` and
plays the default league from a folder with no ``bots/`` of its own; a
``bots/`` folder where the user runs always wins."""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena import compiled
from arena.botfile import builtin
from arena.botfile.spec import load_bot
from arena.running.config import load_config
from arena.sandbox import view as fileview

ROOT = Path(__file__).resolve().parent.parent
BOTS = sorted(p.stem for p in (ROOT / "bots").iterdir() if p.suffix in (".py", ".yaml"))


def league(folder: Path) -> Path:
    path = folder / "league.yaml"
    shutil.copy(ROOT / "configs" / "league.yaml", path)
    return path


def test_without_a_bots_folder_the_league_plays_the_built_in_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(league(tmp_path), ())
    assert sorted(e.label for e in config.entrants) == BOTS
    assert {e.spec.path.parent for e in config.entrants} == {builtin.BUILTIN_BOTS}
    # An explicit path under bots/ too, as a name would.
    (tmp_path / "two.yaml").write_text("name: t\nbots: [bots/random.py, cautious]\nplayers: 2\n")
    assert [e.spec.path for e in load_config(tmp_path / "two.yaml", ()).entrants] == [
        builtin.BUILTIN_BOTS / "random.py",
        builtin.BUILTIN_BOTS / "cautious.py",
    ]


def test_a_bots_folder_here_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bots").mkdir()
    for name in ("mine", "random"):  # a bot of the user's own, and one named like a built-in
        shutil.copy(ROOT / "bots" / "random.py", tmp_path / "bots" / f"{name}.py")
    (tmp_path / "bots" / "random.py").write_text((ROOT / "bots" / "random.py").read_text() + "\n# theirs\n")
    (tmp_path / "mine.yaml").write_text("name: t\nbots: [bots/*.py]\nplayers: 2\n")
    config = load_config(tmp_path / "mine.yaml", ())
    assert [e.label for e in config.entrants] == ["mine", "random"]
    assert all(e.spec.path.parent == tmp_path / "bots" for e in config.entrants)
    (tmp_path / "names.yaml").write_text("name: t\nbots: [random, cautious]\nplayers: 2\n")
    paths = [e.spec.path for e in load_config(tmp_path / "names.yaml", ()).entrants]
    assert paths == [tmp_path / "bots" / "random.py", builtin.BUILTIN_BOTS / "cautious.py"]


def test_an_installed_package_looks_in_its_own_copy_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"
    (site / "arena" / "bots").mkdir(parents=True)
    (site / "bots").mkdir()  # another distribution's top-level folder: never the built-in bots
    monkeypatch.setattr(builtin, "_PACKAGE", site / "arena")
    assert builtin.builtin_bots() == site / "arena" / "bots"
    checkout = tmp_path / "checkout"
    (checkout / "arena").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("")
    monkeypatch.setattr(builtin, "_PACKAGE", checkout / "arena")
    assert builtin.builtin_bots() == checkout / "bots"
    monkeypatch.setattr(builtin, "_PACKAGE", site / "other")  # installed with no copy: not site-packages/bots
    assert builtin.builtin_bots() == site / "other" / "bots"


@pytest.mark.slow
def test_a_built_package_plays_the_default_league(tmp_path: Path) -> None:
    # The build as pip runs it (setup.py's build_py: the package's modules,
    # its package data and the bots), from a copy of the project, into a
    # folder that is then the only arena on the path.
    src = tmp_path / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so")
    for name in ("arena", "bots", "tools"):
        shutil.copytree(ROOT / name, src / name, ignore=skip)
    for name in ("setup.py", "pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, src / name)
    lib = tmp_path / "lib"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"ARENA_PURE_PYTHON": "1"}
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        cwd=src,
        env=env,
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in (lib / "arena" / "serve" / "static").iterdir())  # package data came along
    play = tmp_path / "play"
    play.mkdir()
    league(play)
    out = subprocess.run(
        [sys.executable, "-m", "arena", "run", "league.yaml", "--matches", "6", "--workers", "2", "--seed", "1"],
        cwd=play,
        env=env | {"PYTHONPATH": str(lib)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "6 matches played" in out.stdout + out.stderr
    bots = json.loads((play / "results" / "league" / "run.json").read_text())["bots"]
    assert sorted(b["name"] for b in bots) == BOTS
    for b in bots:  # the shipped copy, byte for byte the project's bot
        assert Path(b["path"]).parent == lib / "arena" / "bots"
        assert b["sha256"] == load_bot(ROOT / "bots" / Path(b["path"]).name).sha256


def test_an_installed_package_runs_its_compiled_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pip writes a wheel's files in any order: a source a moment after its
    # compiled module. Only a checkout's source is edited after its build.
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in (*compiled.MODULES, compiled.GROUP + "__mypyc"):
        stem = tmp_path.joinpath(*name.split("."))
        stem.parent.mkdir(parents=True, exist_ok=True)
        Path(str(stem) + suffix).write_bytes(b"")
        source = Path(str(stem) + ".py")
        source.write_text("")
        os.utime(source, (2e9, 2e9))  # newer than its compiled module
    monkeypatch.delenv("ARENA_PURE_PYTHON", raising=False)
    monkeypatch.setattr(compiled, "_ROOT", str(tmp_path))
    assert compiled._why_pure() is None  # installed: the compiled modules run
    (tmp_path / "pyproject.toml").write_text("")
    assert "arena/engine/dice.py changed after it was compiled" in str(compiled._why_pure())


@pytest.mark.skipif(fileview.unavailable() is not None, reason=f"no view: {fileview.unavailable()}")
def test_the_python_view_binds_a_package_installed_in_site_packages(tmp_path: Path) -> None:
    # Installed with pip install ., the arena package lies inside a
    # site-packages folder, which the Python view binds read-only (with the
    # host's packages only): it must hold the package's folder as the mount
    # point for the package's own view, and serve the package from that view.
    # (Before, bwrap failed every Python bot: "Can't mkdir .../site-packages/arena".)
    interpreter = tmp_path / "python" / "bin" / "python3"
    interpreter.parent.mkdir(parents=True)
    interpreter.write_text("")
    site = tmp_path / "site-packages"
    package = site / "arena"
    shutil.copytree(ROOT / "arena", package, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    (site / "numpy").mkdir()
    (site / "numpy" / "__init__.py").write_text("")
    view = fileview.python_view((str(interpreter),), str(package), (str(site),))
    system, own = view.roots
    assert os.path.isdir(system + str(package)) and not os.listdir(system + str(package))  # a bare mount point
    assert view.source(str(site)) == system + str(site)
    assert view.source(str(site / "numpy" / "__init__.py")) == system + str(site / "numpy" / "__init__.py")
    assert view.source(str(package)) == own + str(package)
    assert view.source(str(package / "errors.py")) == own + str(package / "errors.py")
