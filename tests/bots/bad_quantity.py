"""Answers its n-th turn with quantity `true`, `3.0`, `"3"`, a 100-digit
integer, then 0 and -1 (the last three are well-formed, illegal bids)."""

from arena.sdk import Bot

QUANTITIES = [True, 3.0, "3", 10**100 - 1, 0, -1]


class BadQuantity(Bot):
    def start(self, match):
        self.turns = 0

    def act(self, turn):
        q = QUANTITIES[self.turns % len(QUANTITIES)]
        self.turns += 1
        return {"action": "bid", "quantity": q, "face": 3}
