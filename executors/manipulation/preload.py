"""Imported once by the evaluation's forkserver (`ExecutorSpec.worker_preload`), so
that every worker starts with robosuite and mujoco loaded instead of importing them
anew. Any failure here is left for later: the simulator node imports robosuite
itself when an episode first needs it, and reports what is wrong there (an
exception escaping this module would stop the forkserver, and with it every worker)."""

from executors.manipulation.envs import import_robosuite

try:
    import_robosuite()
except Exception:  # noqa: BLE001 - see the module doc
    pass
