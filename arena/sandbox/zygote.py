"""A warm start for Python bots: the bot host's interpreter forked into a sandbox made for it.

Paired play needs a fresh process per play of a deal (no process may see two
plays of one deal: :mod:`arena.running.worker`), and most of a Python bot's
start is its interpreter importing the host, the SDK and numpy (docs/performance.md,
"Paired play"). The zygote pays that once per worker:

- :func:`serve` runs as ``python -S -P -m arena.sandbox.zygote`` beside the
  worker, outside any sandbox, with an environment of its own: it imports
  the bot host, the SDK and numpy (trusted code: no bot's code ever runs in
  it, and it is told nothing of a run, no seed, no deal: only which bot file
  to host, which descriptors are its pipes, and which sandbox to enter).
- For each bot process the referee starts a sandbox exactly as for any other
  bot (:class:`~arena.sandbox.Sandbox`: bubblewrap's namespaces, the file
  view, the masked /proc, the cgroups), whose only process is a holder
  (``sleep``) and sends the zygote a request over a unix socket, with the
  bot's three pipe ends attached (``SCM_RIGHTS``).
- The zygote forks a child, which takes the sandbox's rlimits (as
  :meth:`Sandbox.preexec` sets them), joins the holder's namespaces (user
  first, then mount, IPC, network, UTS and PID), and forks the bot's process
  inside the PID namespace. That process joins the bot's cgroups (the
  ``cgroup.procs`` files its parent opened on the host) and then the cgroup
  namespace, takes its pipes as 0, 1 and 2, closes every other descriptor, starts a session of its own,
  drops every capability (bounding set included, so an ``exec`` gains none),
  sets ``no_new_privs``, loads the same system-call filter as bubblewrap
  would, and only then imports the bot (:func:`arena.protocol.host.main`).

So nothing of a bot is ever in the zygote, and each copy is confined by the
kernel exactly as a freshly started bot is: its own sandbox's namespaces, its
own cgroup, its own private /tmp and /dev/shm, the filter. What it shares
with its siblings is what the zygote imported before any of them existed
(copy-on-write pages, private to each once written). The child that waits
outside the sandbox's PID namespace (invisible from inside) reports the bot's
exit status on the socket, so the referee's crash diagnosis is unchanged.

Only where it can hold (:func:`unavailable`): bubblewrap, the filter, and
root (joining a user namespace bubblewrap made needs the capabilities root
has over it); elsewhere bots start anew as before.
"""

from __future__ import annotations

import array
import ctypes
import json
import os
import resource
import signal
import socket
import struct
import sys
from typing import Any

__all__ = ["NAMESPACES", "ZYGOTE_ENV", "ForkedBot", "Zygote", "serve", "unavailable"]

# The order the child joins the holder's namespaces: its user namespace first
# (which gives it the capabilities to join the others, all owned by it), PID last
# (it applies to the next child only).
NAMESPACES: tuple[tuple[str, int], ...] = (
    ("user", 0x10000000),
    ("mnt", 0x00020000),
    ("ipc", 0x08000000),
    ("net", 0x40000000),
    ("uts", 0x04000000),
    ("cgroup", 0x02000000),
    ("pid", 0x20000000),
)

ZYGOTE_ENV = "ARENA_ZYGOTE"  # set in the zygote's environment, for its own checks

