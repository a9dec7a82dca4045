"""Host stalls are the arena's fault, never the bot's, and never a bot's lever
(docs/sandbox.md, "Host stalls").

The attribution (:func:`arena.match.stalls.judge`) on pressure samples as
the kernel gives them; then real matches: an honest bot held frozen past its
wall-clock cap is not charged, its match is replayed and its record equals a
quiet run's; a bot that makes its own waits when losing (tests/bots/stall_maker.py)
gets its own timeout and no replay; the replay caps hold.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.apps.standings import LiveStandings
from arena.botfile.spec import load_bot
from arena.engine.records import MatchRecord, MatchSpec, canonical, derive_seed
from arena.engine.replay import check
from arena.engine.rules import Rules
from arena.errors import FaultKind, HostStall
from arena.match import stalls
from arena.match.process import BotProcess, TimeControl
from arena.running import worker as worker_mod
from arena.running.observe import Finished
from arena.running.worker import Worker
from arena.sandbox import SandboxLimits, cgroups
from arena.sandbox.cgroups import StallSample

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"
CLOCK = TimeControl(budget_ms=200, wall_factor=5.0, hello_ms=10000, grace_ms=200)
LIMITS = SandboxLimits(memory_mb=256, processes=32, output_bytes=1 << 20)

# Counters as the kernel gave them (us), around a 0.5 s cap that bayes reached at
# load 10 on 2 cores: 93 ms of CPU, 0.32 s of 0.39 s measured waiting for a CPU.
BEFORE = StallSample(cpu_us=1_204_117, io_us=5_210, memory_us=0, frozen_us=41_683_705, at=100.0)


def after(
    cpu: float = 0.0, io: float = 0.0, memory: float = 0.0, frozen: float = 0.0, window: float = 0.39
) -> StallSample:
    return StallSample(
        BEFORE.cpu_us + int(cpu * 1e6),
        BEFORE.io_us + int(io * 1e6),
        BEFORE.memory_us + int(memory * 1e6),
        BEFORE.frozen_us + int(frozen * 1e6),
        BEFORE.at + window,
    )


# -- the attribution, on samples ------------------------------------------------------


def test_a_bot_waiting_for_a_cpu_others_hold_is_the_hosts_stall() -> None:
    host, said = stalls.judge(BEFORE, after(cpu=0.32), 0.5)
    assert host
    assert "waited 0.32 s for a CPU others held" in said


def test_a_bot_frozen_past_its_cap_is_the_hosts_stall() -> None:
    host, said = stalls.judge(BEFORE, after(frozen=4.6, window=4.9), 5.0)
    assert host and "frozen 4.60 s" in said


def test_a_sleeping_or_blocked_bot_is_its_own_timeout() -> None:
    """Nothing of it runnable: no CPU wait, nothing to excuse, nothing to say."""
    assert stalls.judge(BEFORE, after(cpu=0.004, window=4.9), 5.0) == (False, "")


def test_its_own_io_and_page_cache_misses_are_its_own_time() -> None:
    host, said = stalls.judge(BEFORE, after(io=3.9, memory=0.8, cpu=0.1, window=4.9), 5.0)
    assert not host
    assert "own I/O 3.90 s, reclaim 0.80 s" in said  # said, for its author


def test_a_short_wait_for_the_cpu_is_not_enough() -> None:
    """Under half the cap held by the host: the bot was near its limit of its own accord."""
    assert not stalls.judge(BEFORE, after(cpu=2.4, window=4.9), 5.0)[0]
    assert stalls.judge(BEFORE, after(cpu=2.5, window=4.9), 5.0)[0]


def test_a_priority_the_bot_lowered_itself_excuses_nothing() -> None:
    host, said = stalls.judge(BEFORE, after(cpu=4.5, window=4.9), 5.0, lowered="task 12 runs at nice 19")
    assert not host
    assert "task 12 runs at nice 19: a wait it chose" in said


def test_no_samples_or_unknown_frozen_time_excuse_nothing() -> None:
    assert stalls.judge(None, after(cpu=4.5), 5.0) == (False, "")
    assert stalls.judge(BEFORE, None, 5.0) == (False, "")
    unknown = BEFORE._replace(frozen_us=-1)
    assert not stalls.judge(unknown, after(frozen=4.8, window=4.9)._replace(frozen_us=-1), 5.0)[0]


def test_counters_that_went_back_count_nothing() -> None:
    """A cgroup's counters never decrease; should a read come from another group, nothing is excused."""
    assert not stalls.judge(BEFORE, BEFORE._replace(cpu_us=0, frozen_us=0, at=104.9), 5.0)[0]


