"""One match: a bot process in its sandbox under the time control, the
referee that plays a match with players behind the protocol, in-process
players for trusted code, and the words for why a bot did not start."""
