"""The Ray backend: the same matches on a Ray cluster, records streamed back.

Each Ray actor is one worker (one CPU) holding an :class:`arena.running.worker.Worker`,
exactly like a process of the local pool: it keeps its bot processes alive
between matches and runs every bot in the sandbox of the node it lives on.

What travels: each bot exactly as :func:`arena.botfile.spec.bot_tree` lists it (its
own files and its data folder, symlinks as link text, never followed), written
to a private folder on the worker's node and loaded there, so the worker
re-hashes all of it (the data folder included) and refuses a bot whose hash
is not the one the run recorded; and, when joining an existing cluster, the
``arena`` package (Ray's ``py_modules``). Matches go out as plain
:class:`MatchSpec` data and come back as records; the driver writes the one
run folder, so resume works exactly as with the local backend.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.botfile.spec import BotSpec, bot_tree, load_bot
from arena.engine.records import MatchSpec
from arena.errors import RunError
from arena.match.process import TimeControl
from arena.running.worker import Drained, Entrants, PlayResult, Worker
from arena.sandbox import SandboxLimits

if TYPE_CHECKING:  # a type only: a worker never reads a config
    from arena.running.config import RunConfig

Packed = tuple[str, str, str, list[tuple[str, str, bool, bytes]]]  # label, file, sha256, entries


def pack_bots(entrants: Entrants) -> list[Packed]:
    """(label, bot file name, sha256, entries) for every entrant; an entry is
    (relative path, kind, executable, payload): a file's bytes, a link's text,
    nothing for a folder. No link is followed."""
    packed = []
    for label, spec in entrants:
        entries: list[tuple[str, str, bool, bytes]] = []
        for e in bot_tree(spec):
            if e.kind == "file":
                fd = os.open(spec.folder / e.rel, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as f:
                    payload = f.read()
            elif e.kind == "link":
                payload = os.fsencode(e.link)
            else:
                payload = b""
            entries.append((e.rel, e.kind, e.executable, payload))
        packed.append((label, spec.path.name, spec.sha256, entries))
    return packed


def unpack_bots(packed: Sequence[Packed], root: Path) -> list[tuple[str, BotSpec]]:
    """Write shipped bots under ``root`` (entries as they were: files, folders,
    links) and load them; each must hash to what the run recorded."""
    out = []
    for i, (label, name, sha, entries) in enumerate(packed):
        folder = root / f"bot{i}"
        folder.mkdir(parents=True)
        made = {str(folder)}
        for rel, kind, executable, payload in entries:
            parts = rel.split("/")
            if os.path.isabs(rel) or any(p in ("", ".", "..") for p in parts):
                raise RunError(f"bot {label}: shipped entry {rel!r} is not a path inside its folder")
            target = folder / rel
            if str(target.parent) not in made:  # never through a link, never outside
                raise RunError(f"bot {label}: shipped entry {rel!r} is not under a folder it shipped")
            if kind == "dir":
                os.mkdir(target, 0o755)
                made.add(str(target))
            elif kind == "link":
                os.symlink(os.fsdecode(payload), target)
            else:
                fd = os.open(
                    target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if executable else 0o644
                )
                with os.fdopen(fd, "wb") as f:
                    f.write(payload)
        spec = load_bot(folder / name)
        if spec.sha256 != sha:
            raise RunError(
                f"bot {label}: the shipped files hash to {spec.sha256[:12]}, not {sha[:12]} "
                f"(its files or data folder changed after the run recorded it)"
            )
        out.append((label, spec))
    return out


class _RayWorker:
    """The actor body (decorated with ``ray.remote`` at run time)."""

    def __init__(
        self, packed: Sequence[Packed], limits: SandboxLimits, time: TimeControl, fresh: bool, index: int
    ) -> None:
        import socket
        import tempfile

        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if cores:
            # Share one core with this worker's bots, as the local backend does.
            os.sched_setaffinity(0, {cores[index % len(cores)]})
        self._dir = tempfile.mkdtemp(prefix="arena-ray-bots-")
        self.worker = Worker(
            unpack_bots(packed, Path(self._dir)), limits, time, fresh, tag=f"{socket.gethostname()}:{os.getpid()}"
        )  # pids repeat across nodes

    def play(self, spec: MatchSpec) -> PlayResult:
        return self.worker.play(spec)

    def drain(self) -> Drained:
        return {"stderr": self.worker.drain(), "worker": self.worker.tag}

    def close(self) -> None:
        import shutil

        self.worker.close()
        shutil.rmtree(self._dir, ignore_errors=True)


class RayBackend:
    """Plays specs on ``workers`` Ray actors, at most two matches queued per actor."""

    def __init__(
        self,
        entrants: Entrants,
        limits: SandboxLimits,
        time: TimeControl,
        *,
        workers: int,
        address: str | None = None,
        fresh_process: bool = False,
    ) -> None:
        import ray

        self.ray = ray
        self.owns = False
        if not ray.is_initialized():
            if address:
                import arena

                # The source only: a node may run another Python than the one the
                # compiled modules were built for (arena/compiled.py runs the source there).
                env = {"py_modules": [str(Path(arena.__file__).resolve().parent)], "excludes": ["*.so"]}
                try:
                    ray.init(
                        address=address,
                        runtime_env=env,
                        include_dashboard=False,
                        configure_logging=False,
                        log_to_driver=False,
                    )
                except ConnectionError as exc:
                    raise RunError(f"cannot reach the Ray cluster at {address!r}: {exc}") from None
            else:
                ray.init(num_cpus=workers, include_dashboard=False, configure_logging=False, log_to_driver=False)
            self.owns = True
        actor: Any = ray.remote(num_cpus=1)(_RayWorker)
        packed = ray.put(pack_bots(entrants))  # once in the object store, whatever the number of actors
        self.actors: list[Any] = [actor.remote(packed, limits, time, fresh_process, k) for k in range(workers)]

    def run(self, specs: Sequence[MatchSpec]) -> Iterator[PlayResult]:
        ray = self.ray
        queue = iter(specs)
        pending: dict[Any, Any] = {}  # Ray's ObjectRef -> its actor handle (Ray ships no types for them)

        def submit(a: Any) -> None:
            spec = next(queue, None)
            if spec is not None:
                pending[a.play.remote(spec)] = a

        for a in self.actors:
            submit(a)
            submit(a)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                a = pending.pop(ref)
                try:
                    result: PlayResult = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise RunError(f"a Ray worker failed: {exc}") from None
                submit(a)
                yield result

    def drain(self) -> list[Drained]:
        """Each actor's last stderr, once all matches are played."""
        return list(self.ray.get([a.drain.remote() for a in self.actors], timeout=60))

    def close(self) -> None:
        self.terminate(wait=30.0)

    def terminate(self, wait: float = 5.0) -> None:
        """Close every actor's bots (so no sandbox outlives the run), then the actors."""
        try:
            self.ray.get([a.close.remote() for a in self.actors], timeout=wait)
        except Exception:  # noqa: BLE001 - best effort while stopping; the kill follows
            pass
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:  # noqa: BLE001 - best effort while stopping
                pass
        self.actors = []
        if self.owns and self.ray.is_initialized():
            self.ray.shutdown()


def make(config: RunConfig) -> RayBackend:
    """The backend registry's entry (arena.running.backends): Ray actors for ``config``,
    or why Ray cannot be used here."""
    try:
        import ray  # noqa: F401 - only whether it can be
    except ImportError as exc:
        raise RunError(f"backend ray needs Ray: pip install '.[ray]' (import failed: {exc})") from None
    return RayBackend(
        [(e.label, e.spec) for e in config.entrants],
        config.sandbox,
        config.time,
        workers=config.workers,
        address=config.address,
        fresh_process=config.fresh_process,
    )
