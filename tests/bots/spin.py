"""Spins the CPU forever on its first turn."""


def act(turn):
    n = 0
    while True:
        n += 1
