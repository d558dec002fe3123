"""The sandbox process: a fresh interpreter whose limits are set before the
hostile code's first line, talking length-prefixed frames over two pipes.

Parent side, `SandboxProcess(program)`: `request(message, timeout)` sends one
frame (a dict, `codec`-encoded) and returns the reply, serving the child's
own requests in between (`on_call`, e.g. a model call the node makes; the
clock restarts after each). The caller kills the process when a reply is
late (`SandboxTimeout`); a process that dies (a crash, its CPU or memory
limit) raises `SandboxDied`; a reply over `max_reply_bytes` or not
decodable raises `SandboxBadReply`. The next request starts a fresh process
(`generation` counts them). The child gets a minimal environment (no keys,
no tokens) and an empty working directory.

Child side, `serve(handler, limits)`: rlimits (address space, CPU time
moving with each request, no file writes, no core dumps), then one reply
per request frame; `call(message)` asks the parent something mid-request.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable

from harness.sandbox import codec

_HEADER = struct.Struct("<I")
_READ_BYTES = 1 << 16   # one read takes a whole small frame, header and body
START_SECONDS = 60.0   # allowance for the child's interpreter and its imports (a loaded 2-core machine)
_BOOT = ("import sys, json, importlib; sys.path[:0] = json.loads(sys.argv[1]); "
         "module, _, function = sys.argv[2].partition(':'); "
         "sys.exit(getattr(importlib.import_module(module), function)(*sys.argv[3:]))")


_SPIN_SECONDS = 100e-6  # a reply or the next request usually arrives within this: polling it saves a wake-up


def _spin_until_readable(fd: int) -> bool:
    """Poll FD for up to _SPIN_SECONDS (an idle CPU's wake-up from a blocking wait costs more)."""
    end = time.perf_counter() + _SPIN_SECONDS
    while True:
        if select.select([fd], [], [], 0)[0]:
            return True
        if time.perf_counter() >= end:
            return False


class SandboxError(Exception):
    """The sandbox process failed to answer; `reason` says how."""

    reason = "crash"


class SandboxTimeout(SandboxError):
    reason = "timeout"


class SandboxDied(SandboxError):
    reason = "crash"


class SandboxBadReply(SandboxError):
    reason = "unstorable"


_LIVE: set[subprocess.Popen] = set()


@atexit.register
def _kill_all() -> None:
    for proc in list(_LIVE):
        if proc.poll() is None:
            proc.kill()


class SandboxProcess:
    """One sandbox process at a time for `program` ("module:function" run in the child with `args`)."""

    def __init__(self, program: str, args: tuple[str, ...] = (), *, max_reply_bytes: int = 64 << 20,
                 on_start: Callable[["SandboxProcess"], None] | None = None):
        self.program, self.args = program, tuple(args)
        self.on_start = on_start
        self.max_reply_bytes = max_reply_bytes
        self.generation = 0
        self._proc: subprocess.Popen | None = None
        self._buffer = bytearray()
        self._workdir: tempfile.TemporaryDirectory | None = None
        self._lock = threading.RLock()

    def request(self, message: dict, timeout: float, on_call: Callable[[dict], Any] | None = None) -> dict:
        """Send `message`, answer the child's calls with `on_call`, return its reply (a dict)."""
        with self._lock:
            self._ensure_started()
            return self._exchange(message, timeout, on_call)

    def _exchange(self, message: dict, timeout: float, on_call) -> dict:
        self._send(message, timeout)
        while True:
            reply = self._receive(timeout)
            if reply.get("restart"):  # the child is ending (it ran out of memory): the next request starts anew
                self._kill()
            if "call" not in reply:
                return reply
            try:
                answer = {"ok": True, "value": on_call(reply) if on_call else None}
            except Exception as exc:  # noqa: BLE001 - the child's call failed: it hears why
                answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            self._send(answer, timeout)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        with self._lock:
            self._kill()

    # -- internals ---------------------------------------------------------
    def _ensure_started(self) -> None:
        if self._proc is not None:  # a process that died since is found by the next write or read
            return
        self._kill()
        self._workdir = tempfile.TemporaryDirectory(prefix="architect-sandbox-")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
               "HOME": self._workdir.name}
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, json.dumps([p for p in sys.path if p]), self.program, *self.args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            cwd=self._workdir.name, close_fds=True)
        os.set_blocking(self._proc.stdin.fileno(), False)  # a child that stops reading cannot block the worker
        _LIVE.add(self._proc)
        self.generation += 1
        if self.on_start is not None:
            self.on_start(self)

    def _send(self, message: dict, timeout: float) -> None:
        try:
            data = codec.encode(message)
        except codec.CodecError as exc:
            raise SandboxBadReply(f"the request cannot be sent: {exc}") from None
        fd = self._proc.stdin.fileno()
        view = memoryview(_HEADER.pack(len(data)) + data)
        deadline = time.monotonic() + timeout
        try:
            while view:
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:
                    left = deadline - time.monotonic()
                    if left <= 0 or not select.select([], [fd], [], left)[1]:
                        self._kill()
                        raise SandboxTimeout(f"the sandbox took no request within {timeout:g} s "
                                             "(the sandbox process was killed)") from None
        except OSError:
            raise self._died("while receiving a request") from None

    def _receive(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        self._fill(_HEADER.size, deadline, timeout)
        (size,) = _HEADER.unpack_from(self._buffer)
        if size > self.max_reply_bytes:
            self._kill()
            raise SandboxBadReply(f"the sandbox replied with {size} bytes (limit {self.max_reply_bytes})")
        end = _HEADER.size + size
        self._fill(end, deadline, timeout)
        body = bytes(self._buffer[_HEADER.size:end])
        del self._buffer[:end]
        try:
            reply = codec.decode(body)
        except codec.CodecError as exc:
            self._kill()
            raise SandboxBadReply(f"the sandbox sent an unreadable reply: {exc}") from None
        if not isinstance(reply, dict):
            self._kill()
            raise SandboxBadReply("the sandbox sent a reply that is not a record")
        return reply

    def _fill(self, size: int, deadline: float, timeout: float) -> None:
        """Read until the buffer holds `size` bytes (a frame usually arrives in one read)."""
        out = self._proc.stdout.fileno()
        while len(self._buffer) < size:
            left = deadline - time.monotonic()
            if not _spin_until_readable(out) and (left <= 0 or not select.select([out], [], [], left)[0]):
                self._kill()
                raise SandboxTimeout(f"no reply within {timeout:g} s (the sandbox process was killed)")
            chunk = os.read(out, min(max(size - len(self._buffer), _READ_BYTES), 1 << 20))
            if not chunk:
                raise self._died("while running")
            self._buffer += chunk

    def _died(self, when: str) -> SandboxDied:
        code = self._proc.wait() if self._proc is not None else None
        self._kill()
        cause = {-signal.SIGXCPU: "its CPU-time limit", -signal.SIGKILL: "killed", -signal.SIGSEGV: "a crash",
                 -signal.SIGABRT: "an abort"}.get(code, f"exit code {code}")
        return SandboxDied(f"the sandbox process died {when} ({cause})")

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        self._buffer.clear()
        if proc is not None:
            _LIVE.discard(proc)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None


# -- the child ---------------------------------------------------------------

def apply_limits(memory_bytes: int) -> Callable[[float], None]:
    """Cap the address space, forbid file writes and core dumps; return `allow_cpu(seconds)`,
    which moves the CPU-time limit to `seconds` beyond what this process used so far."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's business
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past RLIMIT_FSIZE fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    current = [None]

    def allow_cpu(seconds: float) -> None:
        soft = int(time.process_time() + seconds) + 1
        soft = soft if hard == resource.RLIM_INFINITY else min(soft, hard)
        if soft != current[0]:  # whole seconds: most requests leave the limit where it is
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
            current[0] = soft

    return allow_cpu


class Channel:
    """The child's end: frames on fds 0 and 1 (nothing else may write to fd 1)."""

    def __init__(self):
        self._in, self._out = os.dup(0), os.dup(1)
        self._buffer = bytearray()
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)  # a print() of hostile code cannot corrupt the frames
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process

    def receive(self) -> dict | None:
        if not self._fill(_HEADER.size):
            return None
        end = _HEADER.size + _HEADER.unpack_from(self._buffer)[0]
        if not self._fill(end):
            return None
        body = bytes(self._buffer[_HEADER.size:end])
        del self._buffer[:end]
        return codec.decode(body)

    def send(self, message: dict) -> None:
        data = codec.encode(message)
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            view = view[os.write(self._out, view):]

    def call(self, message: dict) -> Any:
        """Ask the parent (`message` must hold "call"); its answer's value, or RuntimeError."""
        self.send(message)
        answer = self.receive()
        if answer is None:
            raise SystemExit(0)
        if not answer.get("ok"):
            raise RuntimeError(answer.get("error") or "the call failed")
        return answer.get("value")

    def _fill(self, size: int) -> bool:
        """Read until the buffer holds `size` bytes; False at the end of input."""
        while len(self._buffer) < size:
            _spin_until_readable(self._in)
            chunk = os.read(self._in, max(size - len(self._buffer), _READ_BYTES))
            if not chunk:
                return False
            self._buffer += chunk
        return True
