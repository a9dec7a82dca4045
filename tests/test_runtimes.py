"""Real bots run as their authors wrote them: a Python program in its venv
(activated, under /tmp or elsewhere, or inside the bot's own folder), through
a pyenv shim, a JVM; the Python bot host with the arena in a venv elsewhere.

The venvs are real (``python -m venv``). numpy, a project dependency, is made
importable in each by copying its installed package out of the arena's own
environment into the venv's site-packages: it then lives in that venv and
nowhere else the sandbox shows (a ``.pth`` pointing back at the arena's
environment would not be visible inside, and pip would need the network).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy
import orjson
import pytest
from test_fileview import no_faults

import arena
from arena.botfile.runtime import resolve_program
from arena.botfile.spec import load_bot
from arena.engine.records import MatchRecord
from arena.errors import BotFault
from arena.match.process import BotProcess, TimeControl
from arena.sandbox import SandboxLimits, available

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-m", "arena"]
needs_bwrap = pytest.mark.skipif(available().bwrap is None, reason="bubblewrap is not installed")
JAVAC = shutil.which("javac")
needs_javac = pytest.mark.skipif(
    JAVAC is None or shutil.which("java") is None,
    reason="no JDK (javac and java): .ci/run installs default-jdk-headless",
)

# A program bot without the SDK: the protocol by hand, numpy for its choice
# (it bids the face it holds most of, at the lowest legal quantity).
PYBOT = """\
import json, os, sys
import numpy as np

print("PROBE-PY " + json.dumps({"prefix": sys.prefix, "numpy": np.__file__}), file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready", "name": os.environ.get("ARENA_BOT", "pybot")}), flush=True)
    elif msg["type"] == "turn":
        legal = msg["legal"]
        if legal["dudo"] and msg["history"]:
            print('{"action": "dudo"}', flush=True)
            continue
        held = np.bincount(np.array(msg["dice"], dtype=int), minlength=7)
        faces = [int(f) for f in legal["min_quantity"]]
        face = max(faces, key=lambda f: (held[f], -f))
        print(json.dumps({"action": "bid", "quantity": legal["min_quantity"][str(face)], "face": face}),
              flush=True)
"""


def make_venv(where: Path) -> Path:
    """A real venv at ``where`` (no pip: not needed) with numpy in its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)}))
    assert site.is_dir(), site
    source = Path(numpy.__file__).parent
    for item in source.parent.iterdir():
        if item.name == "numpy" or item.name.startswith(("numpy.libs", "numpy-")):
            shutil.copytree(item, site / item.name, symlinks=True)
    return where


@pytest.fixture(scope="module")
def venvs() -> Iterator[dict[str, Path]]:
    """One venv under the host's /tmp (a private tmpfs inside the sandbox) and
    one elsewhere (/var/tmp: not shown inside unless bound)."""
    made = {
        "tmp": Path(tempfile.mkdtemp(prefix="arena-venv-", dir="/tmp")),
        "elsewhere": Path(tempfile.mkdtemp(prefix="arena-venv-", dir="/var/tmp")),
    }
    try:
        yield {k: make_venv(v / "venv") for k, v in made.items()}
    finally:
        for v in made.values():
            shutil.rmtree(v, ignore_errors=True)


def activated(venv: Path) -> dict[str, str]:
    """The environment `source venv/bin/activate` gives."""
    return {"VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{os.environ.get('PATH', '')}"}


def league(folder: Path, bots: list[str], **extra: Any) -> Path:
    (folder / "bots").mkdir(parents=True, exist_ok=True)
    cfg = {"name": "rt", "seed": 3, "bots": [*bots, "random"], "players": 2, "matches": 4, "workers": 1, **extra}
    (folder / "league.yaml").write_text(json.dumps(cfg))
    return folder


def run_league(folder: Path, **env: str) -> tuple[list[MatchRecord], str]:
    from test_fileview import plays

    return plays(folder, **env)


def probe_py(kept: str) -> dict[str, str]:
    lines = [line for line in kept.splitlines() if line.startswith("PROBE-PY ")]
    assert lines, kept[-2000:]
    return json.loads(lines[-1][len("PROBE-PY ") :])