_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_MAX_REQUEST = 1 << 16


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    """Every capability gone: effective, permitted, inheritable, ambient, and
    the bounding set (without which root's next exec would get them back)."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _check(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two zeroed __user_cap_data_struct
    hbuf, dbuf = ctypes.create_string_buffer(header), ctypes.create_string_buffer(data)
    _check(libc.capset(hbuf, dbuf), "capset")


def _load_filter(libc: ctypes.CDLL, program: bytes) -> None:
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _Fprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def _bot(req: dict[str, object], fds: list[int], filt: bytes, libc: ctypes.CDLL) -> None:
    """In the bot's process, inside its sandbox: confine it as bubblewrap would, then host the bot. Never returns."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target, inheritable=True)
    os.closerange(3, 1 << 20)  # the zygote's socket, the pipes' old numbers: nothing but 0, 1, 2
    os.setsid()  # kill(0) reaches only the bot's own processes
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.chdir(str(req["cwd"]))
    for res, soft, hard in req["inside"]:  # type: ignore[attr-defined]
        resource.setrlimit(int(res), (int(soft), int(hard)))  # the user namespace's own quotas
    _drop_capabilities(libc)
    if filt:
        _load_filter(libc, filt)
    import random

    import numpy

    random.seed()  # as a fresh interpreter's: from the kernel, not the zygote's state shared by every copy
    numpy.random.seed()
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in req["env"].items()})  # type: ignore[attr-defined]
    os.environ["PWD"] = str(req["cwd"])  # as bubblewrap's --chdir leaves it
    sys.argv = ["arena.protocol.host", str(req["bot"])]
    from arena.protocol.host import main

    code = 1
    try:
        code = main([str(req["bot"])])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: the referee knows already
            pass
        os._exit(code)


