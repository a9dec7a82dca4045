"""Floods stderr without end on its first turn."""

import os

CHUNK = b"log line that never ends " * 400


def act(turn):
    while True:
        os.write(2, CHUNK)
