"""Subcommands of this area (filled in by its owner)."""

import click


def register(main: click.Group) -> None:
    """Attach this module's commands to the root group."""
