"""A forkserver kept warm across the commands of one run (`architect smoke` then `evaluate`).

Every `architect` process otherwise starts its own forkserver (`pool.worker_context`) and
pays its preload imports before its first worker. With a scope (a run's folder), the
workers fork instead from a server that outlives the command:

- one server per (scope, key); the key hashes the interpreter, its `sys.path`, the preload
  list, the environment (but for this module's own switches) and the content of the
  installed `harness` and `executors` packages, so a changed checkout, interpreter or
  environment never reaches a server started before the change (it gets one of its own);
- its files live in a folder of the user's own (`$XDG_RUNTIME_DIR` or the temp folder,
  `architect-<uid>`, mode 0700, refused when another user owns it or others may enter it;
  the temp folder also when a socket path under `$XDG_RUNTIME_DIR` would pass AF_UNIX's
  107 bytes);
  the socket is 0600;
- every process using it holds a shared lock on its lease file; a watchdog beside the
  server stops it once no process has held the lease for `idle` seconds
  (`$ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS`, default 300), removing its socket and record
  (the empty lease and start-lock files stay: a process may be about to lock them);
- a server recorded as running whose process is gone (killed, or the machine restarted),
  or whose process is not this module's, is stale: its files are replaced by a new one.

`$ARCHITECT_WARM_FORKSERVER=0` turns it off (each command starts its own forkserver);
`architect loop`, one process for the whole search, never uses it (`keep_private`).
The protocol is multiprocessing's forkserver (its `main` serves here); the client side
mirrors `popen_forkserver` for Python 3.11–3.13 on Linux (elsewhere: off).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from multiprocessing import context, forkserver, popen_forkserver, reduction, resource_tracker, spawn, util
from pathlib import Path

from harness.evaluation.forkserver_env import forkserver_sys_path, single_threaded_native_libs

DEFAULT_IDLE_SECONDS = 300.0
_SUPPORTED = sys.platform == "linux" and (3, 11) <= sys.version_info[:2] < (3, 14)  # /proc; the protocol mirrored below
_VOLATILE_ENV = ("_", "OLDPWD", "PWD", "SHLVL")  # what a shell changes between two commands
_COMMAND = "import sys; from harness.evaluation.warm import serve; serve(sys.argv[1])"
_leases: dict[str, int] = {}  # lease path -> the open fd holding this process's shared lock
_private = False  # keep_private()
_alive_w: int | None = None  # handed to workers as their forkserver's "alive" fd (multiprocessing's protocol)


def enabled() -> bool:
    return _SUPPORTED and not _private and os.environ.get("ARCHITECT_WARM_FORKSERVER", "1") != "0"


def keep_private() -> None:
    """This process drives a whole loop: it keeps its own forkserver for its lifetime, and leaves
    no warm server behind when it ends (a warm server serves a run's *separate* commands)."""
    global _private
    _private = True


def idle_seconds() -> float:
    return float(os.environ.get("ARCHITECT_WARM_FORKSERVER_IDLE_SECONDS") or DEFAULT_IDLE_SECONDS)


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 over the sources of the installed harness and executors packages."""
    import executors
    import harness

    h = hashlib.sha256()
    for package in (harness, executors):
        root = Path(package.__file__).parent
        for path in sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts):
            h.update(str(path).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def server_key(preload: tuple[str, ...]) -> str:
    environ = {k: v for k, v in os.environ.items()
               if k not in _VOLATILE_ENV and not k.startswith("ARCHITECT_WARM_FORKSERVER")}
    parts = [sys.executable, [os.path.abspath(p or os.curdir) for p in sys.path], list(preload), environ,
             code_hash()]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


SOCKET_PATH_MAX = 107  # bytes of an AF_UNIX path (sun_path holds 108, the last a NUL)
_NAME_CHARS = 24  # a server's file name: that many hex digits, then the suffix


def private_folder() -> Path | None:
    """The user's folder for servers' files, created 0700; None when it cannot be trusted
    (or when no candidate folder leaves room for a socket path)."""
    fits = [folder for folder in (Path(base) / f"architect-{os.getuid()}"
                                  for base in (os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir()) if base)
            if len(os.fsencode(folder / ("0" * _NAME_CHARS + ".sock"))) <= SOCKET_PATH_MAX]
    if not fits:
        return None
    folder = fits[0]
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = folder.lstat()
    except OSError:
        return None
    if not folder.is_dir() or folder.is_symlink() or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return folder


class ServerFiles:
    """The files of one (scope, key) server: socket, record, lease, start lock."""

    def __init__(self, folder: Path, scope: str, key: str):
        name = hashlib.sha256(f"{os.path.abspath(scope)}\0{key}".encode()).hexdigest()[:_NAME_CHARS]
        self.key = key
        self.socket = folder / f"{name}.sock"
        self.record = folder / f"{name}.json"
        self.lease = folder / f"{name}.lease"
        self.start_lock = folder / f"{name}.start"

    def read_record(self) -> dict | None:
        try:
            data = json.loads(self.record.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def remove(self) -> None:
        for path in (self.socket, self.record):
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def running_server(files: ServerFiles) -> int | None:
    """The pid of the live server these files record, None when there is none (or a stale one)."""
    rec = files.read_record()
    if not rec or rec.get("key") != files.key or not isinstance(rec.get("pid"), int) or not files.socket.exists():
        return None
    try:
        cmdline = Path(f"/proc/{rec['pid']}/cmdline").read_bytes()
    except OSError:
        return None  # gone
    return rec["pid"] if _COMMAND.encode() in cmdline else None  # a pid reused by another program is not ours


def warm_context(scope: str, preload: tuple[str, ...]):
    """A multiprocessing context whose processes fork from the warm server of SCOPE (an
    existing folder; started if none runs); None when warm servers are off, the user's
    folder cannot be trusted or the server cannot be started (then: a private forkserver)."""
    if not enabled() or not os.path.isdir(scope):
        return None
    folder = private_folder()
    if folder is None:
        return None
    files = ServerFiles(folder, scope, server_key(preload))
    try:
        _hold_lease(files)  # from here on the watchdog will not stop the server under us
        with open(files.start_lock, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if running_server(files) is None:
                files.remove()  # a stale server's files
                _start_server(files, scope, preload)
        os.utime(files.lease)
    except OSError:
        return None
    return WarmContext(str(files.socket))


def _hold_lease(files: ServerFiles) -> None:
    """A shared lock on the lease for this process's lifetime (released when it exits)."""
    if str(files.lease) in _leases:
        return
    fd = os.open(files.lease, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a watchdog is stopping its server
    _leases[str(files.lease)] = fd


def _start_server(files: ServerFiles, scope: str, preload: tuple[str, ...]) -> None:
    """Bind the socket here (so clients can connect at once; they wait while it preloads),
    start the server detached from this command, record it."""
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(files.socket))
        os.chmod(files.socket, 0o600)
        listener.listen()
        args = json.dumps({"listener": listener.fileno(), "preload": list(preload), "lease": str(files.lease),
                           "record": str(files.record), "socket": str(files.socket),
                           "scope": os.path.abspath(scope), "idle": idle_seconds()})
        with single_threaded_native_libs(), forkserver_sys_path():
            proc = subprocess.Popen([sys.executable, "-c", _COMMAND, args], pass_fds=(listener.fileno(),), cwd="/",
                                    start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
    finally:
        listener.close()
    tmp = files.record.with_suffix(".tmp")
    tmp.write_text(json.dumps({"pid": proc.pid, "key": files.key, "started": time.time()}))
    tmp.replace(files.record)


def serve(argv_json: str) -> None:
    """The server process: forkserver.main in a child (single-threaded, as it must be), and
    here a watchdog holding the child's "alive" pipe; closing it stops the child. It stops
    when no process has held the lease for `idle` seconds, when the scope's folder is gone,
    when the child dies, or on SIGTERM."""
    args = json.loads(argv_json)
    alive_r, alive_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(alive_w)
        forkserver.main(args["listener"], alive_r, args["preload"])
        os._exit(0)
    os.close(alive_r)
    os.close(args["listener"])
    signal.signal(signal.SIGTERM, _exit_on_signal)
    lease = os.open(args["lease"], os.O_RDWR | os.O_CREAT, 0o600)
    last_used = time.time()
    try:
        while os.waitpid(child, os.WNOHANG) == (0, 0) and os.path.isdir(args["scope"]):
            try:
                fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                last_used = time.time()  # a process holds the lease
            else:
                last_used = max(last_used, os.fstat(lease).st_mtime)
                if time.time() - last_used >= args["idle"]:
                    break  # the exclusive lock is kept until our files are gone
                fcntl.flock(lease, fcntl.LOCK_UN)
            time.sleep(min(1.0, args["idle"] / 4))
    finally:
        try:
            ours = json.loads(Path(args["record"]).read_text()).get("pid") == os.getpid()
        except (OSError, ValueError):
            ours = False
        if ours:
            for path in (args["socket"], args["record"]):
                Path(path).unlink(missing_ok=True)
        os.close(alive_w)
        try:
            os.waitpid(child, 0)
        except ChildProcessError:
            pass


def _exit_on_signal(*_) -> None:
    raise SystemExit(0)


# -- the client side: multiprocessing's forkserver Popen, aimed at the warm server ----------

class WarmProcess(context.ForkServerProcess):
    _warm_address: str = ""
    _warm_stderr: int | None = None  # index of the starting command's stderr among the inherited fds

    @staticmethod
    def _Popen(process_obj):  # noqa: N802 (multiprocessing's name)
        return _WarmPopen(process_obj)

    def run(self):
        """What the process prints goes to the stderr of the command that started it (the
        server's own stdio is /dev/null: the command that started it may be long gone)."""
        if self._warm_stderr is not None:
            os.dup2(forkserver.get_inherited_fds()[self._warm_stderr], 2)
        super().run()


class _WarmPopen(popen_forkserver.Popen):
    def _launch(self, process_obj):
        try:
            process_obj._warm_stderr = self.duplicate_for_child(sys.stderr.fileno())
        except (AttributeError, ValueError, OSError):  # no real stderr (captured, closed)
            process_obj._warm_stderr = None
        prep_data = spawn.get_preparation_data(process_obj._name)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = _connect(process_obj._warm_address, self._fds)
        parent_w = os.dup(w)  # the child's sentinel of its parent, as popen_forkserver keeps it
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


def _connect(address: str, fds: list[int]) -> tuple[int, int]:
    """multiprocessing's ForkServer.connect_to_new_process, to ADDRESS."""
    global _alive_w
    resource_tracker.ensure_running()
    if _alive_w is None:
        _alive_w = os.pipe()[1]
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(address)
        parent_r, child_w = os.pipe()
        child_r, parent_w = os.pipe()
        try:
            reduction.sendfds(client, [child_r, child_w, _alive_w, resource_tracker.getfd(), *fds])
            return parent_r, parent_w
        except BaseException:
            os.close(parent_r)
            os.close(parent_w)
            raise
        finally:
            os.close(child_r)
            os.close(child_w)


class WarmContext(context.ForkServerContext):
    def __init__(self, address: str):
        super().__init__()
        self.address = address

    def Process(self, *args, **kwargs):  # noqa: N802 (multiprocessing's name)
        proc = WarmProcess(*args, **kwargs)
        proc._warm_address = self.address
        return proc
