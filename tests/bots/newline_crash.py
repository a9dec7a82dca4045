"""Attack bot: writes 20 KiB of bare newlines to stderr on its first turn,
then dies. The referee reads its stderr for a cause; that reading must cost
it time linear in what the bot wrote (a regex that was quadratic on bare
newlines cost 0.9 s of the referee's CPU per such crash)."""

import os
import sys

from arena.sdk import Bot


class NewlineCrash(Bot):
    def act(self, turn):
        sys.stderr.write("\n" * 20480)
        sys.stderr.flush()
        os._exit(1)
