"""Running code the harness does not trust: one restricted-execution core.

Three kinds of code are hostile here, each with its own allowances on top of
the same rules (`restricted.Rules`):
- candidate node types (`nodeset/*.py`, `harness.canvas.restricted`), which
  also run in a process of their own (`harness.canvas.isolated`);
- context harnesses (`build_context.py`, `harness.models.context_harness`),
  which run in a sandbox process per harness;
- LMP programs (the manipulation executor's `lmp.py`).

`restricted` compiles with RestrictedPython, refuses named constructs at
compile time and guards attribute access, writes, imports and iteration when
the code runs; `process` is the sandbox process (rlimits set before the
hostile code's first line, a wall-clock kill, framed replies of bounded
size); `codec` moves values across that boundary as plain data. This package
imports nothing else of the harness.
"""
