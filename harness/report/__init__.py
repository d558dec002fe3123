"""`architect report`: one self-contained HTML page per run (or several runs
side by side), with its figures also exported as PNG and SVG.

collect (read a run directory) -> figures (matplotlib, Agg) -> page (HTML).
"""
