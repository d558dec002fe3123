"""VoxPoser's control flow on the canvas: the root program runs as a coroutine of
the graph, suspended at every `execute()`.

Upstream (huangwl18/VoxPoser, `LMP.py`, `interfaces.py`) runs the planner LMP's
program, which calls the composer LMP, whose program calls the value-map LMPs
and `execute()`; `execute()` plans and drives the robot to the end of the motion
and only then returns, so the composer's next line runs on the scene as it is
after the motion. Value-map LMPs and `parse_query_obj` return *functions*, not
values: each is evaluated anew on the latest observation when it is used.

Here the simulator is a graph node, so `execute()` cannot step it. The root
program runs in a thread of its own that hands control back and forth with the
root LMP node (only one of the two runs at any time): `execute()` evaluates the
maps on the latest scene, hands the motion to the node (which emits it to the
path planner) and waits; when the path planner reports the motion done, the node
resumes the program on that tick's scene. A program's time budget does not run
while it waits.
"""

from __future__ import annotations

import threading

import numpy as np

from harness.embodied.lmp import LMPError, program_budget


class Cancelled(BaseException):
    """Ends a suspended program whose episode is over (not an error of the program)."""


class Coroutine:
    """A root program in its own thread, handing control to the node at each `suspend`."""

    def __init__(self, body):
        self._body = body
        self._to_program = threading.Semaphore(0)
        self._to_node = threading.Semaphore(0)
        self._cancelled = False
        self.request = None
        self.finished = False
        self.error: BaseException | None = None
        self.budget = program_budget()
        self._thread = threading.Thread(target=self._main, name="voxposer-program", daemon=True)

    def _main(self) -> None:
        try:
            self._to_program.acquire()
            if not self._cancelled:
                self._body(self)
        except Cancelled:
            pass
        except BaseException as exc:  # handed to the node, which raises it in its own firing
            self.error = exc
        finally:
            self.finished = True
            self.request = None
            self._to_node.release()

    def _switch(self):
        self._to_program.release()
        self._to_node.acquire()
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return self.request

    def start(self):
        """Run the program until its first `suspend` (the request) or its end (None)."""
        self._thread.start()
        return self._switch()

    def resume(self):
        """Continue after the last request was served: the next request, or None at the end."""
        return self._switch()

    def suspend(self, request) -> None:
        """Called on the program's thread: hand `request` to the node and wait to be resumed."""
        self.request = request
        with self.budget.paused():
            self._to_node.release()
            self._to_program.acquire()
        if self._cancelled:
            raise Cancelled()

    def cancel(self) -> None:
        if self._thread.is_alive() and not self.finished:
            self._cancelled = True
            self._to_program.release()
            self._thread.join(timeout=10)


class Trace:
    """One root run: the chain's model calls and dispatched sub-LMP calls (reported per
    firing of the root and then cleared), and the motions handed out."""

    def __init__(self, coroutine: Coroutine):
        self.coroutine = coroutine
        self.calls: list[dict] = []
        self.dispatched: list[dict] = []
        self.motions = 0

    def take(self) -> tuple[list[dict], list[dict]]:
        calls, dispatched = self.calls, self.dispatched
        self.calls, self.dispatched = [], []
        return calls, dispatched


class ObjectView:
    """What `parse_query_obj(query)` returns: a view of one object whose attributes are
    read anew, on the latest scene, every time they are used (the LMP's program runs
    again; the model is not asked again)."""

    def __init__(self, evaluate, query: str):
        self._evaluate = evaluate
        self._query = query

    def _found(self) -> dict:
        found = self._evaluate()
        if not isinstance(found, dict) or "position" not in found:
            raise LMPError(f"parse_query_obj({self._query!r}) did not return a detected object (got "
                           f"{type(found).__name__}); its program must end with ret_val = detect(name)")
        return found

    def __getattr__(self, key: str):
        if key.startswith("_"):
            raise AttributeError(key)
        found = self._found()
        if key not in found:
            raise AttributeError(f"a detected object has no {key!r} (it has {', '.join(sorted(found))})")
        return found[key]

    def __repr__(self) -> str:
        return f"ObjectView({self._query!r})"


class MapFunction:
    """What a value-map LMP call returns: a callable that runs the LMP's program on the
    latest scene and returns its map (VoxPoser's `ret_val` function)."""

    def __init__(self, evaluate, kind: str, query: str):
        self._evaluate, self.kind, self.query = evaluate, kind, query

    def __call__(self):
        return self._evaluate()

    def __repr__(self) -> str:
        return f"MapFunction({self.kind}: {self.query!r})"


def detected(name: str, spec: dict) -> dict:
    """One object as `detect` hands it to a program: numpy positions, its AABB and size."""
    return {"name": name, "kind": spec.get("kind", "object"), "position": np.array(spec["position"], float),
            "quaternion": np.array(spec.get("quaternion", (0.0, 0.0, 0.0, 1.0)), float),
            "aabb": np.array(spec.get("aabb", (spec["position"], spec["position"])), float),
            "size": float(spec.get("size", 0.0))}


def gripper_detected(gripper: dict) -> dict:
    position = np.array(gripper["position"], float)
    return {"name": "gripper", "kind": "gripper", "position": position,
            "quaternion": np.array(gripper["quaternion"], float), "aabb": np.array([position, position]),
            "size": 0.0, "opening": float(gripper["opening"])}
