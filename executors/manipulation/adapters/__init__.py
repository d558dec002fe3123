"""Simulator nodes for the real benchmarks (VLABench, LIBERO). Neither runs on this
machine (their assets download at run time); the nodes import their package on
first use and fail with a message naming what to install. The observation and
state conversions are plain functions, tested on arrays in the benchmarks' formats."""


class AdapterUnavailable(RuntimeError):
    """The benchmark's package or assets are not installed."""


def require(module: str, what: str, how: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise AdapterUnavailable(f"{what} is not installed ({exc}); {how} — see executors/manipulation/README.md") from None
