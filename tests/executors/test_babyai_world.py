"""The BabyAI world model's cell encoding is minigrid's, and the node types
declare without importing minigrid or gymnasium (they load when a simulator runs)."""

from __future__ import annotations

import json
import subprocess
import sys

from executors.babyai import world as W


def test_cell_encoding_tables_equal_minigrids_and_declarations_load_without_it():
    from minigrid.core import constants

    for name in ("COLOR_TO_IDX", "IDX_TO_COLOR", "OBJECT_TO_IDX", "IDX_TO_OBJECT", "STATE_TO_IDX"):
        assert getattr(W, name) == getattr(constants, name), name
    code = ("import sys, json\nimport executors.babyai.node_types\n"
            "print(json.dumps(['minigrid' in sys.modules, 'gymnasium' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == [False, False]
