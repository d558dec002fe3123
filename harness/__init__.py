"""architect: architecture search for embodied agents over a typed node graph."""

from pathlib import Path

__version__ = "0.1.0"

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SCHEMAS_DIR = PROJECT_ROOT / "schemas"
SEEDS_DIR = PROJECT_ROOT / "seeds"  # the in-tree seed candidates, one folder per seed
