"""The packed policy file (``.npz``): the same policy as the JSON file, in a
form a bot can read within a turn's budget.

Why a second form: a 2-dice policy that remembers four bids holds about 436,000
information sets and 1.3 million probabilities. As JSON (4.6 MB gzipped) it
takes about 1.3 s of CPU to parse into dictionaries, more than the 1 s a bot
has for the decision that first needs it. Packed, the keys are one sorted
array per round and a lookup is a binary search, so reading the file is
decompressing a few arrays and nothing is built per information set.

The file is a numpy ``.npz`` archive (a zip of ``.npy`` arrays):

- ``meta``: UTF-8 JSON, the policy file's head: everything of the JSON form
  but each round's ``infosets``, plus ``"packed": 1`` and ``"actions"``, the
  action texts the rounds index (``"1x2"``, ..., ``"dudo"``);
- per round ``"C-D"``: ``C-D.keys``, the information-set keys (ASCII bytes,
  sorted); ``C-D.start``, where each key's actions begin in the next two
  arrays (one more entry than keys); ``C-D.action``, indices into
  ``actions``; ``C-D.micro``, the probabilities in millionths.

The JSON form rounds probabilities to 6 digits, so millionths hold them
exactly, and ``micro / 1e6`` is the same float the JSON parser gives: the two
forms convert into each other without loss (:func:`pack`, :func:`unpack`),
and a bot drawing from either makes the same draw. The actions of a key keep
the JSON form's order, since a draw walks them in order.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np

from arena.solve.game import SolveError

__all__ = ["PackedRound", "pack", "unpack", "read_meta", "read_rounds", "write_packed"]

MICRO = 1_000_000


class PackedRound:
    """One round's information sets, looked up by binary search."""

    def __init__(
        self, keys: np.ndarray, start: np.ndarray, action: np.ndarray, micro: np.ndarray, actions: list[str]
    ) -> None:
        self.keys, self.start, self.action, self.micro, self.actions = keys, start, action, micro, actions

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, key: str) -> list[tuple[str, float]] | None:
        """The actions of information set ``key`` with their probabilities, in file order;
        None if the round does not hold it."""
        raw = key.encode("ascii", "replace")
        i = int(np.searchsorted(self.keys, raw))
        if i >= len(self.keys) or self.keys[i] != raw:
            return None
        lo, hi = int(self.start[i]), int(self.start[i + 1])
        return [(self.actions[int(a)], int(m) / MICRO) for a, m in zip(self.action[lo:hi], self.micro[lo:hi])]

    def items(self) -> list[tuple[str, dict[str, float]]]:
        """Every information set in key order, with its actions (the JSON form's infosets)."""
        acts = [self.actions[int(a)] for a in self.action]
        probs = (self.micro / MICRO).tolist()  # the same floats as int(m) / MICRO
        start = self.start.tolist()
        return [
            (k.decode(), dict(zip(acts[start[i] : start[i + 1]], probs[start[i] : start[i + 1]])))
            for i, k in enumerate(self.keys)
        ]


def pack(data: dict[str, Any]) -> dict[str, np.ndarray]:
    """The arrays of the packed form of policy ``data`` (the JSON form, as read)."""
    actions: list[str] = []
    index: dict[str, int] = {}
    arrays: dict[str, np.ndarray] = {}
    head = {k: v for k, v in data.items() if k != "rounds"}
    head["rounds"] = {}
    for name, entry in data.get("rounds", {}).items():
        head["rounds"][name] = {k: v for k, v in entry.items() if k != "infosets"}
        infos = entry.get("infosets", {})
        keys = sorted(infos, key=lambda k: k.encode())
        start = np.zeros(len(keys) + 1, dtype=np.int64)
        acts: list[int] = []
        micro: list[int] = []
        for i, key in enumerate(keys):
            for text, p in infos[key].items():
                m = round(float(p) * MICRO)
                if m / MICRO != float(p):
                    raise SolveError(
                        f"round {name}, {key}: probability {p} has more than 6 digits "
                        f"(the packed form holds millionths)"
                    )
                if text not in index:
                    index[text] = len(actions)
                    actions.append(text)
                acts.append(index[text])
                micro.append(m)
            start[i + 1] = len(acts)
        width = max((len(k.encode()) for k in keys), default=1)
        arrays[f"{name}.keys"] = np.array([k.encode() for k in keys], dtype=f"S{width}")
        arrays[f"{name}.start"] = start.astype(np.int32 if len(acts) < 2**31 else np.int64)
        arrays[f"{name}.action"] = np.array(acts, dtype=np.uint16)
        arrays[f"{name}.micro"] = np.array(micro, dtype=np.uint32)
    head["packed"] = 1
    head["actions"] = actions
    arrays["meta"] = np.frombuffer(json.dumps(head, separators=(",", ":")).encode(), dtype=np.uint8)
    return arrays


def write_packed(path: str | Path, data: dict[str, Any]) -> Path:
    """Write policy ``data`` packed, atomically. The zip entries carry a fixed date, so
    the same policy gives the same bytes (``np.savez_compressed`` stamps the time)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, arr in pack(data).items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, arr, allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())
    tmp.replace(path)
    return path


def _archive(source: str | Path | IO[bytes]) -> Any:
    try:
        return np.load(source, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise SolveError(f"{source}: not a readable packed policy ({exc})") from None


def read_meta(source: str | Path | IO[bytes]) -> dict[str, Any]:
    """The head of a packed policy (no round's arrays are decompressed)."""
    with _archive(source) as z:
        return _meta(z, source)


def _meta(z: Any, source: object) -> dict[str, Any]:
    try:
        meta = json.loads(bytes(z["meta"]).decode())
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        raise SolveError(f"{source}: packed policy without a readable head ({exc})") from None
    if not isinstance(meta, dict) or meta.get("packed") != 1:
        raise SolveError(f'{source}: not a packed policy (its head has no "packed": 1)')
    return meta


def read_rounds(source: str | Path | IO[bytes]) -> tuple[dict[str, Any], dict[str, PackedRound]]:
    """The head and every round of a packed policy."""
    with _archive(source) as z:
        meta = _meta(z, source)
        actions = list(meta["actions"])
        rounds = {}
        try:
            for name in meta.get("rounds", {}):
                rounds[name] = PackedRound(
                    z[f"{name}.keys"], z[f"{name}.start"], z[f"{name}.action"], z[f"{name}.micro"], actions
                )
        except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
            raise SolveError(f"{source}: round arrays missing or damaged ({exc})") from None
    return meta, rounds


def unpack(source: str | Path | IO[bytes]) -> dict[str, Any]:
    """The JSON form of a packed policy (what :func:`pack` was given)."""
    meta, rounds = read_rounds(source)
    data = {k: v for k, v in meta.items() if k not in ("packed", "actions", "rounds")}
    data["rounds"] = {}
    for name, entry in meta.get("rounds", {}).items():
        data["rounds"][name] = dict(entry, infosets=dict(rounds[name].items()))
    return data
