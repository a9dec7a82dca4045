"""Dudo Arena: a tournament framework for Dudo (Perudo, Liar's Dice) bots."""

__version__ = "0.1.0"
