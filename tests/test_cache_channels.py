"""Deals remembered, and partners' hands read, through the kernel's shared
caches: tests/bots/cache_spy.py marks pages of large files under
/usr (and missing names) for every die of the hands ``round_end`` reveals,
and looks for its marks in the next play of the deal and from a partner at
its table, over every channel it knows.

In the sandbox the channels the system-call filter closes (exact probes of
page residency, and pages moved in or out by a hint) decode nothing; the
same runs without the sandbox decode most hands on every channel, which
shows the attempts are real. The timing channels (timing a read, timing a
name lookup, the pages a fault maps around it) decode nothing either: a
Python bot reads every file from copies on a tmpfs (arena/sandbox/view.py),
where every page is resident and no missing name is remembered; so does
the same attack run as a program bot (a manifest running the system's
Python on it), which reads copies of its runtime's closure on a tmpfs
(arena/sandbox/programview.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_process import BOTS

from arena.running.config import load_config
from arena.running.runner import run
from arena.sandbox import available, seccomp

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

MECH = available()
REPO = Path(__file__).resolve().parent.parent
needs_sandbox = pytest.mark.skipif(
    MECH.bwrap is None or seccomp.unavailable() is not None, reason="needs bubblewrap and libseccomp (the full sandbox)"
)
# The channels the filter closes: exact probes by a system call, and marks a hint makes.
CLOSED = [
    "mincore",
    "cachestat",
    "nowait",
    "fadvise_willneed",
    "readahead",
    "madvise_willneed",
    "fadvise_dontneed",
    "madvise_pageout",
]
EXACT = {"mincore": "ENOSYS", "cachestat": "ENOSYS", "nowait": "ENOTSUP"}
# Closed by the bot's file view, served from memory (arena/sandbox/view.py):
# timing a read or a lookup, and the exact probe no filter can refuse
# (fault-around, then /proc/self/pagemap).
TIMING = ["read_timing", "dentry", "fault_around"]


def spy(tmp_path: Path, channels: list[str] | None = None) -> Path:
    """A copy of the attack bot with a fresh key space (``salt``): marks left on
    the machine by earlier runs never match this run's."""
    folder = tmp_path / "entrants"
    folder.mkdir()
    shutil.copy(BOTS / "cache_spy.py", folder / "cache_spy.py")
    (folder / "cache_spy").mkdir()
    (folder / "cache_spy" / "salt").write_text(os.urandom(8).hex())
    if channels is not None:
        (folder / "cache_spy" / "channels").write_text(" ".join(channels))
    return folder / "cache_spy.py"


# The spy as a program bot: a manifest running the system's Python (not the
# arena's) on the same attack, with the SDK it imports (the arena package and
# its two pure dependencies) copied into its own folder. Its sandbox shows
# that Python's runtime closure, not the Python bot host's view.
PROGRAM_PYTHON = "/usr/bin/python3"
needs_program_python = pytest.mark.skipif(
    os.path.basename(os.path.realpath(PROGRAM_PYTHON)) != "python{}.{}".format(*sys.version_info),
    reason=f"needs a system Python at {PROGRAM_PYTHON} of this Python's version (the SDK's compiled orjson)",
)


