"""Deferred imports for modules that declare things at start-up but compute later.

`lazy_import("numpy")` returns the module object at once and runs its import on
the first attribute access (the standard library's `importlib.util.LazyLoader`),
so that commands which only read node declarations never pay for numpy.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
