"""`--backend` and `--ray-address`: where a command's episodes are evaluated."""

from __future__ import annotations

import click

from harness.errors import UserError


def backend_options(fn):
    """Add --backend and --ray-address to a command."""
    fn = click.option("--ray-address", default=None,
                      help="Attach to an existing Ray cluster (e.g. auto or ray://host:10001) "
                           "[default: start a local Ray instance for the call].")(fn)
    return click.option("--backend", type=click.Choice(["local", "ray"]), default=None,
                        help="Run episodes in local worker processes or on Ray actors (pip install -e \".[ray]\") "
                             "[default: $ARCHITECT_BACKEND, else the executor profile's evaluation.backend, "
                             "else local].")(fn)


def evaluation_setting(backend: str | None, ray_address: str | None) -> dict | None:
    """The manifest's `evaluation` object for these options (None: not set)."""
    if ray_address and backend != "ray":
        raise UserError("--ray-address needs --backend ray")
    if backend is None:
        return None
    return {"backend": backend, "ray_address": ray_address}
