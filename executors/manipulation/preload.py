"""Imported once by the evaluation's forkserver (`ExecutorSpec.worker_preload`), so
that every worker starts with robosuite and mujoco loaded instead of importing them
anew. Without robosuite this does nothing: the simulator node says what to install
when an episode first needs it."""

from executors.manipulation.envs import SimulatorUnavailable, import_robosuite

try:
    import_robosuite()
except SimulatorUnavailable:
    pass
