"""Attack bot: answers hello properly, then replies to its first turn of match
N with the N-th reply below, each a JSON value of the wrong type or range
where the referee's compiled parser expects another (arena/compiled.py):
compiled code checks the annotated type of every value it takes, so a value
that reached a typed function unchecked would raise TypeError in the
referee instead of a fault recorded against this bot. A program bot (stdlib
only): it writes the bytes itself."""

import json
import sys

REPLIES = [
    b'{"action": "bid", "quantity": 5, "face": 3.0}',
    b'{"action": "bid", "quantity": "5", "face": 3}',
    b'{"action": ["bid"], "quantity": 5, "face": 3}',
    b'{"action": {"bid": 1}}',
    b'{"action": "bid", "quantity": true, "face": 3}',
    b'{"action": "bid", "quantity": 123456789012345678901234567890, "face": 3}',
    b'{"action": "bid", "quantity": -5, "face": -1}',
    b'{"action": null}',
    b"[]",
    b'"dudo"',
    b'{"action": "dudo", "x": ' + b"[" * 40 + b"]" * 40 + b"}",
    b'{"action": "calza", "quantity": {"x": 1}}',
    b'{"action": "bid", "quantity": 1.5, "face": 2}',
    b'{"action": "bid", "quantity": NaN, "face": 2}',
    b'{"action": "bid", "quantity": 5, "face": 3, "action": 7}',
    b'{"action": "bid", "quantity": 18446744073709551617, "face": 2}',
]

if __name__ != "not_main":  # the test reads REPLIES without running the bot
    match = 0
    for line in sys.stdin.buffer:
        if b'"hello"' in line:
            sys.stdout.buffer.write(b'{"type": "ready", "name": "type_confusion"}\n')
        elif b'"match_start"' in line:
            match = int(json.loads(line)["match"].rsplit("-", 1)[1])
        elif b'"turn"' in line:
            sys.stdout.buffer.write(REPLIES[match % len(REPLIES)] + b"\n")
        sys.stdout.buffer.flush()
