"""The simulator node for VLABench, a benchmark that does not run on this machine (its
assets download from a file host at run time); the node imports its package on first
use and fails with a message naming what to install. Its conversions are plain
functions, tested on arrays in VLABench's formats. (LIBERO runs here: the `libero`
executor.)"""


class AdapterUnavailable(RuntimeError):
    """The benchmark's package or assets are not installed."""


def require(module: str, what: str, how: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise AdapterUnavailable(f"{what} is not installed ({exc}); {how} — see executors/manipulation/README.md") from None