def _child(req: dict[str, object], fds: list[int], filt: bytes, report: socket.socket) -> None:
    """Between the zygote and the bot: joins the sandbox, forks the bot into
    its PID namespace, waits for it and reports its status. Never returns."""
    status = 0x7F00  # "could not start": exit status 127
    try:
        libc = _libc()
        # Opened here, on the host; written by the bot's process itself, which
        # so joins its cgroups before anything else: this child stays out of
        # them (it only waits, and would be frozen and thawed at every turn).
        procs = [os.open(str(path), os.O_WRONLY) for path in req["procs"]]  # type: ignore[attr-defined]
        for res, soft, hard in req["outside"]:  # type: ignore[attr-defined]
            resource.setrlimit(int(res), (int(soft), int(hard)))
        holder = int(req["holder"])  # type: ignore[call-overload]
        nsfds = [(name, os.open(f"/proc/{holder}/ns/{name}", os.O_RDONLY)) for name, _ in NAMESPACES]
        cgroup_ns = -1
        for (name, fd), (_, flag) in zip(nsfds, NAMESPACES, strict=True):
            if name == "cgroup":
                cgroup_ns = fd  # joined by the bot's process once it is in its cgroups
                continue
            _check(libc.setns(fd, flag), f"setns {name}")
            os.close(fd)
        pid = os.fork()
        if pid == 0:
            try:
                report.close()
                for fd in procs:
                    os.write(fd, b"0")  # into the bot's cgroups ("0": the writer)
                _check(libc.setns(cgroup_ns, NAMESPACES[5][1]), "setns cgroup")
                _bot(req, fds, filt, libc)
            except BaseException as exc:  # noqa: BLE001 - said on the bot's stderr, then exit 127
                try:
                    os.write(fds[2], f"arena zygote: could not confine the bot: {exc}\n".encode())
                finally:
                    os._exit(127)
        for fd in [*fds, *procs, cgroup_ns]:
            os.close(fd)
        report.sendall(json.dumps({"id": req["id"], "pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
    except BaseException as exc:  # noqa: BLE001 - the referee sees the pipes close and this line
        try:
            os.write(fds[2], f"arena zygote: could not start the bot: {exc}\n".encode())
        except OSError:
            pass
    try:
        report.sendall(json.dumps({"id": req["id"], "status": status}).encode() + b"\n")
    except OSError:
        pass
    os._exit(0)


def _receive(sock: socket.socket) -> tuple[dict[str, object], list[int]] | None:
    fds = array.array("i")
    data, anc, _, _ = sock.recvmsg(_MAX_REQUEST, socket.CMSG_SPACE(3 * fds.itemsize))
    if not data:
        return None
    for level, kind, blob in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(blob[: len(blob) - (len(blob) % fds.itemsize)])
    return json.loads(data), list(fds)


def serve(sock: socket.socket) -> int:
    """The zygote's loop: one request (a datagram with three descriptors) per
    bot process, until the socket closes (the worker ended)."""
    # What every bot host imports, loaded once here: the interpreter's start
    # and these imports are what a fork saves (numpy for the bots that use it).
    import numpy  # noqa: F401
    import orjson  # noqa: F401

    import arena.protocol.host  # noqa: F401
    import arena.sdk  # noqa: F401
    import arena.sdk.policy  # noqa: F401
    from arena.sandbox import seccomp

    filt = seccomp.program() if os.environ.get(ZYGOTE_ENV) == "filter" else b""
    while True:
        try:
            got = _receive(sock)
        except OSError:
            got = None
        if got is None:  # the worker is done: wait for the children (their bots were killed first)
            try:
                while True:
                    os.wait()
            except ChildProcessError:
                return 0
        req, fds = got
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass  # children whose bots have ended
        except ChildProcessError:
            pass
        if os.fork() == 0:
            _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the zygote gone: so is the bot
            _child(req, fds, filt, sock)
        for fd in fds:
            os.close(fd)


# -- the referee's side -------------------------------------------------------------

_QUOTA_NAMES = {
    "sigpending": resource.RLIMIT_SIGPENDING,
    "msgqueue": resource.RLIMIT_MSGQUEUE,
    "memlock": resource.RLIMIT_MEMLOCK,
    "nproc": resource.RLIMIT_NPROC,
}


def unavailable() -> str | None:
    """Why bots cannot be forked from a zygote here (None: they can)."""
    from arena.sandbox import seccomp
    from arena.sandbox.probe import available

    if os.environ.get("ARENA_NO_ZYGOTE"):
        return "switched off (ARENA_NO_ZYGOTE is set)"
    if os.geteuid() != 0:
        return "not root (joining a sandbox's user namespace needs root's capabilities over it)"
    if not available().bwrap:
        return "no bubblewrap"
    why = seccomp.unavailable()
    if why:
        return why
    if not os.path.exists("/proc/self/ns/cgroup") or not hasattr(_libc(), "setns"):
        return "no setns(2)"
    return None


class Zygote:
    """The worker's handle on its zygote process: started on first use,
    asked for one bot process at a time, told of each one's end."""

    def __init__(self) -> None:
        self._proc: object | None = None
        self._sock: socket.socket | None = None
        self._serial = 0
        self.pids: dict[int, int] = {}  # request id -> the bot's pid (in its sandbox)
        self.status: dict[int, int] = {}  # request id -> the bot's wait status
        self.failed: str | None = None

    def _start(self) -> socket.socket:
        import subprocess

        from arena.sandbox import mounts, seccomp

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        exe, pkg, site = mounts.python_paths()
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "PYTHONPATH": f"{pkg}:{site}",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",  # as every bot host's (Sandbox.env)
            "PYTHONIOENCODING": "utf-8",
            ZYGOTE_ENV: "filter" if seccomp.unavailable() is None else "none",
        }
        if os.environ.get("ARENA_PURE_PYTHON"):
            env["ARENA_PURE_PYTHON"] = os.environ["ARENA_PURE_PYTHON"]
        parent = os.getpid()

        def die_with_worker() -> None:
            _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(1)

        self._proc = subprocess.Popen(
            [exe, "-S", "-P", "-m", "arena.sandbox.zygote", str(theirs.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            env=env,
            cwd="/",
            preexec_fn=die_with_worker,
        )
        theirs.close()
        self._sock = ours
        return ours

    def fork(
        self,
        holder: int,
        bot: str,
        env: dict[str, str],
        cwd: str,
        procs: list[str],
        outside: list[tuple[int, int, int]],
        inside: list[str],
        fds: tuple[int, int, int],
    ) -> int:
        """Ask for a bot process in the sandbox whose holder is ``holder`` (a host pid); its request id."""
        sock = self._sock or self._start()
        self._serial += 1
        quotas = []
        for opt in inside:
            name, _, value = opt.lstrip("-").partition("=")
            soft, _, hard = value.partition(":")
            quotas.append((_QUOTA_NAMES[name], int(soft), int(hard)))
        req = {
            "id": self._serial,
            "holder": holder,
            "bot": bot,
            "env": env,
            "cwd": cwd,
            "procs": procs,
            "outside": outside,
            "inside": quotas,
        }
        try:
            sock.sendmsg([json.dumps(req).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        except OSError:
            self.close()  # gone: the next request starts another
            raise
        return self._serial

    def collect(self, timeout: float = 0.0) -> None:
        """Read the zygote's reports (a bot's pid, a bot's end) that have arrived, waiting up to ``timeout`` for one."""
        import select

        sock = self._sock
        if sock is None:
            return
        wait = timeout
        while select.select([sock], [], [], wait)[0]:
            try:
                data = sock.recv(_MAX_REQUEST)
            except OSError:
                return
            if not data:
                return
            for line in data.splitlines():
                msg = json.loads(line)
                if "pid" in msg:
                    self.pids[int(msg["id"])] = int(msg["pid"])
                if "status" in msg:
                    self.status[int(msg["id"])] = int(msg["status"])
            wait = 0.0

    def close(self) -> None:
        """End the zygote: it waits for its children (so that their time is
        counted as its own) and exits; killed if it has not within a second."""
        import subprocess

        if self._sock is not None:
            self._sock.close()
            self._sock = None
        proc = self._proc
        if proc is not None:
            try:
                proc.wait(1.0)  # type: ignore[attr-defined]
            except subprocess.TimeoutExpired:
                proc.kill()  # type: ignore[attr-defined]
                proc.wait()  # type: ignore[attr-defined]
            self._proc = None


class ForkedBot:
    """A bot process forked by the zygote, as :class:`BotProcess` uses a
    ``Popen``: the pipes, ``pid`` (the sandbox's outer process, the holder's
    bubblewrap), ``poll``, ``wait`` and ``returncode`` (the bot's own exit
    status, as the zygote's child saw it)."""

    def __init__(self, holder: Any, zygote: Zygote, rid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.holder = holder
        self.zygote = zygote
        self.rid = rid
        self.pid: int = holder.pid
        self.stdin = os.fdopen(stdin, "wb", buffering=0)
        self.stdout = os.fdopen(stdout, "rb", buffering=0)
        self.stderr = os.fdopen(stderr, "rb", buffering=0)
        self.returncode: int | None = None

    def _status(self) -> int | None:
        status = self.zygote.status.get(self.rid)
        if status is not None:
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None:
            self.zygote.collect()
            self._status()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """The bot's exit status; without ``timeout``, only once its sandbox has
        been emptied (the referee's close): a report that has not come by then
        never will (the zygote's child was killed with it)."""
        import subprocess
        import time

        if timeout is None:
            self.zygote.collect(0.05)
            if self._status() is None:
                self.returncode = -signal.SIGKILL
            assert self.returncode is not None
            return self.returncode
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("bot", timeout)
            self.zygote.collect(min(left, 0.05))
        assert self.returncode is not None
        return self.returncode

    def release_holder(self) -> None:
        """End the holder (its stdin closed: its ``read`` returns), and with it
        the sandbox's init, which kills whatever is left in its PID namespace,
        as a started bot's sandbox ends when the bot does; briefly waited for."""
        import subprocess

        try:
            self.holder.stdin.close()
            self.holder.wait(0.1)
        except (OSError, subprocess.TimeoutExpired):
            pass  # the kill that follows ends it

    def reap(self) -> None:
        """The holder, once its sandbox has been emptied."""
        self.holder.wait()


def main() -> int:
    fd = int(sys.argv[1])
    sock = socket.socket(fileno=fd)
    return serve(sock)


if __name__ == "__main__":
    sys.exit(main())
