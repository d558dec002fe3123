"""Search variants: proposers that edit a staged candidate.

Each variant module declares its `VARIANT` (harness.variant_api.VariantSpec),
registered by one `architect.variants` entry point in pyproject.toml.
`random` (random_proposer.py) has an offline proposer; the model-driven
variants (adas, aflow, kdloop) are driven by the Claude Code skill
`/architect:loop` with helpers in their own modules.
"""