def program_spy(tmp_path: Path, channels: list[str] | None = None) -> Path:
    """``cache_spy_prog.yaml``: tests/bots/cache_spy.py run by the system's
    Python as a program bot, with a fresh key space (``salt``)."""
    import mypy_extensions
    import orjson

    folder = tmp_path / "entrants"
    folder.mkdir(exist_ok=True)
    own = folder / "cache_spy_prog"
    lib = own / "lib"
    lib.mkdir(parents=True)
    shutil.copytree(REPO / "arena", lib / "arena", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copytree(Path(orjson.__file__).parent, lib / "orjson", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(mypy_extensions.__file__, lib / "mypy_extensions.py")
    shutil.copy(BOTS / "cache_spy.py", own / "cache_spy.py")
    (own / "cache_spy").mkdir()
    (own / "cache_spy" / "salt").write_text(os.urandom(8).hex())
    if channels is not None:
        (own / "cache_spy" / "channels").write_text(" ".join(channels))
    manifest = folder / "cache_spy_prog.yaml"
    manifest.write_text(
        f"command: [{PROGRAM_PYTHON}, -S, -P, -m, arena.protocol.host, ./cache_spy_prog/cache_spy.py]\n"
        f"env: {{PYTHONPATH: {lib}, ARENA_PURE_PYTHON: '1'}}\n"
    )
    return manifest


def forget_marks() -> None:
    """Evict the attack's files from the page cache (clean pages of /usr: the
    next reader reads them again). Each run leaves thousands of its pages
    cached, which to the next run are noise; without this, a machine that ran
    these tests often would end with the files cached whole."""
    spec = importlib.util.spec_from_file_location("cache_spy_files", BOTS / "cache_spy.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for path, _ in mod._big_files():
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def play(tmp_path: Path, name: str, body: str) -> Path:
    """A run of ``body`` (a config; ``{out}`` its folder). The configs give a
    wide wall-clock cap (``wall_factor: 30``): the spy's marks are page faults
    on cold files, its own time, which on a loaded machine's disk took over
    10 s for one turn."""
    out = tmp_path / name
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(textwrap.dedent(body).format(out=out))
    forget_marks()
    try:
        result = run(load_config(cfg), force=True)
    finally:
        forget_marks()
    assert result.status == "complete", result.error
    records = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines() if line.strip()]
    assert records and not [f for r in records for f in r["faults"]], [r["faults"] for r in records]
    return out


def scores(out: Path, label: str = "cache_spy") -> dict[str, dict[str, Any]]:
    """Each channel's totals over the bot's processes (the last report of each)."""
    last: dict[str, dict[str, Any]] = {}
    for ln in (out / "bots" / f"{label}.stderr").read_text().splitlines():
        if ln.startswith("cachespy "):
            rep = json.loads(ln[len("cachespy ") :])
            last[rep["pid"]] = rep
    assert last, f"{label} wrote no report"
    total: dict[str, dict[str, Any]] = {}
    for rep in last.values():
        for name, c in rep.items():
            if isinstance(c, dict) and "decoded" in c:
                t = total.setdefault(
                    name, {"checks": 0, "checked": 0, "probed": 0, "decoded": 0, "right": 0, "live": 0, "errors": {}}
                )
                for k in ("checks", "checked", "probed", "decoded", "right", "live"):
                    t[k] += c[k]
                for e, n in c["errors"].items():
                    t["errors"][e] = t["errors"].get(e, 0) + n
    return total


def rotated(
    tmp_path: Path, sandbox: str, matches: int = 8, channels: list[str] | None = None, program: bool = False
) -> dict[str, dict[str, Any]]:
    """The attack bot (kept to ``channels``; as a program bot with ``program``)
    against probabilistic, heads up, every deal played twice (seats rotated)."""
    bot = program_spy(tmp_path, channels) if program else spy(tmp_path, channels)
    out = play(
        tmp_path,
        "rotate",
        f"""\
        name: rotate
        bots: [{bot}, {REPO / "bots" / "probabilistic.py"}]
        players: 2
        matches: {matches}
        seating: rotate
        workers: 1
        out: {{out}}
        time: {{{{budget_ms: 2000, wall_factor: 30, hello_ms: 30000}}}}
        sandbox: {{{{{sandbox}, stderr_tail: 262144}}}}
        """,
    )
    return scores(out, bot.stem)


def colluders(tmp_path: Path, sandbox: str, program: bool = False) -> dict[str, dict[str, Any]]:
    """Two copies at one table of three (and probabilistic): each marks its hand at
    each turn and reads its partner's."""
    bot = program_spy(tmp_path) if program else spy(tmp_path)
    out = play(
        tmp_path,
        "collude",
        f"""\
        name: collude
        bots: [{bot}, {bot}, {REPO / "bots" / "probabilistic.py"}]
        players: 3
        matches: 3
        workers: 1
        out: {{out}}
        time: {{{{budget_ms: 2000, wall_factor: 30, hello_ms: 30000}}}}
        sandbox: {{{{{sandbox}, stderr_tail: 262144}}}}
        """,
    )
    both = [scores(out, bot.stem), scores(out, f"{bot.stem}#2")]
    return {
        name: {k: both[0][name][k] + both[1][name][k] for k in ("probed", "decoded", "right", "live")}
        for name in both[0]
    }


@pytest.fixture(scope="module")
def sandboxed_rotation(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return rotated(tmp_path_factory.mktemp("rotate"), "mode: auto")


@pytest.fixture(scope="module")
def sandboxed_colluders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return colluders(tmp_path_factory.mktemp("collude"), "mode: auto")


@needs_sandbox
def test_a_rotated_league_carries_no_deal_over_the_channels_the_filter_closes(
    sandboxed_rotation: dict[str, dict[str, Any]],
) -> None:
    s = sandboxed_rotation
    for name in CLOSED:
        assert s[name]["checks"] >= 8, (name, s[name])  # tried at every round of every play
        assert s[name]["decoded"] == 0 and s[name]["right"] == 0, (name, s[name])
    for name, error in EXACT.items():  # the probe itself fails, every time: the filter's error
        assert sum(s[name]["errors"].values()) == s[name]["checks"], (name, s[name])
        # (or, where the bot sees no large files to mark, that)
        assert set(s[name]["errors"]) <= {error, "no files to mark"}, (name, s[name])


@needs_sandbox
def test_a_rotated_league_carries_no_deal_over_timing(sandboxed_rotation: dict[str, dict[str, Any]]) -> None:
    assert {name: sandboxed_rotation[name]["decoded"] for name in TIMING} == dict.fromkeys(TIMING, 0)


@needs_sandbox
def test_two_colluders_read_nothing_over_the_channels_the_filter_closes(
    sandboxed_colluders: dict[str, dict[str, Any]],
) -> None:
    for name in CLOSED:
        assert sandboxed_colluders[name]["probed"] > 0, (name, sandboxed_colluders[name])
        assert sandboxed_colluders[name]["live"] == 0, (name, sandboxed_colluders[name])


@needs_sandbox
def test_two_colluders_read_nothing_over_timing(sandboxed_colluders: dict[str, dict[str, Any]]) -> None:
    assert {name: sandboxed_colluders[name]["live"] for name in TIMING} == dict.fromkeys(TIMING, 0)


@pytest.fixture(scope="module")
def program_rotation(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return rotated(tmp_path_factory.mktemp("prog-rotate"), "mode: auto", program=True)


@needs_sandbox
@needs_program_python
def test_a_program_bot_carries_no_deal_over_any_channel(program_rotation: dict[str, dict[str, Any]]) -> None:
    """The spy as a program bot (the system's Python, its own copy of the SDK)
    reads its runtime's closure from memory (arena/sandbox/programview.py):
    timing a read or a lookup, and fault-around, find nothing, nor do the
    channels the filter closes."""
    s = program_rotation
    assert set(s) == set(CLOSED + TIMING)
    for name in CLOSED + TIMING:
        assert s[name]["checks"] >= 8, (name, s[name])
        assert s[name]["decoded"] == 0 and s[name]["right"] == 0, (name, s[name])
        # It had pages to mark (the view's libraries): the zeros are the view's, not an empty page space.
        assert "no files to mark" not in s[name]["errors"], (name, s[name])


@needs_sandbox
@needs_program_python
def test_two_colluding_program_bots_read_nothing(tmp_path: Path) -> None:
    s = colluders(tmp_path, "mode: auto", program=True)
    for name in CLOSED + TIMING:
        assert s[name]["probed"] > 0, (name, s[name])
        assert s[name]["live"] == 0, (name, s[name])


@pytest.mark.slow
@needs_program_python
def test_without_the_sandbox_a_program_bot_reads_the_deal_by_timing(tmp_path: Path) -> None:
    """The control for the program spy: on the host's files (`sandbox: {mode:
    off}`) its timing channels read the hands of a deal's first play."""
    s = rotated(tmp_path, 'mode: "off"', matches=12, channels=TIMING, program=True)
    for name, c in s.items():
        assert c["right"] >= 3 and c["decoded"] - c["right"] <= max(1, c["right"] // 4), (name, c)


@pytest.mark.slow
def test_without_the_sandbox_every_channel_reads_the_deal(tmp_path: Path) -> None:
    """The control: the same league with `sandbox: {mode: off}`. Every channel
    reads hands of the deal's first play in its second, nearly all right, so
    the sandboxed zeros mean something."""
    # The channels that mark by evicting a page apart: the pages every other
    # channel's marks and probes bring in disturb them (measured here: the
    # fadvise_dontneed hint read 1-3 hands in 12 matches beside them, 14-18 alone).
    evicting = ["fadvise_dontneed", "madvise_pageout"]
    s: dict[str, dict[str, Any]] = {}
    for i, group in enumerate((evicting, [c for c in CLOSED + TIMING if c not in evicting])):
        (tmp_path / str(i)).mkdir()
        s |= rotated(tmp_path / str(i), 'mode: "off"', matches=12, channels=group)
    assert set(s) == set(CLOSED + TIMING)
    # The kernel answers these for a file's owner (root, for /usr) or a writer only; MADV_PAGEOUT
    # likewise pushes a file's pages out only for its owner or a writer.
    if os.geteuid() != 0:
        s = {name: c for name, c in s.items() if name not in ("mincore", "cachestat", "madvise_pageout")}
    for name, c in s.items():
        assert c["right"] >= 3 and c["decoded"] - c["right"] <= max(1, c["right"] // 4), (name, c)


@pytest.mark.slow
def test_without_the_sandbox_two_colluders_read_each_other(tmp_path: Path) -> None:
    s = colluders(tmp_path, 'mode: "off"')
    if os.geteuid() != 0:  # as above
        s = {name: c for name, c in s.items() if name not in ("mincore", "cachestat", "madvise_pageout")}
    for name, c in s.items():
        assert c["live"] >= 1, (name, c)


def sprt(tmp_path: Path, a: Path, sandbox: str, name: str, matches: int = 120) -> dict[str, Any]:
    """``arena sprt A probabilistic`` heads up, window [0, 100] Elo, at most ``matches / 2`` pairs."""
    out = play(
        tmp_path,
        name,
        f"""\
        name: {name}
        format: sprt
        bots: [{a}, {REPO / "bots" / "probabilistic.py"}]
        players: 2
        matches: {matches}
        workers: 1
        seed: 20261206
        sprt: {{{{a: {a.stem}, b: probabilistic, elo0: 0, elo1: 100}}}}
        out: {{out}}
        time: {{{{budget_ms: 2000, wall_factor: 30, hello_ms: 30000}}}}
        sandbox: {{{{{sandbox}, stderr_tail: 4096}}}}
        """,
    )
    return json.loads((out / "run.json").read_text())["sprt"]


def twin(tmp_path: Path) -> Path:
    """The honest twin: probabilistic under another name."""
    folder = tmp_path / "twin"
    folder.mkdir()
    shutil.copy(REPO / "bots" / "probabilistic.py", folder / "twin.py")
    return folder / "twin.py"


@needs_sandbox
@pytest.mark.slow
def test_sprt_of_the_spy_on_the_closed_channels_equals_its_honest_twins(tmp_path: Path) -> None:
    """Kept to the channels the filter closes, the spy reads nothing and plays
    exactly as probabilistic: the same verdict (never H1), pair for pair."""
    cheat = sprt(tmp_path, spy(tmp_path, CLOSED), "mode: auto", "cheat")
    honest = sprt(tmp_path, twin(tmp_path), "mode: auto", "honest")
    assert cheat["verdict"] != "H1"
    assert (cheat["verdict"], cheat["pairs"], cheat["counts"]) == (honest["verdict"], honest["pairs"], honest["counts"])


@needs_sandbox
@pytest.mark.slow
def test_sprt_of_the_spy_on_every_channel_never_accepts_h1(tmp_path: Path) -> None:
    # Up to 150 pairs: where the channels are open, H1 comes after 12-15 (measured).
    assert sprt(tmp_path, spy(tmp_path), "mode: auto", "cheat", matches=300)["verdict"] != "H1"


@needs_sandbox
@needs_program_python
@pytest.mark.slow
def test_sprt_of_the_program_spy_on_every_channel_equals_its_honest_twins(tmp_path: Path) -> None:
    """The spy as a program bot reads nothing in its program view, and plays
    exactly as probabilistic: its SPRT verdict, pairs and counts are its
    honest twin's (the same seed, the same deals)."""
    cheat = sprt(tmp_path, program_spy(tmp_path), "mode: auto", "cheat", matches=120)
    honest = sprt(tmp_path, twin(tmp_path), "mode: auto", "honest", matches=120)
    assert cheat["verdict"] != "H1"
    assert (cheat["verdict"], cheat["pairs"], cheat["counts"]) == (honest["verdict"], honest["pairs"], honest["counts"])


@pytest.mark.slow
def test_without_the_sandbox_the_sprt_of_the_spy_reaches_h1_and_the_integrity_check_refuses_it(
    tmp_path: Path,
) -> None:
    """The control: the cheat is worth an H1 when the channels are open, and
    the paired-play integrity check, the defence in depth, stops it there:
    the spy does better on a deal's later plays than on its first."""
    # The exact probes alone (the hints are noisy, and a hint one play gives can spoil another's
    # marks); mincore and cachestat answer for a file's owner, so as root only.
    if os.geteuid() != 0:  # RWF_NOWAIT alone, the one exact probe left to a user, decided H0 in one of two runs
        pytest.skip("the exact probes that decide this control answer root only (mincore, cachestat)")
    exact = list(EXACT)
    result = sprt(tmp_path, spy(tmp_path, exact), 'mode: "off"', "cheat", matches=300)
    assert result["llr"] >= result["upper"], result  # the cheat is worth an H1...
    # ... which the integrity check refuses when it has seen enough of the spy's deals to flag it.
    flagged = [b["bot"] for b in (result.get("integrity") or {}).get("bots", []) if b["flagged"]]
    assert (result["verdict"], flagged) in (("untrusted", ["cache_spy"]), ("H1", [])), result
