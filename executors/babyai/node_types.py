"""Registers the BabyAI node types (imported on first use of a `babyai.*` type).

Explicit STOP: minigrid reads BABYAI_DONE_ACTIONS when its BabyAI verifier
module is first imported; `envs` sets it before importing minigrid. If the
verifier was imported earlier in this process (a test, a notebook), its module
flag is switched on instead, with a warning: the flag is read on every `verify`
call, and BabyAI envs in this process are ours.
"""

import warnings

from executors.babyai import envs

if not envs.explicit_stop_active():
    envs.force_explicit_stop()
    warnings.warn("minigrid's BabyAI verifier was imported before executors.babyai; "
                  "explicit STOP (done actions) was switched on afterwards", RuntimeWarning, stacklevel=2)

from executors.babyai.nodes import control, exploration, language, memory, perception, simulator  # noqa: E402,F401
