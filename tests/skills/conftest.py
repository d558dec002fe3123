import sys
from pathlib import Path

# skillpack.py (the shared reader) sits next to the tests.
sys.path.insert(0, str(Path(__file__).parent))
