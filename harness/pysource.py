"""Parse and compile candidate Python one thread at a time.

CPython 3.11 keeps the AST constructor's recursion counter in per-interpreter
state, so two threads building ASTs at once can corrupt it and fail with
"SystemError: AST constructor recursion depth mismatch" (python/cpython#106905).
Candidate code is parsed from evaluation threads (rollouts, context harnesses,
nodesets), so every such parse goes through `serialised`, which also retries
once when an unguarded thread (an import, say) raced it.
"""

from __future__ import annotations

import threading

_lock = threading.RLock()


def serialised(build, *args, **kwargs):
    """`build(*args, **kwargs)` (ast.parse, compile, RestrictedPython's compilers) under one lock."""
    with _lock:
        try:
            return build(*args, **kwargs)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc):
                raise
            return build(*args, **kwargs)
