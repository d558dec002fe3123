"""The sandbox process's parent end against a child that misbehaves at the pipe level."""

import time

import pytest

from harness.sandbox.process import SandboxProcess, SandboxTimeout


def test_a_child_that_stops_reading_cannot_block_the_parent_past_its_timeout():
    proc = SandboxProcess("sandbox_programs:answer_once_then_stop_reading")
    try:
        assert proc.request({"hello": 1}, timeout=30) == {"ok": True}
        started = time.monotonic()
        with pytest.raises(SandboxTimeout, match="took no request within 1 s"):
            proc.request({"blob": "x" * (4 << 20)}, timeout=1)  # far more than a pipe's buffer
        assert time.monotonic() - started < 10
        assert not proc.running  # killed; the next request starts a fresh process
    finally:
        proc.close()
