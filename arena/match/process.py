"""The referee's side of the player protocol: one sandboxed bot process.

:class:`BotProcess` spawns a bot in its :class:`~arena.sandbox.Sandbox`,
runs the hello/ready handshake under a start-up limit, sends requests and
waits for one reply line under the time control, delivers notifications
without ever blocking on a stuck bot, and closes (stdin closed, grace, then
every process in the sandbox killed). Every misbehaviour becomes a
:class:`~arena.errors.BotFault` whose detail tells the bot's author what
happened; after a fault the process is killed (the referee starts a new one
before the bot's next match).

Time control: the per-decision budget is the bot's CPU time (its cgroup's
CPU counter, or /proc without one), so a busy machine does not make a bot time
out; a wall-clock cap of ``budget x wall_factor`` catches bots that sleep or
block. The hot path is a handful of system calls (docs/performance.md).

No CPU outside one's own turn: a bot runs only while it is asked (start-up
and handshake, each turn, closing). It is frozen (its cgroup freezer) after
``ready`` and after each reply line is read, and thawed once a turn is
written into its pipe, or to close; notifications to a frozen bot wait in its pipe and
are read when it next runs. The CPU budget of a decision counts from the
bot's previous reply, so whatever it used in between (the tail of a freeze,
or everything, where the machine has no freezer) is charged to it.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mypy_extensions import mypyc_attr

from arena.botfile.spec import BotSpec, owns
from arena.botfile.supports import hello_version
from arena.errors import BotCrashed, BotFault, BotTimeout, ConfigError, HostStall, ProtocolError
from arena.match import diagnose, stalls
from arena.protocol.messages import Notification, ReadyMessage, TurnMessage, hello_message
from arena.protocol.parse import RawMessage, parse_ready
from arena.protocol.wire import MAX_LINE, clip, decode, encode
from arena.sandbox import Sandbox, SandboxLimits
from arena.sandbox.cgroups import StallSample
from arena.sandbox.mounts import WORK
from arena.sandbox.zygote import ForkedBot, Zygote

__all__ = ["TimeControl", "BotProcess"]

_READ = 1 << 16
_HEAD = 4096  # stderr bytes kept from the start, for start-up diagnostics
_MAX_PENDING = 1 << 20  # notification bytes queued for a bot that does not read
_IN = select.POLLIN | select.POLLPRI
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL
_DEFER = 1 << 15  # notification bytes held back for a frozen bot (less than a pipe holds)
# A reply slower than this (wall clock; less for a short cap) is a slow one: the stall counters are read
# then (arena.match.stalls), never on the per-decision path; what held the bot
# up before it is counted as its own time.
_SLOW = 0.1
# The last notification encoded, and its line. Compared by identity, holding the
# message itself, so an id is never reused under it; the referee never changes
# a message once built.
_last_encoded: tuple[object, bytes] = (None, b"")


@mypyc_attr(native_class=False)  # compiled, its config values keep their own errors, and it pickles
@dataclass(frozen=True)
class TimeControl:
    """How long a bot may take: CPU per decision, a wall cap, start-up, close."""

    budget_ms: int = 1000  # per decision, in the bot's CPU time (sent as time_ms)
    wall_factor: float = 5.0  # hard wall-clock cap = budget_ms * wall_factor
    hello_ms: int = 10000  # start-up limit for `ready` (wall clock)
    grace_ms: int = 500  # close: after closing stdin, wait this long, then kill

    def __post_init__(self) -> None:
        for key in ("budget_ms", "hello_ms", "grace_ms"):
            v = getattr(self, key)
            if type(v) is not int or v < (0 if key == "grace_ms" else 1):
                raise ConfigError(f"time control {key}={v!r} must be a positive integer (milliseconds)")
        if not isinstance(self.wall_factor, (int, float)) or self.wall_factor < 1:
            raise ConfigError(f"time control wall_factor={self.wall_factor!r} must be a number >= 1")


class _Gone(Exception):
    """The bot's pipe closed (it exited or closed stdin/stdout); ``how`` says which.

    Turned into a :class:`BotCrashed` by the request that meets it, which may
    wait a moment for the exit status; notify() only records it, never waits.
    """

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


def _signame(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


class BotProcess:
    """One bot process in its sandbox; reused for many matches, one at a time."""

    def __init__(
        self,
        spec: BotSpec,
        limits: SandboxLimits = SandboxLimits(),
        time: TimeControl = TimeControl(),
        *,
        log: Callable[[str], None] | None = None,
        zygote: Zygote | None = None,
    ) -> None:
        self.spec = spec
        self.limits = limits
        self.time = time
        self.pid: int | None = None
        self._log = log
        # Where a Python bot's process comes from: forked by the worker's zygote
        # into a sandbox made for it (arena.sandbox.zygote), or started anew.
        self._zygote = zygote if spec.kind == "python" and limits.mode != "off" else None
        self._proc: Any = None  # a subprocess.Popen, or a ForkedBot (the same calls)
        self._holder: subprocess.Popen[bytes] | None = None  # a zygote's sandbox, its bot not yet forked
        self._box: Sandbox | None = None
        self._in = self._out = self._err = -1
        self._poll = select.poll()
        self._buf = bytearray()  # stdout read but not yet consumed
        self._pending = bytearray()  # notifications not yet taken by the bot
        self._tail = bytearray()  # last stderr bytes
        self._err_total = 0  # stderr bytes read over the process's life
        self._err_taken = 0  # ... of which take_stderr() has handed out (or passed over)
        self._head = bytearray()  # first stderr bytes: a traceback's cause is at its top
        self._written = 0  # stdout + stderr bytes over the process's life
        self._fault: BotFault | None = None  # noticed by notify(), raised by the next request
        self._gone: str | None = None  # a closed pipe noticed by notify()
        self._closed = False
        self._released = False  # release() ran: the bot was thawed and its stdin closed
        self._mark = 0  # the bot's CPU time (ns) at its last reply: the next decision counts from here
        # Without a CPU cgroup, /proc's process tree is walked again at each reply
        # (tens of us), so that processes started around quick replies are charged
        # too; not for trusted bots (mode off).
        self._charge_tree = False
        self._started = False
        self._frozen = False  # frozen since its last reply (or ready): notifications wait in _pending
        self._freezable = False  # whether freeze() stops it (a cgroup freezer): known once it has started
        self._ncpu = max(1, len(os.sched_getaffinity(0)))
        # The sandbox's per-turn files (Sandbox.turn_files), written and read here
        # once the bot has started, until close(): -1 where there is none.
        self._freeze_fd = self._cpu_fd = -1
        self._freeze_word = self._thaw_word = b""
        self._cpu_v2 = False

    # -- life cycle -------------------------------------------------------------

    def launch(self) -> None:
        """Spawn the bot in its sandbox and return at once; :meth:`start` then runs
        the handshake. A caller that needs several bots launches them all first,
        so that they boot at the same time (a start is mostly the bot's own
        interpreter starting). ``hello_ms`` counts from :meth:`start`, not from
        here: the caller runs the handshakes one after another, and a bot
        slow to answer must not use up the time of the bots after it."""
        if self._proc is not None or self._holder is not None:
            raise BotCrashed(f"bot {self.spec.name}: launch() called twice; make a new BotProcess")
        box = self._box = Sandbox(self.spec, self.limits)
        box.holder = self._zygote is not None
        argv, env, cwd = box.command()
        self._charge_tree = self.limits.mode != "off" and not box.cgroups.has("cpu")  # (made by command())
        if self._zygote is not None and self._charge_tree:
            # No CPU cgroup: a bot's CPU is summed over the process tree under
            # its pid, and a forked bot's processes are not under one this
            # process started, so what they burn between turns would go
            # uncounted. Such a bot is started anew.
            box.cleanup()
            self._zygote = None
            box = self._box = Sandbox(self.spec, self.limits)
            argv, env, cwd = box.command()
        if self._zygote is not None:
            self._launch_forked(box, argv, env, cwd)
            return
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                bufsize=0,
                close_fds=True,
                pass_fds=box.pass_fds,
                start_new_session=box.new_session,
                process_group=None if box.new_session else 0,
                preexec_fn=box.preexec(),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            box.cleanup()
            raise BotCrashed(f"bot {self.spec.name}: could not start {clip(' '.join(argv[-3:]))}: {exc}") from None
        self._proc = proc
        self.pid = proc.pid
        box.started(proc.pid)
        assert proc.stdin and proc.stdout and proc.stderr
        self._in, self._out, self._err = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._poll.register(self._out, _IN)
        self._poll.register(self._err, _IN)

    def _launch_forked(self, box: Sandbox, argv: list[str], env: dict[str, str], cwd: str) -> None:
        """The sandbox with a holder as its only process; :meth:`boot` then has
        the bot forked into it by the zygote (arena.sandbox.zygote), confined as
        a started bot is."""
        try:
            holder = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,  # never written: the holder waits on it
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=cwd,
                close_fds=True,
                pass_fds=box.pass_fds,
                start_new_session=box.new_session,
                process_group=None if box.new_session else 0,
                preexec_fn=box.preexec(),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            box.cleanup()
            raise BotCrashed(f"bot {self.spec.name}: could not start its sandbox: {exc}") from None
        box.started(holder.pid)
        self._holder = holder
        self.pid = holder.pid

    def boot(self) -> None:
        """For a bot forked from the zygote: once its sandbox is up, ask for the
        fork (no-op otherwise, and after the first call). A caller that launched
        several bots boots them all before the first handshake, so that their
        sandboxes come up at the same time."""
        holder, zygote, box = self._holder, self._zygote, self._box
        if holder is None or zygote is None or box is None:
            return
        self._holder = None
        inside = box.holder_pid(holder.pid, self.time.hello_ms / 1000)
        if inside is None:
            holder.kill()
            holder.wait()
            raise BotCrashed(
                f"bot {self.spec.name}: its sandbox did not come up within hello_ms {self.time.hello_ms} ms"
            )
        pipes = [os.pipe() for _ in range(3)]
        theirs = (pipes[0][0], pipes[1][1], pipes[2][1])
        try:
            rid = zygote.fork(
                inside,
                str(self.spec.path),
                box.env(WORK),
                WORK,
                box.cgroups.procs_files(),
                box.rlimits(),
                box.quotas_inside(),
                theirs,
            )
        except OSError:
            # The zygote is gone (it is started again for the next bot): this
            # one starts anew, in a sandbox of its own as ever; not the bot's fault.
            for a, b in pipes:
                os.close(a)
                os.close(b)
            box.kill_all()
            holder.wait()
            box.cleanup()
            self._box, self._zygote, self.pid = None, None, None
            self.launch()
            return
        for fd in theirs:  # the bot's ends: the zygote has its own copies
            os.close(fd)
        self._proc = ForkedBot(holder, zygote, rid, pipes[0][1], pipes[1][0], pipes[2][0])
        self._in, self._out, self._err = pipes[0][1], pipes[1][0], pipes[2][0]
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._poll.register(self._out, _IN)
        self._poll.register(self._err, _IN)

    def start(self) -> ReadyMessage:
        """Spawn the bot (unless :meth:`launch` did), send hello, wait for ready
        (``hello_ms``); return ready, parsed."""
        if self._started:
            raise BotCrashed(f"bot {self.spec.name}: start() called twice; make a new BotProcess")
        self._started = True
        if self._proc is None and self._holder is None:
            self.launch()
        try:
            self.boot()
        except BotFault:
            self.close()
            raise
        box = self._box
        assert box is not None
        deadline = _time.monotonic() + self.time.hello_ms / 1000
        base = box.cgroups.stall_sample()  # start-up is not the per-decision path
        try:
            hello = encode(hello_message(hello_version(self.spec.supports, self.spec.kind == "python")))
            if self._log:
                self._log(f"[{self.pid}] > {hello[:-1].decode()}")
            self._send(hello, deadline, "hello")
            line = self._read_line(deadline, None, 0, "ready", "hello_ms", self.time.hello_ms, base)
            try:
                msg = decode(line)
            except ProtocolError as exc:
                raise ProtocolError(
                    f"bot {self.spec.name} answered hello with a line that is {exc.detail}; "
                    f'expected {{"type": "ready", "name": ...}}' + self._why(line),
                    "malformed",
                ) from None
            try:
                ready = parse_ready(msg)
            except ProtocolError as exc:
                raise ProtocolError(
                    f"bot {self.spec.name} answered hello wrongly: {exc.detail}" + self._why(line), "malformed"
                ) from None
        except _Gone as gone:
            crash = self._crashed(gone.how + " before answering hello", starting=True)
            self.close()
            raise crash from None
        except BotFault:
            self.close()
            raise
        # Start-up is over: from now on the bot runs only while it is asked.
        self._mark = box.cpu_ns(refresh=self._charge_tree)
        box.settle()
        self._frozen = self._freezable = box.can_freeze  # for the bot's life: its cgroup's freezer stays
        files = box.turn_files()
        self._freeze_fd, self._freeze_word, self._thaw_word = files.freeze_fd, files.freeze, files.thaw
        self._cpu_fd, self._cpu_v2 = files.cpu_fd, files.cpu_v2
        return ready

    def release(self) -> None:
        """Begin a clean :meth:`close` without waiting for it: thaw the bot,
        hand it what is queued, close its stdin. Whoever closes several bots
        releases them all first, so that they end at the same time (an
        interpreter's exit takes milliseconds), then closes each."""
        if self._closed or self._released:
            return
        self._released = True
        box = self._box
        if box is not None:
            box.thaw()  # closing is the bot's to run: it reads what is queued, then EOF
            self._frozen = False
            try:
                self._flush()  # what was held back while it was frozen (a match_end, say)
            except _Gone:
                pass
        if self._proc is not None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass

    def close(self, grace: bool = True) -> None:
        """Thaw, close stdin, wait ``grace_ms`` (unless ``grace`` is false: a
        faulted bot), kill everything in the sandbox, clean up. Idempotent."""
        if self._closed:
            return
        if grace:
            self.release()
        self._closed = True
        self._freeze_fd = self._cpu_fd = -1  # the sandbox closes them in cleanup(); numbers get reused
        proc, box = self._proc, self._box
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            if grace:
                try:
                    proc.wait(self.time.grace_ms / 1000)
                except subprocess.TimeoutExpired:
                    pass
            if isinstance(proc, ForkedBot):
                proc.release_holder()  # the sandbox ends as a started one does, most often before the kill
        if box is not None:
            box.kill_all()  # first: without cgroups it finds the tree from the live top process
        if self._holder is not None:  # a zygote's sandbox whose bot was never forked
            self._holder.kill()
            self._holder.wait()
            self._holder = None
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if proc is not None:
            proc.wait()
            if isinstance(proc, ForkedBot):
                proc.reap()
            self._drain_err()  # what it wrote last often says why it failed
            self._err = -1
            for f in (proc.stdout, proc.stderr):
                try:
                    f.close()
                except OSError:
                    pass
        if box is not None:
            box.cleanup()

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return (
            self._proc is not None
            and not self._closed
            and self._fault is None
            and self._gone is None
            and self._proc.poll() is None
        )

    def stderr_tail(self) -> str:
        """The last ``stderr_tail`` bytes the bot wrote to stderr."""
        try:
            self._drain_err()
        except BotFault as exc:  # over output_bytes: raised by the next request, not here
            self._fault = self._fault or exc
        return self._tail.decode("utf-8", "replace")

    def take_stderr(self) -> tuple[bytes, int]:
        """What the bot wrote to stderr since the last take, bounded by the
        tail (``stderr_tail`` bytes, the latest kept), and how many bytes
        written before those were not kept. Works after :meth:`close` too."""
        try:
            self._drain_err()
        except BotFault as exc:  # over output_bytes: raised by the next request, not here
            self._fault = self._fault or exc
        new = self._err_total - self._err_taken
        keep = min(new, len(self._tail))
        self._err_taken = self._err_total
        return bytes(self._tail[len(self._tail) - keep :]) if keep else b"", new - keep

    # -- messages -----------------------------------------------------------

    def notify(self, msg: Notification) -> None:
        """Send a message that expects no reply. Never raises, never blocks:
        a dead, stuck or chatty bot is found out by the next request."""
        if self._closed or self._fault is not None or self._proc is None:
            return
        global _last_encoded
        last, data = _last_encoded
        if msg is not last:  # the referee tells every seat the same round_end: encoded once
            data = encode(msg)
            _last_encoded = (msg, data)
        if self._log:
            self._log(f"[{self.pid}] > {data[:-1].decode()}")
        if msg.get("type") == "match_start":
            # output_bytes counts per match: a process reused for thousands of
            # matches would reach any lifetime cap by ordinary logging alone.
            self._written = 0
        self._pending += data
        if self._frozen and len(self._pending) <= _DEFER:
            # A frozen bot cannot read it, nor write: the message waits here and
            # goes with the next turn, in the same write (one system call for
            # both, and the bot reads both at once when it is thawed).
            return
        try:
            self._flush()
            for fd, ev in self._poll.poll(0):
                if fd == self._err:
                    self._drain_err()
                elif fd == self._out and ev & _IN:
                    self._fill()  # output now is output nobody asked for
                    if self._buf:
                        self._fault = ProtocolError(
                            f"bot {self.spec.name} wrote without being asked (before {msg.get('type')}): "
                            f"{clip(self._buf)}",
                            "unasked",
                        )
            if len(self._pending) > _MAX_PENDING:
                self._fault = BotTimeout(
                    f"bot {self.spec.name} stopped reading its input ({len(self._pending)} bytes waiting)"
                )
        except BotFault as exc:
            self._fault = exc
        except _Gone as gone:
            self._gone = gone.how

    def request(self, msg: TurnMessage) -> tuple[RawMessage, float]:
        """Send ``msg`` (a ``turn``), wait for one reply line; return it and the
        CPU seconds the bot used for it. Raises BotTimeout, BotCrashed, ProtocolError."""
        try:
            if self._fault is not None:
                raise self._fault
            if self._gone is not None:
                raise _Gone(self._gone)
            if self._proc is None or self._closed:
                raise BotCrashed(f"bot {self.spec.name} is not running (start() it first)")
            box = self._box
            assert box is not None
            # Output nobody asked for. A bot frozen since its last reply cannot have
            # written since (what came with the reply is in the buffer), so the
            # poll is spared on the per-decision path.
            if self._buf or (not self._frozen and self._poll.poll(0)):
                self._fill()
                if self._buf:
                    raise ProtocolError(f"bot {self.spec.name} wrote without being asked: {clip(self._buf)}", "unasked")
            budget = msg.get("time_ms", self.time.budget_ms)
            if type(budget) is not int or budget <= 0:
                budget = self.time.budget_ms
            data = encode(msg)
            if self._log:
                self._log(f"[{self.pid}] > {data[:-1].decode()}")
            cpu0 = self._mark
            deadline = _time.monotonic() + budget * self.time.wall_factor / 1000
            if self._pending:  # notifications held back while the bot was frozen go first
                data = bytes(self._pending) + data
                self._pending.clear()
            # One write, kept short: it is the per-decision path.
            try:
                n = os.write(self._in, data)
            except BlockingIOError:
                n = 0
            except OSError:
                raise _Gone("stopped reading its input (closed stdin or exited)") from None
            # Thawed after the write: it wakes once, to a turn already in its pipe
            # (thawed before, it would wake to an empty pipe and sleep again).
            # Sandbox.thaw, cpu_ns and freeze, done here on their files: each is
            # two Python calls otherwise, per turn.
            if self._freeze_fd >= 0:
                try:
                    os.pwrite(self._freeze_fd, self._thaw_word, 0)
                except OSError:
                    pass  # its cgroup removed under us: nothing left to thaw
            self._frozen = False
            if n < len(data):  # the pipe is full: the rest as the bot reads, under the deadline
                self._send(data[n:], deadline, str(msg.get("type", "request")))
            line = self._read_line(deadline, budget * 1_000_000, cpu0, "reply", "time_ms", budget, None)
            if self._cpu_fd >= 0:
                stat = os.pread(self._cpu_fd, 64, 0)
                # v2 cpu.stat starts with b"usage_usec N" (11 bytes before N); v1 cpuacct.usage is ns
                now = int(stat[11 : stat.index(b"\n")]) * 1000 if self._cpu_v2 else int(stat)
            else:
                now = box.cpu_ns(refresh=self._charge_tree)
            if self._freeze_fd >= 0:
                try:
                    os.pwrite(self._freeze_fd, self._freeze_word, 0)
                except OSError:
                    pass
            self._frozen = self._freezable
            self._mark = now
            used = now - cpu0
            if used > budget * 1_000_000:
                raise self._timeout(
                    f"bot {self.spec.name} replied after {used / 1e6:.0f} ms of CPU time "
                    f"(counted from its previous reply), over its budget of {budget} ms"
                )
            try:
                return decode(line), used / 1e9
            except ProtocolError as exc:
                raise ProtocolError(f"bot {self.spec.name} replied with a line that is {exc.detail}") from None
        except _Gone as gone:
            crash = self._crashed(gone.how)
            self._kill()
            raise crash from None
        except BotFault:
            self._kill()
            raise

    # -- internals ----------------------------------------------------------------

    def _kill(self) -> None:
        """A faulted bot is not reused: kill it now (its late output would only
        confuse the next request), without the grace of a clean close, which
        would be CPU outside anyone's turn for a bot that may be hostile."""
        self.close(grace=False)

    def _timeout(self, detail: str) -> BotFault:
        """A bot out of time; or, if it is at its memory limit, one killed by it.

        A bot that allocates without bound spends its last moments at the
        limit while the kernel reclaims (evicting and re-reading its own code
        pages), CPU charged to the bot: whether it runs out of budget first or
        the OOM killer ends it is a race, so both are reported as the crash
        the memory limit is.
        """
        box = self._box
        if box is not None and box.at_memory_limit():
            return BotCrashed(
                f"bot {self.spec.name} was killed: it hit the memory limit of "
                f"{self.limits.memory_mb} MB (sandbox limit memory_mb) and ran out of time "
                f"there, while the kernel reclaimed memory to keep it under the limit"
            )
        return BotTimeout(detail)

    def _flush(self) -> None:
        """Write what the bot's stdin pipe takes now."""
        while self._pending:
            try:
                n = os.write(self._in, self._pending)
            except BlockingIOError:
                return
            except OSError:
                raise _Gone("stopped reading its input (closed stdin or exited)") from None
            del self._pending[:n]

    def _send(self, data: bytes, deadline: float, what: str) -> None:
        self._pending += data
        self._flush()
        if not self._pending:
            return
        # The pipe is full: the bot is not reading. Wait for room, under the deadline.
        self._poll.register(self._in, select.POLLOUT)
        try:
            while self._pending:
                left = deadline - _time.monotonic()
                if left <= 0:
                    raise BotTimeout(
                        f"bot {self.spec.name} did not read its {what} message (its input pipe stayed full)"
                    )
                for fd, _ev in self._poll.poll(max(1, int(left * 1000))):
                    if fd == self._in:
                        self._flush()
                    elif fd == self._err:
                        self._drain_err()
                    elif fd == self._out:
                        self._fill()
        finally:
            self._poll.unregister(self._in)

    def _fill(self) -> None:
        """Read what stdout has now into the buffer; EOF is a crash."""
        try:
            data = os.read(self._out, _READ)
        except BlockingIOError:
            return
        if not data:
            raise _Gone("exited")
        self._count(len(data))
        self._buf += data

    def _drain_err(self) -> None:
        if self._err < 0:
            return
        while True:
            try:
                data = os.read(self._err, _READ)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            if len(self._head) < _HEAD:
                self._head += data[: _HEAD - len(self._head)]
            self._err_total += len(data)
            self._tail += data
            if len(self._tail) > self.limits.stderr_tail:
                del self._tail[: len(self._tail) - self.limits.stderr_tail]
            try:
                self._count(len(data))
            except BotCrashed:
                if self._closed:
                    return
                raise

    def _count(self, n: int) -> None:
        self._written += n
        if self._written > self.limits.output_bytes:
            raise BotCrashed(
                f"bot {self.spec.name} was killed: it wrote more than "
                f"{self.limits.output_bytes} bytes to stdout and stderr "
                f"(sandbox limit output_bytes)"
            )

    def _read_line(
        self,
        deadline: float,
        cpu_budget_ns: int | None,
        cpu0: int,
        what: str,
        limit_name: str,
        limit_ms: int,
        base: StallSample | None,
    ) -> bytes:
        """One line from the bot by ``deadline``, within ``cpu_budget_ns`` of CPU
        counted from ``cpu0`` (``None``: start-up, wall clock only). ``base``: the
        stall counters at the start of the wait, or ``None`` to read them once the
        wait is slow (:data:`_SLOW`)."""
        box = self._box
        assert box is not None
        buf = self._buf
        poll = self._poll.poll
        out = self._out
        first = True
        used = 0
        # When a wait becomes slow (the stall counters read): 100 ms, or a
        # twentieth of a short cap, so that little of it goes unmeasured.
        slow = min(_SLOW, limit_ms * self.time.wall_factor / 20000)
        if not buf and cpu_budget_ns is not None:
            # Fast path (per decision). A bot shares its referee's core and was
            # thawed just now, so it has often run and replied already (7 turns
            # in 10 in the league benchmark): then one read, and no poll. Its
            # stderr is drained by the next poll.
            self._fill()
            if not buf:  # not yet: one poll, then the read
                left = deadline - _time.monotonic()
                events = poll(max(1, int(min(left, cpu_budget_ns / 1e9 / self._ncpu, slow) * 1000) + 1))
                first = False
                for fd, _ev in events:
                    if fd == out:
                        self._fill()
                    elif fd == self._err:
                        self._drain_err()
            if buf and buf.find(b"\n") == len(buf) - 1:  # exactly the reply line
                line = bytes(buf[:-1])
                buf.clear()
                if self._log:
                    self._log(f"[{self.pid}] < {line.decode('utf-8', 'replace')}")
                return line
        while True:
            i = buf.find(b"\n")
            if i >= 0:
                line = bytes(buf[:i])
                del buf[: i + 1]
                if self._log:
                    self._log(f"[{self.pid}] < {line.decode('utf-8', 'replace')}")
                return line
            if len(buf) > MAX_LINE:
                raise ProtocolError(f"bot {self.spec.name} wrote a line over {MAX_LINE} bytes: {clip(buf)}")
            now = _time.monotonic()
            left = deadline - now
            wait = left
            if base is None and not first:  # a slow wait: from here on, what holds the bot up is measured
                base = box.cgroups.stall_sample()
            if cpu_budget_ns is not None and first:
                # Just sent: nothing used yet worth a read; the budget cannot
                # run out before this, even on every core the bot may use.
                wait = min(left, cpu_budget_ns / 1e9 / self._ncpu, slow)
                first = False
            elif cpu_budget_ns is not None:
                used = box.cpu_ns(refresh=True) - cpu0
                if used > cpu_budget_ns:
                    raise self._timeout(
                        f"bot {self.spec.name} used {used / 1e6:.0f} ms of CPU time without "
                        f"a {what}, over its budget of {limit_ms} ms ({limit_name})"
                    )
                # The earliest the CPU budget could run out, on every core it may use.
                wait = min(left, max(0.001, (cpu_budget_ns - used) / 1e9 / self._ncpu))
            if left <= 0:
                if box.pids_capped():
                    raise BotTimeout(
                        f"bot {self.spec.name} sent no {what} in time: "
                        + diagnose.process_limit(self.limits.processes, self.limits.max_processes)
                    )
                limit_s = limit_ms / 1000 * (1 if cpu_budget_ns is None else self.time.wall_factor)
                host, held = self._stalled(base, limit_s)
                if cpu_budget_ns is None:
                    if host:
                        raise HostStall(
                            f"host stall, not the bot's fault: bot {self.spec.name} was held up past "
                            f"{limit_name} {limit_ms} ms before its {what}{held}"
                        )
                    raise self._timeout(
                        f"bot {self.spec.name} sent no {what} within {limit_name} "
                        f"{limit_ms} ms of wall-clock time (is it slow to start, or not "
                        f"flushing its output?){held}"
                    )
                cap = (
                    f"the wall-clock cap of {limit_s:g} s ({limit_name} {limit_ms} ms x wall_factor "
                    f"{self.time.wall_factor:g})"
                )
                if host:
                    raise HostStall(
                        f"host stall, not the bot's fault: bot {self.spec.name} was held up past "
                        f"{cap}, {used / 1e6:.0f} ms of CPU used{held}"
                    )
                raise self._timeout(
                    f"bot {self.spec.name} sent no {what} within {cap} after using "
                    f"{used / 1e6:.0f} ms of CPU: is it sleeping, blocked, or not flushing "
                    f"its output?{held}"
                )
            for fd, _ev in poll(max(1, int(wait * 1000) + 1)):
                if fd == out:
                    self._fill()
                elif fd == self._err:
                    self._drain_err()

    def _stalled(self, base: StallSample | None, limit_s: float) -> tuple[bool, str]:
        """Whether the host held the bot up for most of a limit just reached
        (:func:`arena.match.stalls.judge`), and what held it up, as a clause."""
        box = self._box
        if box is None or base is None:
            return False, ""
        after = box.cgroups.stall_sample()
        if after is None:
            return False, ""
        host, held = stalls.judge(base, after, limit_s)
        if host:  # only now: the bot's priorities are read only for a stall that would be excused
            lowered = box.cgroups.lowered_priority()
            if lowered:
                host, held = stalls.judge(base, after, limit_s, lowered)
        return host, held

    def _causes(self, extra: str = "") -> list[str]:
        """The causes the bot's stderr (and ``extra``, e.g. its stdout) names (arena.match.diagnose)."""
        box = self._box
        text = self._head.decode("utf-8", "replace") + "\n" + self._tail.decode("utf-8", "replace") + "\n" + extra
        return diagnose.causes(
            text,
            own=owns(self.spec),
            program=(self.spec.command or ("",))[0],
            processes=self.limits.processes,
            max_processes=self.limits.max_processes,
            memory_mb=self.limits.memory_mb,
            pids_capped=box is not None and box.pids_capped(),
        )

    def _why(self, line: bytes) -> str:
        """What to add to a wrong reply to hello: the causes, and the bot's stderr."""
        self._drain_err()
        text = line.decode("utf-8", "replace")
        hints = self._causes(text) + diagnose.stdout_hints(line, (self.spec.command or ("",))[0])
        err = self._stderr_excerpt()
        return ("; " + "; ".join(hints) if hints else "") + (f"; stderr: {err}" if err else "")

    def _stderr_excerpt(self) -> str:
        tail = self._tail.decode("utf-8", "replace")
        return diagnose.excerpt(self._head.decode("utf-8", "replace"), tail, self._err_total <= len(self._tail))

    def _crashed(self, how: str, starting: bool = False) -> BotCrashed:
        proc, box = self._proc, self._box
        status = ""
        if proc is not None:
            try:
                rc = proc.wait(1.0)
                status = f" with status {rc}" if rc >= 0 else f" killed by {_signame(-rc)}"
                if rc > 128 and box is not None and box.mech.bwrap:
                    status += f" ({_signame(rc - 128)})"  # bwrap passes a signal on as 128+n
            except subprocess.TimeoutExpired:
                status = " (still running)"
        why = []
        if box is not None and box.oom_killed():
            why.append(f"it hit the memory limit of {self.limits.memory_mb} MB")
        self._drain_err()
        why += self._causes()
        if starting:  # the cause sits at the top of a traceback: its first lines and its last
            err = self._stderr_excerpt()
            shown = f"; stderr: {err}" if err else "; it wrote nothing on stderr"
        else:
            tail = self._tail.decode("utf-8", "replace").strip().splitlines()[-3:]
            shown = f"; stderr ends: {clip(' | '.join(tail), 300)}" if tail else ""
        return BotCrashed(f"bot {self.spec.name} {how}{status}" + (f"; {'; '.join(why)}" if why else "") + shown)
