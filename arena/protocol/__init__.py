"""The player protocol: the JSON-lines wire format, every message the referee
sends, and the Python bot host that speaks it for a bot file inside the
sandbox."""
