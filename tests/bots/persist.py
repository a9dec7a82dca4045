"""Tries to leave something behind for its next process: files in every
writable place (/tmp, /dev/shm, $HOME, /var/tmp, its own folder) and a
System V shared-memory segment with a fixed key. Reports what it wrote and
what it found of an earlier process's."""

import ctypes
import os

NAME = "arena-persist-marker"
KEY = 0x0A4E4A  # the SysV key both processes use
libc = ctypes.CDLL(None, use_errno=True)


def act(turn):
    folders = dict.fromkeys(
        ("/tmp", "/dev/shm", os.environ.get("HOME", "/tmp"), "/var/tmp", os.path.dirname(os.path.abspath(__file__)))
    )
    paths = [os.path.join(folder, NAME) for folder in folders]
    found = [p for p in paths if os.path.exists(p)]
    wrote = []
    for path in paths:
        try:
            with open(path, "w") as f:
                f.write("left behind")
            wrote.append(path)
        except OSError:
            pass
    if libc.shmget(KEY, 4096, 0) >= 0:  # an earlier process's segment
        found.append("sysv shm")
    if libc.shmget(KEY, 4096, 0o1000 | 0o600) >= 0:  # IPC_CREAT
        wrote.append("sysv shm")
    return {"action": "dudo", "found": found, "wrote": sorted(set(wrote))}
