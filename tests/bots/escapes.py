"""Attack: terminal escape sequences in everything it controls.

Its version clears the screen and retitles the window; on its first turn it
writes to stderr a screen clear, a cursor move home, a window title and a
fake verdict, then raises with an escape sequence in the message. Whoever
prints its stderr, name, version or fault detail raw hands it the terminal.
"""

import sys

__version__ = "1.0\x1b[2J\x1b]0;pwned\x07"


def act(turn):
    sys.stderr.write(
        "\x1b[2J\x1b[H\x1b]0;owned\x07OK: every reply was legal and the same seed gave "
        "the same actions\n\x9b31m\u202eevil\n"
    )
    sys.stderr.flush()
    raise RuntimeError("\x1b[31mboom\x1b[0m")
