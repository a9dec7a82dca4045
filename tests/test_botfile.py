"""Bot files: Python bots and program manifests, resolved and hashed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.botfile.spec import load_bot
from arena.errors import ConfigError


def test_python_bot(tmp_path: Path) -> None:
    f = tmp_path / "mybot.py"
    f.write_text("def act(turn): return 'dudo'\n")
    spec = load_bot(f)
    assert (spec.name, spec.kind, spec.path, spec.command, spec.folder) == ("mybot", "python", f, (), tmp_path)
    assert len(spec.sha256) == 64
    assert spec.files() == (f,)


def test_manifest_resolves_relative_and_path_programs(tmp_path: Path) -> None:
    (tmp_path / "mybot").mkdir()
    (tmp_path / "mybot" / "mybot.js").write_text("// js\n")
    (tmp_path / "mybot" / "x.js").write_text("// lib\n")
    (tmp_path / "other.py").write_text("# another bot\n")
    (tmp_path / "lib").mkdir()
    m = tmp_path / "mybot.yaml"
    m.write_text("command: [sh, ./mybot/mybot.js, ./mybot/x.js, --fast]\nversion: 1.2\nenv: {MODE: hard, N: 3}\n")
    spec = load_bot(m)
    assert spec.kind == "program" and spec.name == "mybot"
    assert spec.command[0] == os.path.abspath(__import__("shutil").which("sh"))
    assert spec.command[1:] == (str(tmp_path / "mybot" / "mybot.js"), str(tmp_path / "mybot" / "x.js"), "--fast")
    assert spec.version == "1.2" and spec.env == {"MODE": "hard", "N": "3"}
    # The sandbox shows the manifest and the bot's folder, nothing else next to them.
    assert set(spec.files()) == {m, tmp_path / "mybot"}


def test_hash_follows_the_program_file(tmp_path: Path) -> None:
    (tmp_path / "mybot").mkdir()
    js = tmp_path / "mybot" / "mybot.js"
    js.write_text("// v1\n")
    m = tmp_path / "mybot.yaml"
    m.write_text("command: [sh, ./mybot/mybot.js]\n")
    before = load_bot(m).sha256
    js.write_text("// v2\n")
    assert load_bot(m).sha256 != before


def test_executable_relative_program(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    prog = tmp_path / "b" / "b.sh"
    prog.write_text("#!/bin/sh\n")
    (tmp_path / "b.yaml").write_text("command: [./b/b.sh]\n")
    with pytest.raises(ConfigError, match="not executable"):
        load_bot(tmp_path / "b.yaml")
    prog.chmod(0o755)
    assert load_bot(tmp_path / "b.yaml").command == (str(prog),)


@pytest.mark.parametrize(
    "text, what",
    [
        ("command: [no-such-program-xyz]\n", "not found on PATH"),
        ("command: [./missing.sh]\n", "not found"),
        ("command: []\n", "non-empty list"),
        ("command: node bot.js\n", "non-empty list"),
        ("command: [sh]\ncolour: red\n", "unknown key"),
        ("command: [sh]\nenv: [A]\n", "`env` must map"),
        ("- just a list\n", "must be a mapping"),
        ("command: [sh\n", "not valid YAML"),
        ("command: [bin/sh]\n", "bare name"),
    ],
)
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


# -- what a bot is on disk: its own files, its data folder, the hash -------------------


def test_a_bot_is_exactly_its_file_and_its_folder(tmp_path: Path) -> None:
    """A config `raiser.yaml` and a log `raiser.out` beside
    `raiser.py` counted as the bot (hashed, shown in its sandbox), so writing
    a log re-entered the bot in a league. Now nothing beside it counts."""
    (tmp_path / "mybot.yaml").write_text("command: [./mybot/mybot]\n")
    (tmp_path / "mybot").mkdir()
    (tmp_path / "mybot" / "mybot").write_text("#!/bin/sh\n")
    (tmp_path / "mybot" / "mybot").chmod(0o755)
    (tmp_path / "mybot.dat").write_text("table")
    (tmp_path / "mybot.out").write_text("a log")
    (tmp_path / "mybot_v2.py").write_text("# another bot\n")
    (tmp_path / "mybot.d").mkdir()  # a folder is the bot's only under its exact name
    (tmp_path / "other.yaml").write_text("command: [sh]\n")
    spec = load_bot(tmp_path / "mybot.yaml")
    assert set(spec.files()) == {tmp_path / "mybot.yaml", tmp_path / "mybot"}
    assert spec.command == (str(tmp_path / "mybot" / "mybot"),)
    before = spec.sha256
    (tmp_path / "mybot.out").write_text("more of the log")
    (tmp_path / "mybot.yml").write_text("command: [sh]\n")  # another bot file of the same name: not this one
    assert load_bot(tmp_path / "mybot.yaml").sha256 == before
    (tmp_path / "raiser.py").write_text("def act(turn): return 'dudo'\n")
    (tmp_path / "raiser.yaml").write_text("a: config of the author's\n")
    raiser = load_bot(tmp_path / "raiser.py")
    assert raiser.files() == (tmp_path / "raiser.py",) and list(raiser.digests) == ["raiser.py"]
    (tmp_path / "raiser.yaml").write_text("a: another config\n")
    assert load_bot(tmp_path / "raiser.py").sha256 == raiser.sha256


@pytest.mark.parametrize("command", ["[sh, ./mybot.js]", "[./mybot.js]"])
def test_a_file_beside_the_manifest_is_refused_saying_where_to_move_it(tmp_path: Path, command: str) -> None:
    """The earlier layout (`mybot.yaml` running `./mybot.js` beside it)
    gets one error that says what to do."""
    (tmp_path / "mybot.js").write_text("// js\n")
    (tmp_path / "mybot.js").chmod(0o755)
    (tmp_path / "mybot.yaml").write_text(f"command: {command}\n")
    with pytest.raises(ConfigError) as err:
        load_bot(tmp_path / "mybot.yaml")
    assert f"move it to {tmp_path}/mybot/mybot.js and name it ./mybot/mybot.js in the command" in str(err.value)
    assert str(tmp_path / "mybot.yaml") in str(err.value)


def test_changed_files_are_named(tmp_path: Path) -> None:
    from arena.botfile.spec import changed_files

    (tmp_path / "b.py").write_text("def act(turn): return 'dudo'\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "weights.txt").write_text("1")
    (tmp_path / "b" / "old.txt").write_text("1")
    before = load_bot(tmp_path / "b.py").digests
    (tmp_path / "b" / "weights.txt").write_text("2")
    (tmp_path / "b" / "old.txt").unlink()
    (tmp_path / "b" / "new.txt").write_text("1")
    after = load_bot(tmp_path / "b.py").digests
    assert changed_files(before, after) == "b/weights.txt (changed), b/new.txt (new), b/old.txt (removed)"
    assert changed_files(before, before).startswith("no file differs")


def test_the_hash_covers_the_data_folder_and_links_as_link_text(tmp_path: Path) -> None:
    bot = tmp_path / "b.py"
    bot.write_text("def act(turn): return 'dudo'\n")
    data = tmp_path / "b"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "table.bin").write_bytes(b"\x00\x01")
    outside = tmp_path / "outside.txt"
    outside.write_text("one")
    (data / "link").symlink_to(outside)
    first = load_bot(bot).sha256
    outside.write_text("two")  # the link's target is not the bot: never followed
    assert load_bot(bot).sha256 == first
    (data / "link").unlink()
    (data / "link").symlink_to(tmp_path / "elsewhere.txt")  # a different link is a different bot
    second = load_bot(bot).sha256
    assert second != first
    (data / "sub" / "table.bin").write_bytes(b"\x00\x02")
    third = load_bot(bot).sha256
    assert third != second
    (data / "sub" / "table.bin").chmod(0o755)
    assert load_bot(bot).sha256 != third
    (data / "sub" / "new").mkdir()
    assert load_bot(bot).sha256 != third
    os.mkfifo(data / "pipe")  # reading it would hang the loader
    with pytest.raises(ConfigError, match="fifo"):
        load_bot(bot)


def test_a_changed_data_folder_is_a_different_bot_for_resume(tmp_path: Path) -> None:
    from arena.running.config import build_config

    (tmp_path / "b.py").write_text("def act(turn): return 'dudo'\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "weights.txt").write_text("1")
    data = {"bots": [str(tmp_path / "b.py"), "random"], "players": 2, "out": str(tmp_path / "r")}
    before = build_config(data, tmp_path / "c.yaml").fingerprint()
    (tmp_path / "b" / "weights.txt").write_text("2")
    assert build_config(data, tmp_path / "c.yaml").fingerprint() != before


def test_command_arguments_are_passed_never_bound(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "a.sh").write_text("#!/bin/sh\n")
    (tmp_path / "a" / "book.txt").write_text("")
    (tmp_path / "a.yaml").write_text("command: [sh, ./a/a.sh, ./a/book.txt, /usr/share/dict, --depth=./x]\n")
    spec = load_bot(tmp_path / "a.yaml")
    assert spec.command[1:] == (
        str(tmp_path / "a" / "a.sh"),
        str(tmp_path / "a" / "book.txt"),
        "/usr/share/dict",
        "--depth=./x",
    )
    assert spec.runtime == ()  # sh is the system's: nothing to add


@pytest.mark.skipif(__import__("shutil").which("java") is None, reason="no java")
def test_the_jvm_brings_the_configuration_its_links_lead_to_not_all_of_etc(tmp_path: Path) -> None:
    (tmp_path / "j.yaml").write_text("command: [java, -version]\n")
    spec = load_bot(tmp_path / "j.yaml")
    home = os.path.dirname(os.path.dirname(os.path.realpath(__import__("shutil").which("java"))))
    expected = {
        os.path.join("/etc", os.path.relpath(os.path.realpath(os.path.join(d, n)), "/etc").split("/")[0])
        for d, ds, fs in os.walk(home)
        for n in ds + fs
        if os.path.islink(os.path.join(d, n)) and os.path.realpath(os.path.join(d, n)).startswith("/etc/")
    }
    assert "/etc" not in spec.runtime
    assert expected <= set(spec.runtime) | {"/etc/ssl"}


# -- limits a bot may raise -------------------------------------------------------------


def test_limits_a_bot_asks_for(tmp_path: Path) -> None:
    from arena.sandbox import SandboxLimits

    (tmp_path / "j.yaml").write_text("command: [sh, -c, 'exit 0']\nlimits: {processes: 64, memory_mb: 1024}\n")
    assert load_bot(tmp_path / "j.yaml").limits == {"processes": 64, "memory_mb": 1024}
    (tmp_path / "p.py").write_text("LIMITS = {'open_files': 256}\ndef act(turn): return 'dudo'\n")
    assert load_bot(tmp_path / "p.py").limits == {"open_files": 256}
    base = SandboxLimits()
    mine = base.for_bot({"processes": 64, "memory_mb": 1024})
    assert (mine.processes, mine.memory_mb, mine.open_files) == (64, 1024, base.open_files)
    assert base.for_bot({"processes": 4}).processes == base.processes  # asking for less is not a raise
    with pytest.raises(ConfigError, match=r"bot j: limits.processes = 300 .* sandbox.max_processes = 256"):
        base.for_bot({"processes": 300}, "bot j")
    assert SandboxLimits(max_processes=512).for_bot({"processes": 300}).processes == 300


@pytest.mark.parametrize(
    "text, what",
    [
        ("limits: {threads: 64}\n", "'threads' cannot be raised"),
        ("limits: {processes: many}\n", "limits.processes: 'many' is not a positive integer"),
        ("limits: [64]\n", "expected a mapping"),
    ],
)
def test_bad_limits_are_refused_naming_the_key(tmp_path: Path, text: str, what: str) -> None:
    (tmp_path / "j.yaml").write_text("command: [sh]\n" + text)
    with pytest.raises(ConfigError) as err:
        load_bot(tmp_path / "j.yaml")
    assert what in str(err.value) and "j.yaml" in str(err.value)


def test_a_run_refuses_a_raise_above_its_ceiling(tmp_path: Path) -> None:
    from arena.running.config import build_config

    (tmp_path / "j.yaml").write_text("command: [sh]\nlimits: {memory_mb: 4096}\n")
    data = {"bots": [str(tmp_path / "j.yaml"), "random"], "players": 2}
    with pytest.raises(ConfigError) as err:
        build_config(data, tmp_path / "c.yaml")
    assert "c.yaml: bots: j" in str(err.value) and "limits.memory_mb = 4096" in str(err.value)
    assert "sandbox.max_memory_mb = 2048" in str(err.value)
    cfg = build_config({**data, "sandbox": {"max_memory_mb": 8192}}, tmp_path / "c.yaml")
    assert cfg.sandbox.for_bot(cfg.entrants[0].spec.limits).memory_mb == 4096
