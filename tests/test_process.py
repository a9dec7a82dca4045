"""BotProcess against real misbehaving bots (tests/bots/): each fault is
contained, surfaces as the right kind, leaves no process behind, and a
healthy bot keeps working next to it."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.botfile.spec import BotSpec, load_bot
from arena.engine.rules import Bid, Rules
from arena.errors import BotCrashed, BotFault, BotTimeout, ConfigError, HostStall, ProtocolError
from arena.match.process import BotProcess, TimeControl
from arena.protocol.parse import parse_reply
from arena.sandbox import SandboxLimits

pytestmark = pytest.mark.sandbox  # run as root and as an unprivileged user in CI

BOTS = Path(__file__).parent / "bots"

# A realistic turn message (~200 bytes), as docs/protocol.md shows it.
TURN: dict[str, Any] = {
    "type": "turn",
    "match": "m-000042",
    "round": 7,
    "seat": 2,
    "dice": [1, 3, 3, 5],
    "counts": [5, 0, 4, 3],
    "palifico": False,
    "history": [[1, 3, 4], [3, 4, 4]],
    "legal": {
        "dudo": True,
        "calza": True,
        "min_quantity": {"1": 2, "2": 5, "3": 5, "4": 5, "5": 4, "6": 4},
        "max_quantity": 12,
    },
    "time_ms": 300,
}
OPENING = {**TURN, "history": [], "legal": {**TURN["legal"], "dudo": False, "calza": False}}


def match_start(seed: int = 7) -> dict[str, Any]:
    return {
        "type": "match_start",
        "match": "m-000042",
        "seat": 2,
        "players": 4,
        "names": ["a", "b", "c", "d"],
        "rules": Rules().to_dict(),
        "seed": seed,
    }


FAST = TimeControl(budget_ms=300, wall_factor=3.0, hello_ms=10000, grace_ms=200)
LIMITS = SandboxLimits(memory_mb=128, output_bytes=1 << 20)


# Every bot this test process starts carries this marker in its environment
# (inherited by anything it forks), so leftovers are found even if they
# escaped the process tree, and other people's runs of the same bots on this
# machine are not mistaken for ours.
OWNER = f"ARENA_TEST_OWNER={os.getpid()}"


def leftovers(name: str) -> list[int]:
    """Live processes of bot ``name`` started by this test process."""
    marker = f"ARENA_BOT={name}\0".encode()
    owner = f"{OWNER}\0".encode()
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                env = f.read() + b"\0"
        except OSError:
            continue
        if (b"\0" + marker in env or env.startswith(marker)) and owner in env:
            try:
                with open(f"/proc/{d}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue  # a zombie is already dead, waiting to be reaped
            except OSError:
                continue
            found.append(int(d))
    return found


def spec(name: str, **env: str) -> BotSpec:
    s = load_bot(BOTS / name)
    key, _, value = OWNER.partition("=")
    return dataclasses.replace(s, env={**s.env, **env, key: value})


@pytest.fixture(scope="module")
def healthy() -> Iterator[BotProcess]:
    """A well-behaved bot that must keep working next to every misbehaving one."""
    bot = BotProcess(spec("steady.py"), LIMITS, FAST)
    bot.start()
    bot.notify(match_start())
    yield bot
    bot.close()


def run_fault(
    name: str,
    healthy: BotProcess,
    *,
    turns: int = 1,
    limits: SandboxLimits = LIMITS,
    time: TimeControl = FAST,
    **env: str,
) -> BotFault:
    """Start the bot, play up to ``turns`` turns, return the fault it raised;
    check it left nothing behind and the healthy bot still answers."""
    bot = BotProcess(spec(name, **env), limits, time)
    fault: BotFault | None = None
    try:
        bot.start()
        bot.notify(match_start())
        for _ in range(turns):
            bot.request(TURN)
    except BotFault as exc:
        fault = exc
    finally:
        bot.close()
    assert fault is not None, f"{name} raised no fault"
    assert not bot.alive
    assert leftovers(load_bot(BOTS / name).name) == []
    reply, _ = healthy.request(TURN)
    assert parse_reply(reply) is not None
    return fault


def test_healthy_bot_round_trip(healthy: BotProcess) -> None:
    reply, cpu = healthy.request(TURN)
    assert reply["action"] == "dudo" and cpu >= 0
    reply, _ = healthy.request(OPENING)
    assert parse_reply(reply) == Bid(2, 1)  # the first legal bid: two aces
    assert healthy.alive and healthy.pid


def test_ready_carries_name_and_version() -> None:
    with BotProcess(spec("steady.py"), LIMITS, FAST) as bot:
        assert bot.start() == {"type": "ready", "name": "steady", "version": "2.5"}


def test_fresh_bot_instance_per_match() -> None:
    with BotProcess(spec("steady.py"), LIMITS, FAST) as bot:
        bot.start()
        for _ in range(2):
            bot.notify(match_start())
            turns = [bot.request(TURN)[0]["turns"] for _ in range(3)]
            bot.notify({"type": "match_end", "match": "m-000042", "placements": [1, 2, 3, 4]})
            assert turns == [1, 2, 3]


def test_log_sees_every_line_both_ways() -> None:
    lines: list[str] = []
    with BotProcess(spec("steady.py"), LIMITS, FAST, log=lines.append) as bot:
        bot.start()
        bot.notify(match_start())
        bot.request(TURN)
    assert [line.split("] ", 1)[1][:1] for line in lines] == [">", "<", ">", ">", "<"]
    assert all(line.startswith(f"[{bot.pid}]") for line in lines)


def test_hang_is_a_timeout(healthy: BotProcess) -> None:
    fault = run_fault("hang.py", healthy)
    assert isinstance(fault, BotTimeout) and fault.kind == "timeout"
    assert "wall-clock cap" in fault.detail


def test_spin_is_a_cpu_timeout(healthy: BotProcess) -> None:
    # A wide wall cap: on a loaded machine a spinner may get an eighth of a core,
    # and the CPU budget, not the wall clock, is what this checks.
    fault = run_fault("spin.py", healthy, time=dataclasses.replace(FAST, wall_factor=20.0))
    assert isinstance(fault, BotTimeout)
    assert "CPU time" in fault.detail


def test_sleeping_past_the_wall_cap_is_a_timeout(healthy: BotProcess) -> None:
    fault = run_fault("sleeper.py", healthy)
    assert isinstance(fault, BotTimeout) and "sleeping" in fault.detail


def test_crash_mid_match_is_a_crash_with_the_traceback(healthy: BotProcess) -> None:
    fault = run_fault("crash_mid.py", healthy, turns=5)
    assert isinstance(fault, BotCrashed) and fault.kind == "crash"
    assert "status 1" in fault.detail and "deliberate failure on turn 3" in fault.detail


def test_garbage_is_malformed(healthy: BotProcess) -> None:
    fault = run_fault("garbage.yaml", healthy)
    assert isinstance(fault, ProtocolError) and fault.kind == "malformed"
    assert "I raise to five threes" in fault.detail


def test_line_after_ready_is_unasked(healthy: BotProcess) -> None:
    fault = run_fault("unasked.yaml", healthy)
    assert isinstance(fault, ProtocolError) and fault.kind == "unasked"
    assert "I am thinking" in fault.detail


def test_extra_line_after_a_reply_is_unasked(healthy: BotProcess) -> None:
    fault = run_fault("chatty.yaml", healthy, turns=2)
    assert fault.kind == "unasked" and "calza" in fault.detail


def test_stdout_flood_is_malformed(healthy: BotProcess) -> None:
    fault = run_fault("flood_stdout.yaml", healthy)
    assert fault.kind == "malformed" and "over 65536 bytes" in fault.detail


def test_stderr_flood_is_killed(healthy: BotProcess) -> None:
    fault = run_fault("flood_stderr.py", healthy)
    assert isinstance(fault, BotCrashed) and "output_bytes" in fault.detail


def test_bad_quantities() -> None:
    with BotProcess(spec("bad_quantity.py"), LIMITS, FAST) as bot:
        bot.start()
        bot.notify(match_start())
        for expected in ("true", "3.0", '"3"'):
            with pytest.raises(ProtocolError) as err:
                parse_reply(bot.request(TURN)[0])
            assert err.value.kind == "malformed" and f"got '{expected}'" in err.value.detail
        # Well-formed but out of range: parsed, for the referee to reject as illegal.
        assert parse_reply(bot.request(TURN)[0]) == Bid(10**100 - 1, 3)
        assert parse_reply(bot.request(TURN)[0]) == Bid(0, 3)
        assert parse_reply(bot.request(TURN)[0]) == Bid(-1, 3)
        assert bot.alive


def test_odd_return_values_become_reply_lines_and_the_bot_plays_on() -> None:
    """tests/bots/odd_replies.py: whatever act() returns, the host sends a line
    (a bid of ints-by-__index__ is a bid; the rest is malformed, quoted)."""
    expected = [
        ("malformed", "got '3.0'"),
        ("malformed", "got 'true'"),
        ("malformed", "got '\"3\"'"),
        (None, Bid(2, 2)),
        ("malformed", "repr() raised"),
        ("malformed", "repr() raised"),
        ("malformed", "{...}"),
        ("malformed", "'quantity' must be a JSON integer"),
        ("malformed", "dudo"),
        ("malformed", "(5, 3)"),
    ]
    with BotProcess(spec("odd_replies.py"), LIMITS, FAST) as bot:
        bot.start()
        bot.notify(match_start())
        for kind, what in expected:
            reply, _ = bot.request(TURN)
            if kind is None:
                assert parse_reply(reply) == what
                continue
            with pytest.raises(ProtocolError) as err:
                parse_reply(reply)
            assert err.value.kind == kind and str(what) in err.value.detail, err.value.detail
        assert bot.alive


def test_slow_start_is_a_timeout() -> None:
    bot = BotProcess(spec("slow_start.py"), LIMITS, dataclasses.replace(FAST, hello_ms=1000))
    with pytest.raises(BotTimeout) as err:
        bot.start()
    assert "hello_ms 1000" in err.value.detail
    assert not bot.alive and leftovers("slow_start") == []


def test_notify_never_blocks_on_a_bot_that_does_not_read() -> None:
    bot = BotProcess(spec("mute.yaml"), LIMITS, FAST)
    bot.start()
    big = {**match_start(), "padding": "x" * 60000}
    for _ in range(40):  # 2.4 MB: far more than a pipe holds
        bot.notify(big)
    with pytest.raises(BotTimeout) as err:
        bot.request(TURN)
    assert "stopped reading" in err.value.detail
    assert leftovers("mute") == []


def test_request_on_a_dead_bot_is_a_crash() -> None:
    bot = BotProcess(spec("steady.py"), LIMITS, FAST)
    bot.start()
    bot.close()
    bot.close()  # idempotent
    with pytest.raises(BotCrashed):
        bot.request(TURN)
    bot.notify(match_start())  # never raises


def test_start_failure_names_the_problem(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def act(turn:\n")
    bot = BotProcess(load_bot(tmp_path / "broken.py"), LIMITS, FAST)
    with pytest.raises(BotCrashed) as err:
        bot.start()
    assert "SyntaxError" in err.value.detail


def test_time_control_is_validated() -> None:
    with pytest.raises(ConfigError):
        TimeControl(budget_ms=0)
    with pytest.raises(ConfigError):
        TimeControl(wall_factor=0.5)


def test_half_budget_bots_oversubscribed_never_time_out() -> None:
    """Twice as many bots as cores (4 on this 2-core machine), each burning
    half its CPU budget every turn, all at once: no timeouts. (A machine
    loaded by others besides may hold one past its wall-clock cap: a host
    stall, the arena's fault, which is not a timeout; that bot's turns end there.)"""
    clock = TimeControl(budget_ms=200, wall_factor=5.0)
    turn = {**TURN, "time_ms": 200}
    faults: list[BaseException] = []
    used: list[float] = []
    stalled: list[int] = []

    def play() -> None:
        try:
            with BotProcess(spec("cpu_half.py"), LIMITS, clock) as bot:
                bot.start()
                bot.notify(match_start())
                for _ in range(8):
                    used.append(bot.request(turn)[1])
        except HostStall:
            stalled.append(1)
        except BaseException as exc:  # noqa: BLE001 - any failure fails the test
            faults.append(exc)

    bots = 2 * len(os.sched_getaffinity(0))
    threads = [threading.Thread(target=play) for _ in range(bots)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert faults == []
    # The CPU reported is the half budget burnt, give or take a scheduler tick
    # (the kernel accounts a running task's time at ticks and switches).
    assert len(used) >= 8 * (bots - len(stalled)) and all(0.05 < u < 0.2 for u in used), used
    assert len(stalled) < bots  # some bots played every turn


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores to show pinning")
def test_bot_inherits_the_callers_cpu_pinning() -> None:
    out: dict[str, Any] = {}
    core = max(os.sched_getaffinity(0))

    def pinned() -> None:
        os.sched_setaffinity(0, {core})  # this thread only: the bot is forked from it
        with BotProcess(spec("steady.py"), LIMITS, FAST) as bot:
            bot.start()
            bot.notify(match_start())
            out["reply"] = bot.request(TURN)[0]

    t = threading.Thread(target=pinned)
    t.start()
    t.join()
    assert out["reply"]["cpus"] == [core]


def test_output_limit_counts_per_match() -> None:
    """A long-lived process is not killed for ordinary output summed over many matches."""
    limits = dataclasses.replace(LIMITS, output_bytes=4000)
    with BotProcess(spec("steady.py"), limits, FAST) as bot:
        bot.start()
        for _ in range(5):
            bot.notify(match_start())
            for _ in range(20):  # ~60 bytes a reply: 1200 bytes a match, 6000 in all
                bot.request(TURN)
        assert bot.alive


def test_notify_to_a_bot_that_exited_never_raises_and_the_request_says_crash() -> None:
    bot = BotProcess(spec("quitter.yaml"), LIMITS, FAST)
    bot.start()
    bot.notify(match_start())
    for _ in range(200):  # far past the pipe's buffer: the writes meet a closed pipe
        bot.notify({"type": "round_end", "padding": "x" * 1000})
    with pytest.raises(BotCrashed) as err:
        bot.request(TURN)
    assert "status 3" in err.value.detail and "quitter: leaving" in err.value.detail
    assert not bot.alive and leftovers("quitter") == []
