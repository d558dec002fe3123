"""A minimal Chrome DevTools Protocol driver for Debian's chromium (no browser
download, no webdriver): start it headless with a fresh profile, open a page,
collect console errors and exceptions, evaluate JavaScript, take a screenshot."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import connect

# Without these the browser tries to reach the network (this machine has none) and hangs.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,1600"]


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, executable: str, timeout: float = 60.0):
        self.profile = tempfile.mkdtemp(prefix="architect-chromium-")
        self.proc = subprocess.Popen([executable, *FLAGS, f"--user-data-dir={self.profile}",
                                      "--remote-debugging-port=0", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.timeout = timeout
        try:
            self._connect()
        except BaseException:
            self.proc.kill()
            self.proc.wait(timeout=10)
            shutil.rmtree(self.profile, ignore_errors=True)
            raise

    def _connect(self) -> None:
        port = self._port()
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        targets = json.loads(opener.open(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        page = next(t for t in targets if t["type"] == "page")
        self.stack = contextlib.ExitStack()
        self.ws = self.stack.enter_context(connect(page["webSocketDebuggerUrl"], max_size=None,
                                                   open_timeout=self.timeout))
        self.ids = itertools.count(1)
        self.events: list[dict] = []

    def _port(self) -> int:
        marker = Path(self.profile) / "DevToolsActivePort"
        deadline = time.time() + self.timeout
        while time.time() < deadline:
            if marker.is_file() and marker.read_text().strip():
                return int(marker.read_text().splitlines()[0])
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with code {self.proc.returncode} before it listened")
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, **params) -> dict:
        call_id = next(self.ids)
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=self.timeout))
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def open(self, url: str) -> None:
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Page.navigate", url=url)
        deadline = time.time() + self.timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.time() > deadline:
                raise TimeoutError(f"{url} did not finish loading")
            self.events.append(json.loads(self.ws.recv(timeout=self.timeout)))

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                found.append("exception: " + params["exceptionDetails"].get("text", ""))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append("log: " + params["entry"].get("text", ""))
        return found

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text"))
        return result["result"].get("value")

    def screenshot(self, path: Path, clip: tuple[float, float, float, float] | None = None) -> Path:
        """The whole page, or only `clip` (x, y, width, height in CSS pixels of the page)."""
        params = {"format": "png", "captureBeyondViewport": True}
        if clip is not None:
            x, y, width, height = clip
            params["clip"] = {"x": x, "y": y, "width": width, "height": height, "scale": 1}
        shot = self.call("Page.captureScreenshot", **params)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def close(self) -> None:
        try:
            self.stack.close()
        finally:
            self.proc.kill()
            self.proc.wait(timeout=10)
            shutil.rmtree(self.profile, ignore_errors=True)