# -- Python programs ------------------------------------------------------------


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize("word", ["python3", "python"])
@pytest.mark.parametrize("where", ["elsewhere", "tmp"])
def test_bare_python_in_an_activated_venv_is_that_venvs(
    tmp_path: Path, venvs: dict[str, Path], word: str, where: str
) -> None:
    """`command: [python3, ./bot.py]` with the venv activated: the venv's
    interpreter and its numpy, inside the sandbox, a league with no fault."""
    venv = venvs[where]
    proj = league(tmp_path / "proj", ["bots/pybot.yaml"])
    (proj / "bots" / "pybot").mkdir(exist_ok=True)
    (proj / "bots" / "pybot" / "pybot.py").write_text(PYBOT)
    (proj / "bots" / "pybot.yaml").write_text(f"command: [{word}, ./pybot/pybot.py]\n")
    records, kept = run_league(proj, **activated(venv))
    no_faults(records)
    seen = probe_py(kept)
    assert seen["prefix"] == str(venv)
    assert seen["numpy"].startswith(str(venv) + "/")


@pytest.mark.slow
@needs_bwrap
def test_a_manifest_naming_its_own_venvs_interpreter_runs_in_that_venv(tmp_path: Path) -> None:
    proj = league(tmp_path / "proj", ["bots/ownv.yaml"])
    venv = make_venv(proj / "bots" / "ownv" / "venv")
    (proj / "bots" / "ownv").mkdir(exist_ok=True)
    (proj / "bots" / "ownv" / "ownv.py").write_text(PYBOT)
    (proj / "bots" / "ownv.yaml").write_text("command: [./ownv/venv/bin/python, ./ownv/ownv.py]\n")
    spec = load_bot(proj / "bots" / "ownv.yaml")
    assert spec.command[0] == str(venv / "bin" / "python")  # not its base interpreter
    records, kept = run_league(proj)
    no_faults(records)
    seen = probe_py(kept)
    assert seen["prefix"] == str(venv) and seen["numpy"].startswith(str(venv) + "/")


@pytest.mark.slow
@needs_bwrap
def test_an_own_venv_whose_interpreter_links_through_another_link_runs(tmp_path: Path) -> None:
    """What a venv made by a pyenv interpreter looks like (venv/bin/python3 ->
    ~/.pyenv/versions/X/bin/python3 -> python3.11): every link of the chain
    outside the bot's folder must exist inside, or the interpreter is not found."""
    proj = league(tmp_path / "proj", ["bots/chain.yaml"])
    venv = make_venv(proj / "bots" / "chain" / "venv")
    real = Path(os.path.realpath(venv / "bin" / "python"))
    farm = tmp_path / "farm" / "bin"
    farm.mkdir(parents=True)
    (farm / "python3").symlink_to(real)  # an outside link to the base interpreter
    for name in ("python", "python3", real.name):
        (venv / "bin" / name).unlink(missing_ok=True)
    (venv / "bin" / "python3").symlink_to(farm / "python3")
    (venv / "bin" / "python").symlink_to("python3")
    (proj / "bots" / "chain").mkdir(exist_ok=True)
    (proj / "bots" / "chain" / "chain.py").write_text(PYBOT)
    (proj / "bots" / "chain.yaml").write_text("command: [./chain/venv/bin/python, ./chain/chain.py]\n")
    records, kept = run_league(proj)
    no_faults(records)
    seen = probe_py(kept)
    assert seen["prefix"] == str(venv) and seen["numpy"].startswith(str(venv) + "/")


def test_a_bots_venv_cannot_point_the_arena_at_other_files(tmp_path: Path) -> None:
    """A bot's own venv is bot-controlled: its pyvenv.cfg `home` and its
    python link may name anything; only a real Python installation is shown."""
    bots = tmp_path / "bots"
    make_venv(bots / "sly" / "venv")
    (bots / "sly").mkdir(exist_ok=True)
    (bots / "sly" / "sly.py").write_text(PYBOT)
    (bots / "sly.yaml").write_text("command: [./sly/venv/bin/python, ./sly/sly.py]\n")
    cfg = bots / "sly" / "venv" / "pyvenv.cfg"
    secret = tmp_path / "results"
    (secret / "bin").mkdir(parents=True)
    cfg.write_text(f"home = {secret / 'bin'}\n")
    with pytest.raises(Exception, match="sly.*not a Python installation|sly.*links to"):
        load_bot(bots / "sly.yaml")
    py = bots / "sly" / "venv" / "bin" / "python"
    py.unlink()
    (secret / "bin" / "python").write_text("#!/bin/sh\n")
    (secret / "bin" / "python").chmod(0o755)
    py.symlink_to(secret / "bin" / "python")
    with pytest.raises(Exception, match="sly.*not a Python installation"):
        load_bot(bots / "sly.yaml")


# -- pyenv ------------------------------------------------------------------------