def test_a_host_stall_is_an_administrative_fault() -> None:
    assert HostStall("x").kind is FaultKind.ARENA and not FaultKind.ARENA.charged_to_bot


# -- live warnings ------------------------------------------------------------------------


def test_live_standings_warn_that_the_host_is_overloaded() -> None:
    out: list[str] = []
    live = LiveStandings(out.append, every=3600, tty=False)
    done = Finished("m-1", ("a", "b"), (1, 2))
    live.observe(dataclasses.replace(done, replays=("a",)))
    live.tick(1, 10)
    assert any("the host is overloaded: 1 matches replayed" in line and "a 1" in line for line in out)
    out.clear()
    for _ in range(8):
        live.observe(dataclasses.replace(done, replays=("b",)))
    live.tick(9, 10)
    assert out == []  # once, then again at each power of ten
    live.observe(dataclasses.replace(done, replays=("b",)))
    live.tick(10, 10)
    assert any("10 matches replayed" in line for line in out)


# -- real matches -------------------------------------------------------------------------


def entrants(*names: str) -> list[tuple[str, Any]]:
    return [(load_bot(BOTS / n).name, load_bot(BOTS / n)) for n in names]


def spec(i: int, entrants: tuple[int, ...] = (0, 1)) -> MatchSpec:
    rules = Rules.preset("classic", {"seating": "fixed", "first": "seat0"}).to_dict()
    return MatchSpec(
        index=i,
        match=f"m-{i:06d}",
        variant="classic",
        rules=rules,
        entrants=entrants,
        seed=derive_seed("stalls", i),
        dice_seed=derive_seed("stalls-dice", i),
        table=i,
        rotation=0,
    )


def hold_frozen(proc: BotProcess) -> None:
    """The referee's test hook: its next thaw writes the freeze word, so the bot
    stays frozen through its turn, past its cap (a stall the host made, not the bot)."""
    proc._thaw_word = proc._freeze_word


def measurable(proc: BotProcess) -> str | None:
    """Why stalls cannot be measured for this bot here, or None."""
    box = proc._box
    sample = box.cgroups.stall_sample() if box is not None else None
    if sample is None:
        return "no cgroup v2 group with pressure accounting for the bot (docs/sandbox.md, Host stalls)"
    if sample.frozen_us < 0:
        return "no frozen_usec (Linux 6.17) on the freezer used"
    return None


@pytest.mark.sandbox
def test_an_honest_bot_held_frozen_is_replayed_and_its_record_is_a_quiet_runs() -> None:
    bots = entrants("steady.py", "cpu_half.py")
    quiet = Worker(bots, LIMITS, CLOCK)
    try:
        reference = quiet.play(spec(2))
    finally:
        quiet.close()
    assert "line" in reference, reference.get("error")

    stalled = Worker(bots, LIMITS, CLOCK)
    try:
        warm = stalled.play(spec(1))  # both bots' processes now alive, to be reused for spec 2
        assert "line" in warm, warm.get("error")
        victim = stalled.procs[(1, 0)]
        why = measurable(victim)
        if why:
            pytest.skip(why)
        hold_frozen(victim)
        result = stalled.play(spec(2))
    finally:
        stalled.close()
    assert "line" in result, result.get("error")
    # (a busy machine may stall a play of its own: replayed as well)
    label, detail = result["replays"][0]
    assert label == "cpu_half" and "host stall, not the bot's fault: bot cpu_half was held up" in detail
    frozen = float(detail.split("frozen ")[1].split(" s")[0])
    assert frozen >= stalls.HOST_SHARE * 1.0, detail  # its cap: 200 ms x 5
    assert result["finished"].replays == tuple(label for label, _ in result["replays"])
    rec, ref = MatchRecord.from_json(result["line"]), MatchRecord.from_json(reference["line"])
    check(rec)
    assert rec.faults == () or all(f.kind is not FaultKind.ARENA for f in rec.faults)
    assert canonical(rec) == canonical(ref)


