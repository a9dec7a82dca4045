"""Paired deals nobody can exploit: a bot process never plays a deal it has
already seen revealed (docs/running.md, Determinism and duplicate dice).

Paired experiments deal the same dice to several matches (every variant of a
table, every rotation under ``seating: rotate``) and ``round_end`` reveals
every hand. ``tests/bots/memory.py`` remembers every revealed table and
looks each new round up; these tests run it as an entrant would and assert it
never predicts a single hand, and first show that it does when it is given
the chance (so the zero means something)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from arena.botfile.spec import load_bot
from arena.engine.records import MatchSpec, derive_seed
from arena.engine.rules import Rules
from arena.match.process import BotProcess, TimeControl
from arena.match.referee import play_match
from arena.running import worker as worker_module
from arena.running.backends.local import spread_batches
from arena.running.schedule import build_schedule
from arena.running.worker import Worker
from arena.sandbox import SandboxLimits
from arena.sandbox.zygote import Zygote
from arena.sandbox.zygote import unavailable as no_zygote

ROOT = Path(__file__).resolve().parent.parent
MEMORY = ROOT / "tests" / "bots" / "memory.py"
FAST = TimeControl(budget_ms=500, wall_factor=4.0, hello_ms=10000, grace_ms=200)
LIMITS = SandboxLimits(memory_mb=256)


def _spec(i: int, dice_seed: int, repeat: int = 0, entrants: tuple[int, ...] = (0, 1, 2, 3)) -> MatchSpec:
    rules = Rules.preset("classic", {"seating": "fixed", "first": "seat0"}).to_dict()
    return MatchSpec(
        index=i,
        match=f"m-{i:06d}",
        variant="classic",
        rules=rules,
        entrants=entrants,
        seed=derive_seed("deals", i),
        dice_seed=dice_seed,
        table=0,
        rotation=0,
        repeat=repeat,
    )


def _summaries(text: str) -> list[dict[str, int]]:
    out = []
    for line in text.splitlines():
        if line.startswith("SUMMARY "):
            out.append({k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])})
    return out


def test_the_memory_bot_predicts_every_hand_when_one_process_replays_a_deal() -> None:
    """The control: the same process, the same deal twice (what used to happen)."""
    spec = load_bot(MEMORY)
    others = [load_bot(ROOT / "bots" / f"{n}.py") for n in ("probabilistic", "cautious", "calza")]
    procs = [BotProcess(s, LIMITS, FAST) for s in [spec, *others]]
    try:
        for p in procs:
            p.start()
        names = ["memory", "probabilistic", "cautious", "calza"]
        for i in range(2):
            play_match(_spec(i, dice_seed=12345), procs, names, FAST.budget_ms)
        tail = procs[0].stderr_tail()
    finally:
        for p in procs:
            p.close()
    assert "CORRECT m-000001 1" in tail  # the replayed deal's first round, every hand right


def _pid(worker: Worker, entrant: int, match: str) -> int | None:
    """The pid of the process of ``entrant`` that played ``match`` last."""
    return next(
        (
            worker.procs[k].pid
            for k, m in worker._last.items()  # noqa: SLF001
            if k[0] == entrant and m == match
        ),
        None,
    )


def test_the_worker_gives_a_repeated_deal_to_a_fresh_process() -> None:
    entrants = [(n, load_bot(ROOT / "bots" / f"{n}.py")) for n in ("random", "probabilistic", "cautious")]
    entrants.insert(0, ("memory", load_bot(MEMORY)))
    worker = Worker(entrants, LIMITS, FAST)
    try:
        pids = []
        for i, (seed, repeat) in enumerate([(1, 0), (1, 1), (2, 0), (2, 1), (1, 2), (3, 0)]):
            result = worker.play(_spec(i, seed, repeat))
            assert "line" in result, result.get("error")
            pids.append(_pid(worker, 0, f"m-{i:06d}"))
        # The second play of deal 1 needs a second process; deal 2 is new to both
        # (the oldest plays it first); the third play of deal 1, a third; deal 3, the oldest again.
        assert pids[0] != pids[1] and pids[2] == pids[0] and pids[3] == pids[1]
        assert pids[4] not in (pids[0], pids[1]) and pids[5] == pids[0]
        assert worker.started == 3 * 4  # each entrant: three processes, the most plays of one deal
        assert all(len(worker.deals[k]) == len(set(worker.deals[k])) for k in worker.procs)
    finally:
        worker.close()


class _Idle:
    """Stands in for a BotProcess in the worker's bookkeeping tests: starts and plays nothing."""

    alive = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def launch(self) -> None:
        pass

    def start(self) -> None:
        pass

    def close(self) -> None:
        self.alive = False

    def take_stderr(self) -> tuple[bytes, int]:
        return b"", 0


