"""The `architect` console command.

The harness's own areas add their subcommands from their modules here; the
plug-ins add theirs through their specs (`VariantSpec.commands`: a name and
the "module:attr" of a click command). A command's module alone is imported
when that command runs (start-up is paid on every call); `--help` imports the
command modules, which import what they run only when they run. Every
subcommand a skill calls accepts `--json` and then prints exactly one JSON
object on stdout (progress goes to stderr): `harness.cli.conventions`.
"""

import importlib

import click

from harness import __version__
from harness.roots import HELP_TEXT

# The harness's own command modules and the commands each adds.
MODULE_COMMANDS = {
    "canvas_cmds": ("validate", "patch", "diff", "hash", "nodes"),
    "experiment_cmds": ("experiment",),
    "run_cmds": ("init", "stage", "check", "smoke", "evaluate", "commit", "discard", "status", "log", "loop", "rerun"),
    "fitness_cmds": ("fitness",),
    "model_cmds": ("models",),
    "executor_cmds": ("executors",),
    "evidence_cmds": ("episodes", "episode", "outputs", "certify"),
    "data_cmds": ("data",),
    "report_cmds": ("report",),
    "session_cmds": ("end", "drive"),
}
COMMANDS = {name: module for module, names in MODULE_COMMANDS.items() for name in names}


def plugin_commands() -> dict[str, str]:
    """Command name -> "module:attr" of the commands the installed plug-ins declare."""
    from harness.variant_api import variant_commands

    return variant_commands(reserved=set(COMMANDS))


class _LazyGroup(click.Group):
    """The root group, importing a command's module when it is first needed."""

    def _load_module(self, module: str) -> None:
        if module not in self._loaded:
            self._loaded.add(module)
            importlib.import_module(f"harness.cli.{module}").register(self)

    def _add_plugin(self, name: str, ref: str) -> None:
        from harness.plugins import load_ref

        command = load_ref(ref)
        if not isinstance(command, click.Command):
            raise click.ClickException(f"{ref} (the command {name!r} a plug-in declares) is not a click command")
        self.add_command(command, name)

    def _plugins(self) -> dict[str, str]:
        from harness.errors import UserError

        try:
            return plugin_commands()
        except UserError as exc:
            raise click.ClickException(exc.message) from None

    def get_command(self, ctx, name):
        if name not in self.commands:
            if name in COMMANDS:
                self._load_module(COMMANDS[name])
            elif name in (plugins := self._plugins()):
                self._add_plugin(name, plugins[name])
        return super().get_command(ctx, name)

    def list_commands(self, ctx):
        for module in MODULE_COMMANDS:
            self._load_module(module)
        for name, ref in self._plugins().items():
            if name not in self.commands:
                self._add_plugin(name, ref)
        return super().list_commands(ctx)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="\b\nWhere architect writes (`architect status RUN` prints the resolved folders):\n" + HELP_TEXT)
@click.version_option(__version__, prog_name="architect")
def main() -> None:
    """Search the architecture of embodied agents.

    An agent is a typed node graph (graph.json). Validate and patch graphs,
    evaluate them in the simulator, and run search loops whose iterations are
    committed atomically into run directories under runs/.
    """


main._loaded = set()
