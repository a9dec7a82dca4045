"""Tries to put a key (described by $ARENA_TEST_KEY) into every keyring it can
name (thread, process, session, user, user-session), to read its user keyring's
id, and to read /proc/keys; reports each result."""

import ctypes
import errno
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_add_key, SYS_keyctl = 248, 250
RINGS = {"thread": -1, "process": -2, "session": -3, "user": -4, "user-session": -5}


def result(r):
    return errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "ok"


def act(turn):
    desc = os.environ["ARENA_TEST_KEY"].encode()
    added = {}
    for name, ring in RINGS.items():
        r = libc.syscall(SYS_add_key, b"user", desc, b"payload", ctypes.c_size_t(7), ctypes.c_long(ring))
        added[name] = result(r)
    keyctl = result(libc.syscall(SYS_keyctl, 0, ctypes.c_long(-4), 0))  # KEYCTL_GET_KEYRING_ID of @u
    try:
        with open("/proc/keys") as f:
            keys = f.read()
        proc_keys = keys if keys else "empty"
    except OSError:
        proc_keys = "unreadable"
    return {"action": "dudo", "add_key": added, "keyctl": keyctl, "proc_keys": proc_keys}
