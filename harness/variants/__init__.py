"""Search variants: proposers that edit a staged candidate.

`random` (random_proposer.py) needs no model and runs fully offline; the
model-driven variants (adas, aflow, kdloop) are driven by the Claude Code skill
`/architect:loop` with helpers in their own modules.
"""

OFFLINE_VARIANTS = ("random",)
