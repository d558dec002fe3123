"""`architect report`: one self-contained HTML page per run (or several runs
side by side, or the variant × executor matrix of several runs), with its
figures also exported as PNG and SVG, and the episode viewer.

collect (read a run directory) -> figures (matplotlib, Agg) -> page (HTML);
episode_data (an episode log read for the viewer) -> viewer (a replay, the
executor's `renderer` drawing each tick) <- replays (which episodes);
matrix (the study's table, CSV, LaTeX); write (files, --watch).
"""
