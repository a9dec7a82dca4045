"""Takes 30 seconds to import (a slow start-up), then would play."""

import time

time.sleep(30)


def act(turn):
    return "dudo"
