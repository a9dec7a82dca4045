"""Takes all it can of the per-user kernel quotas on its first turn and holds
on to it: queued signals (sigqueue to itself with the signal blocked) and
POSIX message-queue bytes (queues of ten 256-byte messages until mq_open fails).
Reports how much it got of each. A second copy started while the first holds
its share must get just as much (each sandbox counts its own)."""

import ctypes
import os
import signal

libc = ctypes.CDLL(None, use_errno=True)
try:
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
except OSError:
    rt = libc


class MqAttr(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_long),
        ("maxmsg", ctypes.c_long),
        ("msgsize", ctypes.c_long),
        ("curmsgs", ctypes.c_long),
        ("pad", ctypes.c_long * 4),
    ]


class SigVal(ctypes.Union):
    _fields_ = [("i", ctypes.c_int), ("p", ctypes.c_void_p)]


def act(turn):
    sig = signal.SIGRTMIN
    signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
    queued = 0
    while queued < 200_000 and libc.sigqueue(os.getpid(), sig, SigVal(0)) == 0:
        queued += 1
    queues = 0
    attr = MqAttr(0, 10, 256, 0)
    while queues < 10_000:
        q = rt.mq_open(f"/hog-{os.getpid()}-{queues}".encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(attr))
        if q < 0:
            break
        rt.mq_unlink(f"/hog-{os.getpid()}-{queues}".encode())  # the open descriptor keeps it (and its bytes)
        queues += 1
    return {"action": "dudo", "signals": queued, "queues": queues, "queue_error": os.strerror(ctypes.get_errno())}