@pytest.mark.sandbox
def test_replays_stop_at_the_cap_and_the_record_keeps_an_arena_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every play of the match stalled: replayed MAX_REPLAYS_PER_MATCH times, then
    the record stands with an ``arena`` fault, charged to nobody."""
    monkeypatch.setattr(worker_mod, "MAX_REPLAYS_PER_MATCH", 1)
    bots = entrants("steady.py", "cpu_half.py")
    real = BotProcess.start

    def start_held(self: BotProcess) -> Any:
        ready = real(self)
        if self.spec.name == "cpu_half":
            hold_frozen(self)
        return ready

    monkeypatch.setattr(BotProcess, "start", start_held)
    w = Worker(bots, LIMITS, CLOCK)
    try:
        probe = BotProcess(bots[1][1], LIMITS, CLOCK)
        with probe:
            probe.start()
            why = measurable(probe)
        if why:
            pytest.skip(why)
        result = w.play(spec(3))
    finally:
        w.close()
    assert "line" in result, result.get("error")
    assert len(result["replays"]) == 1
    rec = MatchRecord.from_json(result["line"])
    assert [(rec.bots[f.seat], f.kind) for f in rec.faults] == [("cpu_half", FaultKind.ARENA)]
    assert w.replayed["cpu_half"] == 1


@pytest.mark.sandbox
def test_a_bot_that_makes_its_own_stall_when_losing_gets_its_own_timeout() -> None:
    """tests/bots/stall_maker.py: lowered priority, spinning threads and processes,
    I/O with its page cache dropped, a sleeping main thread, once it is behind."""
    bots = entrants("stall_maker.py", "steady.py")
    w = Worker(bots, LIMITS, CLOCK)
    try:
        results = [w.play(spec(10 + i)) for i in range(3)]
    finally:
        w.close()
    for result in results:
        assert "line" in result, result.get("error")
        rec = MatchRecord.from_json(result["line"])
        check(rec)
        # Its stall is its own: charged, whatever the host's load (a loaded machine
        # may stall a start-up or an earlier turn for real: replayed, and the
        # replay ends the same way).
        kinds = [(rec.bots[f.seat], f.kind) for f in rec.faults]
        assert kinds == [("stall_maker", FaultKind.TIMEOUT)], [f.detail for f in rec.faults]
        assert len(result["replays"]) < worker_mod.MAX_REPLAYS_PER_MATCH, result["replays"]


@pytest.mark.sandbox
def test_a_priority_the_bot_lowered_is_seen(tmp_path: Path) -> None:
    """What the attribution reads before it excuses a stall: a nice value the bot set itself."""
    bot = tmp_path / "niced.py"
    bot.write_text(
        "import os\nos.nice(7)\n\ndef act(turn):\n    return 'dudo' if turn.legal.dudo else next(turn.legal.bids())\n"
    )
    with BotProcess(load_bot(bot), LIMITS, CLOCK) as proc:
        proc.start()
        assert proc._box is not None
        if not proc._box.cgroups:
            pytest.skip("no cgroups for the bot here")
        lowered = proc._box.cgroups.lowered_priority()
    assert lowered is not None and f"nice {7 + os.getpriority(os.PRIO_PROCESS, 0)}" in lowered


# -- the cause: a run had one session's share of the machine ---------------------------


@pytest.mark.sandbox
def test_a_worker_gets_a_cpu_group_of_its_own_and_dead_runs_groups_are_swept() -> None:
    """Each worker (its bots inherit it) in a v1 cpu cgroup at a session's weight,
    instead of the whole run in its session's one share; one left by a worker
    killed outright is removed by the next run's sweep."""
    parent = cgroups.cpu_parent()
    if parent is None:
        pytest.skip("no v1 cpu hierarchy with autogroups here that we may create groups in")
    code = (
        "import os\nfrom arena.sandbox import cgroups\n"
        "path = cgroups.join_cpu_group()\nprint(path, flush=True)\n"
        "print(open('/proc/self/cgroup').read(), flush=True)\nos._exit(0)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    path, _, table = proc.stdout.partition("\n")
    assert path.startswith(os.path.join(parent, "arena-")) and path.endswith("-cpu"), proc.stdout + proc.stderr
    assert f":cpu:/{os.path.basename(path)}" in table
    with open(os.path.join(path, "cpu.shares")) as f:
        assert f.read().strip() == "1024"
    assert os.path.isdir(path)  # left behind: its worker died without leaving it
    cgroups.reap_stale((("cpu", parent),))
    assert not os.path.exists(path)


def test_a_worker_leaves_its_cpu_group_when_it_ends() -> None:
    if cgroups.cpu_parent() is None:
        pytest.skip("no v1 cpu hierarchy with autogroups here that we may create groups in")
    code = (
        "import os\nfrom arena.sandbox import cgroups\n"
        "path = cgroups.join_cpu_group()\ncgroups.leave_cpu_group(path)\n"
        "print(path, os.path.exists(path), open('/proc/self/cgroup').read().count('-cpu'))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    path, exists, count = proc.stdout.split()
    assert path.endswith("-cpu") and exists == "False" and count == "0", proc.stdout + proc.stderr
