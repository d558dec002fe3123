"""The `architect` console command.

Each area of the harness adds its subcommands from its own module; this file
only assembles them. Every subcommand a skill calls accepts `--json` and then
prints exactly one JSON object on stdout (progress goes to stderr).
"""

import click

from harness import __version__
from harness.cli import canvas_cmds, data_cmds, evidence_cmds, executor_cmds, experiment_cmds, model_cmds, run_cmds, variant_cmds
from harness.cli import session_cmds


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="architect")
def main() -> None:
    """Search the architecture of embodied agents.

    An agent is a typed node graph (graph.json). Validate and patch graphs,
    evaluate them in the simulator, and run search loops whose iterations are
    committed atomically into run directories under runs/.
    """


for _module in (canvas_cmds, experiment_cmds, run_cmds, variant_cmds, model_cmds, executor_cmds, evidence_cmds,
                data_cmds, session_cmds):
    _module.register(main)
