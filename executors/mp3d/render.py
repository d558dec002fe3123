"""The episode viewer's picture of a navigation episode on a Matterport3D scan
(harness/report): the scan's viewpoint graph seen from above (x right, y up,
metres), the agent's path up to the tick, the reference path, each goal
viewpoint with its 3 m success radius, the current viewpoint and heading, and
the current view's caption from the scan's caption file."""

from __future__ import annotations

import math
from html import escape

from executors.mp3d import data_r2r as D
from executors.mp3d.panorama import view_text

SUCCESS_RADIUS = 3.0  # metres, R2R's success distance
SIZE = 520
MARGIN = 24


def _viewpoint(tick) -> tuple[str | None, int | None, float | None]:
    state = tick.observation.get("state")
    if not isinstance(state, dict):
        return None, None, None
    return state.get("viewpoint"), state.get("view_index"), state.get("heading")


def route_frames(data, scan: str, reference: list[str], goals: list[str]) -> list[dict]:
    """One SVG per tick of `data` (harness.report.episode_data.EpisodeData)."""
    dataset = D.dataset()
    graph = dataset.graph(scan)
    captions = dataset.captions(scan)
    included = [i for i, ok in enumerate(graph.included) if ok]
    xs = [graph.pos64[i][0] for i in included]
    ys = [graph.pos64[i][1] for i in included]
    x0, x1, y0, y1 = min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1
    scale = (SIZE - 2 * MARGIN) / max(x1 - x0, y1 - y0, 1e-6)

    def xy(vp: str) -> tuple[float, float]:
        x, y, _ = graph.position(vp)
        return MARGIN + (x - x0) * scale, SIZE - MARGIN - (y - y0) * scale

    edges = "".join(
        f'<line x1="{xy(graph.ids[a])[0]:.1f}" y1="{xy(graph.ids[a])[1]:.1f}" x2="{xy(graph.ids[b])[0]:.1f}" '
        f'y2="{xy(graph.ids[b])[1]:.1f}"/>'
        for a in included for b in graph.neighbours[a] if a < b)
    nodes = "".join(f'<circle cx="{xy(graph.ids[i])[0]:.1f}" cy="{xy(graph.ids[i])[1]:.1f}" r="2"/>' for i in included)
    rings = "".join(f'<circle cx="{xy(g)[0]:.1f}" cy="{xy(g)[1]:.1f}" r="{SUCCESS_RADIUS * scale:.1f}" '
                    'fill="#2ca02c" fill-opacity="0.12" stroke="#2ca02c" stroke-dasharray="4 3"/>'
                    f'<circle cx="{xy(g)[0]:.1f}" cy="{xy(g)[1]:.1f}" r="5" fill="#2ca02c"/>'
                    for g in goals if g in graph.index)
    ref = _polyline([xy(v) for v in reference if v in graph.index], "#2ca02c", "5 4", 2.5)
    static = (f'<g stroke="#d0d0d0" stroke-width="1">{edges}</g><g fill="#b0b0b0">{nodes}</g>{rings}{ref}')
    frames, walked = [], []
    for tick in data.ticks:
        vp, view, heading = _viewpoint(tick)
        if vp in graph.index and (not walked or walked[-1] != vp):
            walked.append(vp)
        here = walked[-1] if walked else None
        marker = caption = ""
        if here is not None:
            cx, cy = xy(here)
            marker = f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="7" fill="#d62728"/>'
            if heading is not None:  # MatterSim heading: clockwise from +y
                hx, hy = cx + 18 * math.sin(heading), cy - 18 * math.cos(heading)
                marker += f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{hx:.1f}" y2="{hy:.1f}" stroke="#d62728" stroke-width="3"/>'
            if view is not None:
                text = view_text(captions, here, int(view))
                caption = text["caption"] + (f" (objects: {', '.join(text['objects'])})" if text["objects"] else "")
        path = _polyline([xy(v) for v in walked], "#1f77b4", None, 3)
        label = (f"scan {scan} · tick {tick.tick} · at {here or '?'} · {len(walked)} viewpoints walked",
                 f"blue: the agent's path, red: where it is and its heading; green: the reference path, "
                 f"goal and its {SUCCESS_RADIUS:g} m radius")
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE}" height="{SIZE + 32}" '
               f'viewBox="0 0 {SIZE} {SIZE + 32}" font-family="sans-serif">{static}{path}{marker}'
               + "".join(f'<text x="4" y="{SIZE + 12 + 14 * k}" font-size="10">{escape(line)}</text>'
                         for k, line in enumerate(label)) + "</svg>")
        frames.append({"svg": svg, "caption": f"current view: {caption}" if caption else "current view: -"})
    return frames


def _polyline(points: list[tuple[float, float]], colour: str, dash: str | None, width: float) -> str:
    if not points:
        return ""
    text = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<polyline points="{text}" fill="none" stroke="{colour}" stroke-width="{width}"{dashes} '
            'stroke-linejoin="round"/>')


def render_r2r(data) -> list[dict]:
    """An R2R episode (split, instr_id): reference path and goal from the R2R split."""
    item = D.dataset().episode(data.episode["split"], data.episode["instr_id"])
    return route_frames(data, item["scan"], item["path"], [item["path"][-1]])
