"""Bot files: Python bots and program manifests, resolved and hashed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.botfile import load_bot
from arena.errors import ConfigError


def test_python_bot(tmp_path: Path) -> None:
    f = tmp_path / "mybot.py"
    f.write_text("def act(turn): return 'dudo'\n")
    spec = load_bot(f)
    assert (spec.name, spec.kind, spec.path, spec.command, spec.folder) == ("mybot", "python", f, (), tmp_path)
    assert len(spec.sha256) == 64
    assert spec.files() == (f,)


def test_manifest_resolves_relative_and_path_programs(tmp_path: Path) -> None:
    (tmp_path / "mybot.js").write_text("// js\n")
    (tmp_path / "mybot").mkdir()
    (tmp_path / "mybot" / "x.js").write_text("// lib\n")
    (tmp_path / "other.py").write_text("# another bot\n")
    (tmp_path / "lib").mkdir()
    m = tmp_path / "mybot.yaml"
    m.write_text("command: [sh, ./mybot.js, ./mybot/x.js, --fast]\nversion: 1.2\nenv: {MODE: hard, N: 3}\n")
    spec = load_bot(m)
    assert spec.kind == "program" and spec.name == "mybot"
    assert spec.command[0] == os.path.abspath(__import__("shutil").which("sh"))
    assert spec.command[1:] == (str(tmp_path / "mybot.js"), str(tmp_path / "mybot" / "x.js"), "--fast")
    assert spec.version == "1.2" and spec.env == {"MODE": "hard", "N": "3"}
    # The sandbox shows the bot's own files and its folder, nothing else next to them.
    assert set(spec.files()) == {m, tmp_path / "mybot.js", tmp_path / "mybot"}


def test_hash_follows_the_program_file(tmp_path: Path) -> None:
    js = tmp_path / "mybot.js"
    js.write_text("// v1\n")
    m = tmp_path / "mybot.yaml"
    m.write_text("command: [sh, ./mybot.js]\n")
    before = load_bot(m).sha256
    js.write_text("// v2\n")
    assert load_bot(m).sha256 != before


def test_executable_relative_program(tmp_path: Path) -> None:
    prog = tmp_path / "b.sh"
    prog.write_text("#!/bin/sh\n")
    (tmp_path / "b.yaml").write_text("command: [./b.sh]\n")
    with pytest.raises(ConfigError, match="not executable"):
        load_bot(tmp_path / "b.yaml")
    prog.chmod(0o755)
    assert load_bot(tmp_path / "b.yaml").command == (str(prog),)


@pytest.mark.parametrize("text, what", [
    ("command: [no-such-program-xyz]\n", "not found on PATH"),
    ("command: [./missing.sh]\n", "not found"),
    ("command: []\n", "non-empty list"),
    ("command: node bot.js\n", "non-empty list"),
    ("command: [sh]\ncolour: red\n", "unknown key"),
    ("command: [sh]\nenv: [A]\n", "`env` must map"),
    ("- just a list\n", "must be a mapping"),
    ("command: [sh\n", "not valid YAML"),
    ("command: [bin/sh]\n", "bare name"),
])
def test_manifest_errors_name_the_file_and_the_fix(tmp_path: Path, text: str, what: str) -> None:
    m = tmp_path / "bad.yaml"
    m.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_bot(m)
    assert what in str(err.value) and str(m) in str(err.value)


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_bot(tmp_path / "nope.py")
    (tmp_path / "bot.txt").write_text("")
    with pytest.raises(ConfigError, match="expected .py"):
        load_bot(tmp_path / "bot.txt")
    (tmp_path / "my-bot.py").write_text("")
    with pytest.raises(ConfigError, match="letters, digits"):
        load_bot(tmp_path / "my-bot.py")
    with pytest.raises(ConfigError, match="not a file"):
        load_bot(tmp_path)
