"""Child programs for tests of harness.sandbox.process (run in the sandbox process)."""

import time

from harness.sandbox.process import Channel


def answer_once_then_stop_reading() -> int:
    """Replies to one request, then never reads again (as a compromised child could)."""
    channel = Channel()
    channel.receive()
    channel.send({"ok": True})
    time.sleep(600)
    return 0
