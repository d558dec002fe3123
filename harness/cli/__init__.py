"""The `architect` console command.

Each area of the harness adds its subcommands from its own module; this file
only assembles them. Every subcommand a skill calls accepts `--json` and then
prints exactly one JSON object on stdout (progress goes to stderr).
"""

import importlib

import click

from harness import __version__

# The modules adding subcommands, and the commands each adds: a command's
# module alone is imported when that command runs (start-up is paid on every
# call). A name not listed here, and `--help`, load every module.
COMMAND_MODULES = ("canvas_cmds", "experiment_cmds", "run_cmds", "variant_cmds", "model_cmds", "executor_cmds",
                   "evidence_cmds", "data_cmds", "shaper_cmds", "report_cmds", "session_cmds")
COMMANDS = {
    "validate": "canvas_cmds", "patch": "canvas_cmds", "diff": "canvas_cmds", "hash": "canvas_cmds",
    "nodes": "canvas_cmds", "experiment": "experiment_cmds",
    **dict.fromkeys(("init", "stage", "check", "smoke", "evaluate", "commit", "discard", "status", "log", "loop",
                     "rerun"), "run_cmds"),
    **dict.fromkeys(("random", "fitness", "adas", "aflow", "kdloop"), "variant_cmds"),
    "models": "model_cmds", "executors": "executor_cmds",
    **dict.fromkeys(("episodes", "episode", "certify"), "evidence_cmds"), "data": "data_cmds",
    "shaper": "shaper_cmds", "report": "report_cmds", "end": "session_cmds",
    "drive": "session_cmds",
}


class _LazyGroup(click.Group):
    """The root group, importing a command's module when it is first needed."""

    def _load(self, module: str) -> None:
        if module not in self._loaded:
            self._loaded.add(module)
            importlib.import_module(f"harness.cli.{module}").register(self)

    def get_command(self, ctx, name):
        if name not in self.commands:
            for module in ([COMMANDS[name]] if name in COMMANDS else COMMAND_MODULES):
                self._load(module)
        return super().get_command(ctx, name)

    def list_commands(self, ctx):
        for module in COMMAND_MODULES:
            self._load(module)
        return super().list_commands(ctx)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="architect")
def main() -> None:
    """Search the architecture of embodied agents.

    An agent is a typed node graph (graph.json). Validate and patch graphs,
    evaluate them in the simulator, and run search loops whose iterations are
    committed atomically into run directories under runs/.
    """



main._loaded = set()