class _Limits:
    def for_bot(self, *args: object) -> SandboxLimits:
        return LIMITS


def _assign_all(
    workers: list[Worker], batches: list[list[MatchSpec]], lanes: list[int] | None = None
) -> tuple[int, int]:
    """The processes the workers start when each batch goes to its lane's worker,
    and the most alive at once; each process never given a deal it has played."""
    peak = 0
    for n, batch in enumerate(batches):
        w = workers[lanes[n] if lanes is not None else 0]
        for spec in batch:
            keys = w._assign(spec, [])  # noqa: SLF001
            assert len(set(keys)) == len(keys)
            for key in keys:
                w._player(key, spec, [])  # noqa: SLF001
                assert spec.dice_seed not in w.deals[key]
                w.deals[key].add(spec.dice_seed)
                w._used[key] = n  # noqa: SLF001
            peak = max(peak, sum(len(x.procs) for x in workers))
    return sum(x.started for x in workers), peak


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_pool_starts_one_process_per_repetition_of_a_deal(monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """configs/variants.yaml's shape (8 entrants, tables of 4 and 5, 11 variants):
    spread over the workers, each entrant gets about as many processes as a deal
    has plays, and keeps them for every later table, instead of one per repetition
    per worker, replaced wherever repetitions outnumber the slots."""
    monkeypatch.setattr(worker_module, "BotProcess", _Idle)
    variants = {f"v{k}": {"preset": "classic"} for k in range(11)}
    specs = build_schedule(
        seed=7, n_entrants=8, sizes=[4, 5], matches=60, fmt="league", seating="roll", variants=variants
    )
    pool = [Worker([(str(e), load_bot(MEMORY)) for e in range(8)], _Limits(), FAST) for _ in range(workers)]
    lanes = spread_batches(specs, workers)
    started, peak = _assign_all(pool, [b for _, b in lanes], [lane for lane, _ in lanes])  # type: ignore[arg-type]
    # Each worker: as many per entrant as the larger share of a deal's plays (the
    # larger share goes to each lane in turn, so that their work stays even).
    assert started == 8 * workers * -(-11 // workers)  # 88 on one worker, 96 on two or three
    assert peak <= started and all(len(w.procs) <= worker_module.MAX_LIVE_PROCESSES for w in pool)


@pytest.mark.parametrize("seating", ["roll", "rotate"])
def test_spread_batches_only_reorder_and_split_each_deal_by_repetition(seating: str) -> None:
    variants = {f"v{k}": {"preset": "classic"} for k in range(3)}
    specs = build_schedule(
        seed=3, n_entrants=6, sizes=[3, 4], matches=40, fmt="league", seating=seating, variants=variants
    )
    batches = spread_batches(specs, 2)
    flat = [s.match for _, b in batches for s in b]
    assert sorted(flat) == sorted(s.match for s in specs) and len(flat) == len(set(flat))
    repeats = 1 + max(s.repeat for s in specs)
    for _, b in batches:  # a batch holds one half of the repetitions of each of its deals
        assert len({s.repeat * 2 // repeats for s in b}) == 1
    lanes: dict[int, dict[int, set[int]]] = {0: {}, 1: {}}
    for lane, b in batches:
        for s in b:
            lanes[lane].setdefault(s.dice_seed, set()).add(s.repeat)
    # No deal's plays in both lanes, except where a stretch's end cut it; the lanes' work about even.
    both = set(lanes[0]) & set(lanes[1])
    assert all(lanes[0][d].isdisjoint(lanes[1][d]) for d in both)
    sizes = [sum(len(b) for lane, b in batches if lane == k) for k in (0, 1)]
    assert abs(sizes[0] - sizes[1]) <= 0.1 * len(specs)
    # Unpaired runs, or one worker: the batches of before, in schedule order.
    single = [s for s in specs if s.repeat == 0]
    assert [s for _, b in spread_batches(single, 2) for s in b] == single
    assert [s for _, b in spread_batches(specs, 1) for s in b] == specs


def test_live_processes_are_capped_least_recently_used_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "BotProcess", _Idle)
    monkeypatch.setattr(worker_module, "MAX_LIVE_PROCESSES", 6)
    w = Worker([(str(e), load_bot(MEMORY)) for e in range(4)], _Limits(), FAST)
    specs = [_spec(i, dice_seed=i // 4, repeat=i % 4) for i in range(16)]  # 4 deals, 4 plays each
    started, peak = _assign_all([w], [specs])
    # Over the cap only by the table's new processes while every entrant keeps
    # one (a league of more entrants than the cap keeps one each, as before).
    assert peak == 4 + 4 and len(w.procs) <= 8
    assert all(sum(1 for k in w.procs if k[0] == e) >= 1 for e in range(4))
    assert started > 16  # past the cap, processes are replaced: the price of the bound


def test_an_entrant_twice_at_a_table_gets_two_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "BotProcess", _Idle)
    w = Worker([(str(e), load_bot(MEMORY)) for e in range(2)], _Limits(), FAST)
    started, _ = _assign_all([w], [[_spec(0, 5, entrants=(0, 0, 1, 1))]])
    assert started == 4


def _run(tmp_path: Path, name: str, **config: object) -> Path:
    bots = tmp_path / f"bots-{name}"
    bots.mkdir()
    (bots / "memory.py").write_text(MEMORY.read_text())
    cfg = {
        "name": name,
        "seed": 99,
        "bots": [str(bots / "memory.py"), "probabilistic", "cautious", "calza"],
        "players": 4,
        "matches": 12,
        "workers": 2,
        "time": {"budget_ms": 1000},
        **config,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(cfg))
    out = tmp_path / name
    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return out


def _stderr(out: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted((out / "bots").rglob("*")) if p.is_file())


@pytest.mark.slow
@pytest.mark.parametrize("case", ["variants", "rotate", "rotate-fresh"])
def test_the_memory_bot_never_predicts_a_hand(tmp_path: Path, case: str) -> None:
    if case == "variants":
        config: dict[str, object] = {
            "variants": {
                "classic": {"preset": "classic"},
                "bidder-loses": {"preset": "classic", "calza_reward": "bidder_loses"},
            }
        }
    else:
        config = {"seating": "rotate", "fresh_process": case == "rotate-fresh"}
    out = _run(tmp_path, case, **config)
    text = _stderr(out)
    assert not re.search(r"^CORRECT ", text, re.M), text[:2000]
    summaries = _summaries(text)
    assert summaries, "the memory bot never reported: the attack did not run"
    assert max(s["stored"] for s in summaries) > 0 and max(s["lookups"] for s in summaries) > 0
    assert all(s["correct"] == 0 for s in summaries)
    # Nothing outlives a process: not the keyring, not /tmp, not /dev/shm.
    assert all(s["keyring_reads"] == 0 for s in summaries)


RELAY = ROOT / "tests" / "bots" / "relay.py"
_RELAY_CHANNELS = ("file", "abstract-socket", "udp", "sysv-shm", "survivor", "posix-mq", "signal")


def _clear_relay_leftovers() -> None:
    """What the relay bot leaves on the host when it runs unsandboxed (the control)."""
    import ctypes
    import shutil

    for folder in ("/tmp/dudo-relay", "/dev/shm/dudo-relay"):
        shutil.rmtree(folder, ignore_errors=True)
    libc = ctypes.CDLL(None, use_errno=True)
    seg = libc.shmget(0x0D7D0, 0, 0)
    if seg >= 0:
        libc.shmctl(seg, 0, None)  # IPC_RMID
    libc.mq_unlink(b"/dudo-relay")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        try:
            s.sendto(b"quit", "\0dudo-relay-survivor")  # the relay that outlived the bot
        except OSError:
            pass


def _relay_plays(limits: SandboxLimits, zygote: Zygote | None = None) -> str:
    """Two processes of the relay bot play the same deal one after the other
    (as two variants of one table would); what the second wrote to stderr.
    With ``zygote``, every process is forked from it (as a worker's are)."""
    relay = load_bot(RELAY)
    others = [load_bot(ROOT / "bots" / f"{n}.py") for n in ("probabilistic", "cautious", "calza")]
    first, second = BotProcess(relay, limits, FAST, zygote=zygote), BotProcess(relay, limits, FAST, zygote=zygote)
    rest = [BotProcess(s, limits, FAST, zygote=zygote) for s in others]
    names = ["relay", "probabilistic", "cautious", "calza"]
    try:
        for p in [first, second, *rest]:
            p.start()
        play_match(_spec(0, dice_seed=4242), [first, *rest], names, FAST.budget_ms)
        play_match(_spec(1, dice_seed=4242, repeat=1), [second, *rest], names, FAST.budget_ms)
        second.close()  # thawed to close: it reads match_end and writes its summary
        return second.stderr_tail()
    finally:
        for p in [first, second, *rest]:
            p.close()


def test_the_relay_bot_passes_a_deal_between_unsandboxed_processes() -> None:
    """The control: without the sandbox, every channel carries the first play's
    hands to the second process, which then knows every die (so the zeros of
    the next test mean something)."""
    _clear_relay_leftovers()
    try:
        tail = _relay_plays(SandboxLimits(mode="off", memory_mb=256))
    finally:
        _clear_relay_leftovers()
    for channel in _RELAY_CHANNELS:
        assert f"RECEIVED {channel} m-000001" in tail, tail
    assert re.search(r"^CORRECT (file|abstract-socket|udp|sysv-shm) m-000001 1$", tail, re.M), tail
    assert "SIBLING" in tail


@pytest.mark.parametrize("forked", [False, True], ids=["started", "forked"])
def test_the_relay_bot_passes_nothing_between_sandboxed_processes(forked: bool) -> None:
    """Started anew, or forked from one warm zygote (where the machine allows
    it): every process of the bot is on its own."""
    if forked and no_zygote() is not None:
        pytest.skip(f"no zygote here: {no_zygote()}")
    zygote = Zygote() if forked else None
    try:
        tail = _relay_plays(LIMITS, zygote)
        if zygote is not None:
            zygote.collect(0.1)
            assert len(zygote.pids) == 5  # every process of both plays was forked
    finally:
        if zygote is not None:
            zygote.close()
    assert not re.search(r"^(RECEIVED|HIT|CORRECT|SIBLING) ", tail, re.M), tail
    # What it holds beyond stdin, stdout and stderr: the protocol's own copy of its pipe, nothing else.
    fds = re.findall(r"^FD (\d+) (.*)$", tail, re.M)
    assert len(fds) == 1 and fds[0][1].startswith("pipe:"), fds
    summary = re.findall(r"^SUMMARY .*$", tail, re.M)
    assert summary, tail  # the attack ran ...
    counts = {k: int(v) for k, v in (kv.split("=") for kv in summary[-1].split()[1:])}
    assert counts["stored"] > 0 and counts["received"] == 0  # ... and got nothing


@pytest.mark.slow
def test_the_relay_bot_learns_nothing_in_a_run_of_variants(tmp_path: Path) -> None:
    """Through `arena run`: two workers, the pool of processes per entrant, the
    repetitions of each deal spread over the workers (processes of one bot
    alive at once in both)."""
    bots = tmp_path / "bots-relay"
    bots.mkdir()
    (bots / "relay.py").write_text(RELAY.read_text())
    variants = {
        "classic": {"preset": "classic"},
        "bidder-loses": {"preset": "classic", "calza_reward": "bidder_loses"},
        "no-calza": {"preset": "classic", "calza": False},
    }
    cfg = {
        "name": "relay",
        "seed": 5,
        "bots": [str(bots / "relay.py"), "probabilistic", "cautious", "calza"],
        "players": 4,
        "matches": 6,
        "workers": 2,
        "time": {"budget_ms": 1000},
        "variants": variants,
    }
    path = tmp_path / "relay.yaml"
    path.write_text(json.dumps(cfg))
    out = tmp_path / "relay"
    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    text = _stderr(out)
    assert not re.search(r"^(RECEIVED|HIT|CORRECT|SIBLING) ", text, re.M), text[:2000]
    summaries = [
        {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
        for line in re.findall(r"^SUMMARY .*$", text, re.M)
    ]
    assert len(summaries) == 18  # every match of the relay bot reported
    assert all(s["received"] == 0 and s["hits"] == 0 for s in summaries) and max(s["sent"] for s in summaries) > 0