def fake_pyenv(root: Path) -> Path:
    """A pyenv root: a shim that cannot run inside (as pyenv's bash shims cannot),
    and a version 9.9 that is this machine's base Python installation."""
    (root / "shims").mkdir(parents=True)
    shim = root / "shims" / "python3"
    shim.write_text('#!/usr/bin/env bash\nexec "$PYENV_ROOT/libexec/pyenv" exec "$0" "$@"\n')
    shim.chmod(0o755)
    (root / "versions").mkdir()
    (root / "versions" / "9.9").symlink_to(sys.base_prefix)
    (root / "versions" / "3.0.1").mkdir()  # another version, without python3
    (root / "version").write_text("9.9\n")
    return shim


def test_a_pyenv_shim_is_resolved_the_way_pyenv_does(tmp_path: Path) -> None:
    root = tmp_path / "pyenv"
    fake_pyenv(root)
    real = os.path.realpath(os.path.join(sys.base_prefix, "bin", "python3"))
    env = {"PATH": f"{root}/shims:/usr/bin:/bin"}
    own = lambda p: False  # noqa: E731 - the bot has no files of interest here
    rt = resolve_program("python3", str(tmp_path / "bots"), "b", own, "bot b", env=env, cwd=str(tmp_path))
    assert rt.program == real and rt.kind == "python"
    # .python-version in the current folder (or above) comes before the global version file...
    (tmp_path / "work" / "deep").mkdir(parents=True)
    (tmp_path / "work" / ".python-version").write_text("# a comment\n3.0.1\n")
    with pytest.raises(Exception, match="pyenv shim.*3.0.1"):
        resolve_program(
            "python3", str(tmp_path / "bots"), "b", own, "bot b", env=env, cwd=str(tmp_path / "work" / "deep")
        )
    # ... and PYENV_VERSION before both; a prefix means the latest release it starts.
    rt = resolve_program(
        "python3",
        str(tmp_path / "bots"),
        "b",
        own,
        "bot b",
        env={**env, "PYENV_VERSION": "9"},
        cwd=str(tmp_path / "work"),
    )
    assert rt.program == real


@needs_bwrap
def test_a_bot_started_through_a_pyenv_shim_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "pyenv"
    fake_pyenv(root)
    monkeypatch.setenv("PATH", f"{root}/shims:/usr/bin:/bin")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("PYENV_VERSION", raising=False)
    monkeypatch.chdir(tmp_path)
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "shimmed").mkdir()
    (bots / "shimmed" / "shimmed.py").write_text(PYBOT.replace("import numpy as np", "import math as np"))
    (bots / "shimmed.yaml").write_text("command: [python3, ./shimmed/shimmed.py]\n")
    with BotProcess(load_bot(bots / "shimmed.yaml")) as bot:
        assert bot.start()["type"] == "ready"


# -- the Python bot host ----------------------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize("where", ["/tmp", "/var/tmp"])
def test_the_python_bot_host_works_with_the_arena_in_a_venv_anywhere(tmp_path: Path, where: str) -> None:
    """The arena importable from a venv under /tmp (a tmpfs inside) or elsewhere
    (a .pth to the source tree, as an editable install makes), its
    dependencies inside the sandbox (orjson, and mypy_extensions for the
    compiled modules' class hints) in that venv's site-packages."""
    top = Path(tempfile.mkdtemp(prefix="arena-host-", dir=where))
    try:
        venv = top / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
        for item in Path(orjson.__file__).parent.parent.iterdir():
            if item.name.startswith("orjson") or item.name.startswith("mypy_extensions"):
                (shutil.copytree if item.is_dir() else shutil.copy2)(item, site / item.name)
        ours = sysconfig.get_path("purelib")
        (site / "arena_src.pth").write_text(f"{Path(arena.__file__).resolve().parent.parent}\n{ours}\n")
        r = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "arena",
                "check",
                str(ROOT / "tests" / "bots" / "steady.py"),
                "--turns",
                "30",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        assert "OK:" in r.stdout
    finally:
        shutil.rmtree(top, ignore_errors=True)


# -- Java -------------------------------------------------------------------------


