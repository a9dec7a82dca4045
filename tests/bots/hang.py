"""Hangs: blocks forever on its first turn without using CPU (a deadlock)."""

import threading


def act(turn):
    threading.Event().wait()
