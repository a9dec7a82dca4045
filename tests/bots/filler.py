"""Fills every writable place it can find with up to 1.5 GB each, on its first
turn: /dev/shm, /tmp (its working folder and home) and /dev itself; writes
its running totals to stderr as it goes (a bot killed for memory still
leaves them in its stderr tail), then answers with them."""

import os
import sys

CHUNK = b"\xa5" * (16 << 20)
WANT = 1536 << 20


def fill(folder):
    written, error = 0, "none"
    try:
        with open(os.path.join(folder, "fill.bin"), "wb", buffering=0) as f:
            while written < WANT:
                written += f.write(CHUNK)
                print(f"filled {folder} {written}", file=sys.stderr, flush=True)
    except OSError as exc:
        error = exc.strerror or str(exc)
    print(f"stopped {folder} {written} {error}", file=sys.stderr, flush=True)
    return written, error


def act(turn):
    out = {}
    for folder in ("/dev/shm", "/tmp", "/dev"):
        out[folder] = fill(folder)
    return {"action": "dudo", "filled": out}