JAVA_BOT = """\
import java.io.*;

/** A protocol bot in Java: doubts any bid, opens on its most common face. */
public class Bot {
    static final String NAME = init();

    static String init() {
        if (System.getenv("JBOT_FAIL") != null) throw new IllegalStateException("no strategy table");
        return "jbot";
    }

    static int num(String s, int i) {
        int j = i;
        while (j < s.length() && Character.isDigit(s.charAt(j))) j++;
        return Integer.parseInt(s.substring(i, j));
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\\"type\\":\\"hello\\"")) {
                System.out.println("{\\"type\\":\\"ready\\",\\"name\\":\\"" + NAME + "\\"}");
            } else if (line.contains("\\"type\\":\\"turn\\"")) {
                if (line.contains("\\"dudo\\":true")) {
                    System.out.println("{\\"action\\":\\"dudo\\"}");
                } else {
                    int[] held = new int[7];
                    int d = line.indexOf("\\"dice\\":[") + 8;
                    for (String x : line.substring(d, line.indexOf(']', d)).split(",")) held[Integer.parseInt(x)]++;
                    int best = -1;
                    for (int f = 1; f <= 6; f++) {
                        if (line.contains("\\"" + f + "\\":") && (best < 0 || held[f] > held[best])) best = f;
                    }
                    int q = num(line, line.indexOf("\\"" + best + "\\":") + 4);
                    System.out.println("{\\"action\\":\\"bid\\",\\"quantity\\":" + q + ",\\"face\\":" + best + "}");
                }
            }
            System.out.flush();
        }
    }
}
"""


def java_bot(bots: Path, name: str, extra: str = "") -> Path:
    src = bots / name
    src.mkdir(parents=True)
    (src / "Bot.java").write_text(JAVA_BOT)
    subprocess.run([JAVAC or "javac", "-d", str(src), str(src / "Bot.java")], check=True, timeout=120)
    manifest = bots / f"{name}.yaml"
    # The JVM's own messages go to stderr (docs/protocol.md): stdout is the protocol's.
    manifest.write_text(
        "command: [java, -XX:+DisplayVMOutputToStderr, -Xlog:disable, -Xlog:all=warning:stderr, "
        f"-cp, ./{name}, Bot]\n{extra}"
    )
    return manifest


@pytest.mark.slow
@needs_bwrap
@needs_javac
def test_a_java_bot_with_a_declared_raise_plays_a_league(tmp_path: Path) -> None:
    """The JVM's configuration under /etc (Debian's links from the JDK home)
    is shown, and its threads fit the processes its manifest asks for."""
    proj = league(tmp_path / "proj", ["bots/jbot.yaml"])
    java_bot(proj / "bots", "jbot", "limits: {processes: 64}\n")
    records, _ = run_league(proj)
    no_faults(records)
    assert {b for r in records for b in r.bots} == {"jbot", "random"}
    meta = json.loads((proj / "results" / "live" / "run.json").read_text())
    assert {b["name"]: b["limits"]["processes"] for b in meta["bots"]} == {"jbot": 64, "random": 16}


@needs_bwrap
@needs_javac
def test_java_start_up_failures_name_the_cause(tmp_path: Path) -> None:
    spec = load_bot(java_bot(tmp_path / "bots", "jfail", "limits: {processes: 64}\n"))
    limits = SandboxLimits().for_bot(spec.limits)
    # An exception in a static initialiser: the Caused-by line and the bot's source line.
    import dataclasses

    failing = dataclasses.replace(spec, env={"JBOT_FAIL": "1"})
    with pytest.raises(BotFault) as err, BotProcess(failing, limits, TimeControl()) as bot:
        bot.start()
    assert err.value.kind == "crash"
    assert "Java raised java.lang.IllegalStateException: no strategy table at Bot.java line 8" in err.value.detail
    assert "ExceptionInInitializerError" in err.value.detail  # the first stderr line, shown too
    # Too few processes for the JVM's own threads: the limit is named, with the way to ask for more.
    with pytest.raises(BotFault) as err, BotProcess(spec, dataclasses.replace(limits, processes=8)) as bot:
        bot.start()
    assert "process limit: 8 processes+threads" in err.value.detail
    assert "limits: {processes: 64}" in err.value.detail


ROOMY = """\
import threading

LIMITS = {"processes": 40}
_go = threading.Event()
_threads = [threading.Thread(target=_go.wait, daemon=True) for _ in range(24)]  # more than 16 allow
for _t in _threads:
    _t.start()
_go.set()
for _t in _threads:
    _t.join()


def act(turn):
    return "dudo" if turn.legal.dudo else next(turn.legal.bids())
"""


@needs_bwrap
@pytest.mark.skipif(not available().cgroup("pids"), reason="no writable pids cgroup: no process limit to raise")
def test_each_bot_runs_with_its_own_limits_recorded_in_run_json(tmp_path: Path) -> None:
    """A bot's raise (LIMITS in a Python bot) reaches its process and run.json;
    the other bots keep the run's limits; without the raise it cannot start."""
    proj = league(tmp_path / "proj", ["bots/roomy.py"], sandbox={"max_processes": 40})
    (proj / "bots" / "roomy.py").write_text(ROOMY)
    records, _ = run_league(proj)
    no_faults(records)
    meta = json.loads((proj / "results" / "live" / "run.json").read_text())
    assert {b["name"]: b["limits"] for b in meta["bots"]} == {
        "roomy": {"processes": 40, "memory_mb": 512, "open_files": 64},
        "random": {"processes": 16, "memory_mb": 512, "open_files": 64},
    }
    assert meta["sandbox"]["max_processes"] == 40
    with pytest.raises(BotFault) as err, BotProcess(load_bot(proj / "bots" / "roomy.py")) as bot:
        bot.start()  # the run's limits, without its raise
    assert "process limit: 16 processes+threads" in err.value.detail


