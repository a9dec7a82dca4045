"""Allocates memory without bound (touching every page) on its first turn."""


def act(turn):
    hoard = []
    while True:
        hoard.append(bytearray(8 << 20))  # zero-filled, so really resident
