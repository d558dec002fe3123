"""`python -m harness.cli ...`: the `architect` command, for a checkout without the console script."""

from harness.cli import main

main(prog_name="architect")
