"""Search variants: proposers that edit a staged candidate, one package each.

A variant's package holds its `VARIANT` (harness.variant_api.VariantSpec) in a
light `__init__.py`, registered by one `architect.variants` entry point in
pyproject.toml, its helpers in a module of their own, and its CLI group in
`cli.py` (named by the spec's `commands`). `random_proposer` has an offline
proposer; `shaper` a headless driver; the model-driven variants (adas, aflow,
kdloop) are driven by the Claude Code skill `/architect:loop`. `fitness.py`
holds the fitness conversions every variant uses.
"""