# -- Node outside the system folders, compiled programs -----------------------------------


@needs_bwrap
@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_a_node_under_a_home_folder_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Node installed under a home folder (nvm's layout), found on PATH
    through a symlink: the program is shown at the path it is run by."""
    from test_process import OPENING, TURN, match_start

    home = Path(tempfile.mkdtemp(prefix=".arena-test-node-", dir=Path.home()))
    try:
        prefix = home / ".nvm" / "versions" / "node" / "v20" / "bin"
        prefix.mkdir(parents=True)
        shutil.copy2(os.path.realpath(shutil.which("node") or "node"), prefix / "node")
        (home / "bin").mkdir()
        (home / "bin" / "node").symlink_to(prefix / "node")
        bots = tmp_path / "bots"
        bots.mkdir()
        (bots / "nodey").mkdir()
        shutil.copy(ROOT / "bots" / "node_probabilistic" / "node_probabilistic.js", bots / "nodey" / "nodey.js")
        (bots / "nodey.yaml").write_text("command: [node, ./nodey/nodey.js]\n")
        monkeypatch.setenv("PATH", f"{home / 'bin'}:/usr/bin:/bin")
        spec = load_bot(bots / "nodey.yaml")
        assert spec.command[0] == str(home / "bin" / "node") and spec.runtime == (str(home / "bin" / "node"),)
        with BotProcess(spec, SandboxLimits(), TimeControl()) as bot:
            bot.start()
            bot.notify(match_start())
            assert bot.request(OPENING)[0]["action"] == "bid"
            assert bot.request(TURN)[0]["action"] in ("bid", "dudo", "calza")
    finally:
        shutil.rmtree(home, ignore_errors=True)


C_BOT = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Doubts any bid; opens with the lowest legal quantity of twos. */
int main(void) {
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"hello\"")) {
            puts("{\"type\":\"ready\",\"name\":\"cbot\"}");
        } else if (strstr(line, "\"type\":\"turn\"")) {
            if (strstr(line, "\"dudo\":true")) {
                puts("{\"action\":\"dudo\"}");
            } else {
                const char *q = strstr(line, "\"2\":");
                printf("{\"action\":\"bid\",\"quantity\":%d,\"face\":2}\n", q ? atoi(q + 4) : 1);
            }
        }
        fflush(stdout);
    }
    return 0;
}
"""


@needs_bwrap
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler (gcc)")
@pytest.mark.parametrize("how", ["dynamic", "static"])
def test_a_compiled_program_in_the_bots_folder_plays(tmp_path: Path, how: str) -> None:
    proj = league(tmp_path / "proj", ["bots/cbot.yaml"])
    (proj / "bots" / "cbot").mkdir()
    (proj / "bots" / "cbot" / "main.c").write_text(C_BOT)
    flags = ["-static"] if how == "static" else []
    subprocess.run(
        ["gcc", "-O2", *flags, "-o", str(proj / "bots" / "cbot" / "cbot"), str(proj / "bots" / "cbot" / "main.c")],
        check=True,
        timeout=120,
    )
    (proj / "bots" / "cbot.yaml").write_text("command: [./cbot/cbot]\n")
    records, _ = run_league(proj)
    no_faults(records)


@needs_bwrap
@pytest.mark.skipif(not available().cgroup("pids"), reason="no writable pids cgroup: no process limit to raise")
def test_arena_check_and_arena_play_start_a_bot_with_its_own_limits(tmp_path: Path) -> None:
    (tmp_path / "roomy.py").write_text(ROOMY)
    r = subprocess.run(
        [*ARENA, "check", str(tmp_path / "roomy.py"), "--turns", "20"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0 and "OK:" in r.stdout, r.stdout + r.stderr
    out = tmp_path / "games.jsonl"
    r = subprocess.run(
        [*ARENA, "play", "--bots", str(tmp_path / "roomy.py"), "--bots", "random", "--out", str(out)],
        input="quit\n",
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    record = json.loads(out.read_text())
    assert [f["seat"] for f in record["faults"]] == [record["bots"].index("human")]  # only the human left
