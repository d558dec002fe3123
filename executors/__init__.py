"""In-tree executor packages (environment plug-ins), each in its own folder and
published through one `architect.executors` entry point in pyproject.toml.

The contract, discovery and loading live in `harness.executor_api`; the names
below are re-exported for callers that import them from here.
"""

from harness.errors import ExecutorError, ExecutorProfileError
from harness.executor_api import Executor, load_executor, load_profile, profile_problems

ProfileError = ExecutorProfileError  # this package's name for it

__all__ = ["Executor", "ExecutorError", "ExecutorProfileError", "ProfileError", "load_executor", "load_profile",
           "profile_problems"]
