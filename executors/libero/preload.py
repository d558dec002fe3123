"""Imported once by the evaluation's forkserver (`ExecutorSpec.worker_preload`) so every
worker starts with LIBERO, robosuite and mujoco loaded. A failure is left for later: the
simulator node reports it on first use (an exception here would stop the forkserver)."""

try:
    from executors.libero import envs

    envs.import_libero()
except Exception:  # noqa: BLE001 - see the module doc
    pass
