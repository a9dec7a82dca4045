"""Goes for the user's terminal on its first turn: opens /dev/tty and, if it
gets a terminal, writes an escape sequence and a marker to it and tries to
type into it (TIOCSTI); tries to join the process group ``TARGET`` (the
referee's, when a test writes the number in) and to signal it. Replies with
what each attempt gave, as the bot saw it."""

import errno
import fcntl
import os
import termios

TARGET = 0  # a test replaces this with the referee's process group
MARK = b"TTY" + b"PWNED"  # split, so that the marker is not in this file's text


def _err(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))


def _probe() -> dict[str, object]:
    out: dict[str, object] = {"isatty": [os.isatty(fd) for fd in (0, 1, 2)]}
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError as exc:
        out["dev_tty"] = _err(exc)
    else:
        out["dev_tty"] = "tty" if os.isatty(fd) else "not a tty"
        try:
            os.write(fd, b"\x1b]0;" + MARK + b"\x07" + MARK + b"\r\n")
        except OSError as exc:
            out["dev_tty_write"] = _err(exc)
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, b"Z")
            out["tiocsti"] = "typed"
        except OSError as exc:
            out["tiocsti"] = _err(exc)
        os.close(fd)
    if TARGET:
        try:
            os.setpgid(0, TARGET)
            out["setpgid"] = "joined"
        except OSError as exc:
            out["setpgid"] = _err(exc)
        try:
            os.kill(-TARGET, 0)
            out["kill"] = "reached"
        except OSError as exc:
            out["kill"] = _err(exc)
    out["target_set"] = bool(TARGET)
    return out


probed: dict[str, object] = {}


def act(turn):
    if not probed:
        probed.update(_probe())
    if turn.legal.dudo:
        return {"action": "dudo", "probed": probed}
    bid = next(turn.legal.bids())
    return {"action": "bid", "quantity": bid.quantity, "face": bid.face, "probed": probed}
