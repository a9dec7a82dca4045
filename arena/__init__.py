"""Dudo Arena: a tournament framework for Dudo (Perudo, Liar's Dice) bots."""

__version__ = "0.1.0"

from arena import compiled as _compiled

_compiled.install()  # before any compiled module is imported: the built ones, or the source of all
