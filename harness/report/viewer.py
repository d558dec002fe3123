"""The episode viewer: a replay of one logged episode (or a parent's and a
child's side by side) to step through tick by tick — the executor's picture
of the state (its spec's `renderer`), the actions, and each node firing's
inputs, outputs, logged fields and usage as the log holds them, uncut. The
first tick where the child's trace departs from the parent's is marked, and
at each tick the firings whose outputs differ from the other side's.

Everything is inline (frames as data URIs, the script and styles in the
page), so the HTML opens without network."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from html import escape
from pathlib import Path

from harness.evaluation.trace import array_shapes, divergence, read_log
from harness.report.episode_data import episode_from


@dataclass
class Side:
    label: str          # "iteration 3"
    log: Path
    record: dict        # the episode's record in metrics.json


def replay(executor: str, child: Side, parent: Side | None = None, element_id: str = "replay") -> str:
    """The viewer of CHILD (and PARENT beside it) as one HTML element."""
    header, firings = read_log(child.log)
    frames: dict[str, int] = {}  # each distinct picture once (parent and child agree until they diverge)
    sides = [_side(executor, child, header, firings, frames)]
    marked = None
    if parent is not None:
        parent_header, parent_firings = read_log(parent.log)
        sides.insert(0, _side(executor, parent, parent_header, parent_firings, frames))
        found = divergence(parent_firings, firings)
        marked = None if found is None else {"tick": found["tick"], "node": found["node"], "why": found["why"],
                                             "first_action_tick": found["first_action_tick"]}
    payload = {"frames": list(frames), "sides": sides, "divergence": marked}
    data = json.dumps(payload, default=repr).replace("</", "<\\/")
    title = " vs ".join(f"{s['label']}: {'success' if s['success'] else 'failure'}" for s in sides)
    note = ("the traces are identical" if parent is not None and marked is None else
            f"first divergent tick: {marked['tick']} (node {marked['node']}: {marked['why']})" if marked else "")
    return (f'<div class="episode-viewer" id="{escape(element_id)}">'
            f'<p class="meta"><b>{escape(str(child.record["episode_id"]))}</b> · {escape(title)}'
            f'{" · " + escape(note) if note else ""}</p>'
            '<div class="controls"><button class="prev">◀ previous tick</button>'
            '<input class="slider" type="range" min="0" value="0" step="1">'
            '<button class="next">next tick ▶</button> <span class="tick-label"></span>'
            f'{"<button class=jump>go to the divergent tick</button>" if marked else ""}</div>'
            '<div class="sides"></div>'
            f'<script type="application/json" class="replay-data">{data}</script></div>')


def _side(executor: str, side: Side, header: dict, firings: list[dict], store: dict[str, int]) -> dict:
    data = episode_from(header, firings)
    frames, note = _frames(executor, data)
    ticks = []
    for k, tick in enumerate(data.ticks):
        frame = frames[k] if frames and k < len(frames) else None
        uri = _uri(frame)
        ticks.append({"tick": tick.tick, "frame": None if uri is None else store.setdefault(uri, len(store)),
                      "caption": (frame or {}).get("caption", ""),
                      "actions": [_text(a) for a in tick.actions],
                      "firings": [_firing(f) for f in tick.firings]})
    record = side.record
    return {"label": side.label, "success": bool(record.get("success")), "termination": record.get("termination"),
            "steps": record.get("steps"), "result": header.get("result"), "note": note, "ticks": ticks}


def _frames(executor: str, data) -> tuple[list[dict] | None, str | None]:
    from harness.executor_api import find_executor
    from harness.plugins import load_ref

    try:
        ref = find_executor(executor).renderer
        if ref is None:
            return None, f"executor {executor!r} declares no renderer: no state pictures"
        return load_ref(ref)(data), None
    except Exception as exc:  # noqa: BLE001 - a renderer's failure is shown, the trace still is
        return None, f"no state pictures: {type(exc).__name__}: {exc}"


def _uri(frame: dict | None) -> str | None:
    if not frame:
        return None
    if "png" in frame:
        return "data:image/png;base64," + base64.b64encode(frame["png"]).decode("ascii")
    return "data:image/svg+xml;base64," + base64.b64encode(frame["svg"].encode("utf-8")).decode("ascii")


def _text(value) -> str:
    """A port's value as the viewer prints it: a text as it is, data as JSON; an array's
    content (base64) is named by dtype and shape (the renderer draws what it shows)."""
    if isinstance(value, str):
        return value
    value = array_shapes(value)
    try:
        text = json.dumps(value, default=repr)
        return text if len(text) <= 100 else json.dumps(value, indent=1, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _firing(f) -> dict:
    out = {"node": f.node, "type": f.type,
           "inputs": {k: _text(v) for k, v in (f.inputs or {}).items()} if f.inputs is not None else None,
           "outputs": {k: _text(v) for k, v in (f.outputs or {}).items()} if f.outputs is not None else None}
    if f.error:
        out["error"] = f.error
    if f.self_fields:
        out["logged"] = {k: _text(v) for k, v in f.self_fields.items()}
    if f.usage:
        out["usage"] = f.usage
    return out


CSS = """
.episode-viewer{border:1px solid #ddd;border-radius:6px;padding:.6em;margin:.8em 0;background:#fff}
.episode-viewer .controls{margin:.3em 0}.episode-viewer .slider{width:40%;vertical-align:middle}
.episode-viewer .sides{display:flex;gap:1em;align-items:flex-start}.episode-viewer .side{flex:1;min-width:0}
.episode-viewer .frame{max-width:100%;min-width:256px;height:auto;border:1px solid #eee;display:block;image-rendering:pixelated}
.episode-viewer .divergent{background:#fff3cd;border:1px solid #e0a800;padding:0 .3em}
.episode-viewer .firing{border-top:1px solid #eee;padding:.2em 0}.episode-viewer pre{max-height:none;white-space:pre-wrap;word-break:break-word}
.episode-viewer .port{color:#555;font-size:12px}.episode-viewer .err{color:#a11}
.episode-viewer .differs{border-left:3px solid #e0a800;padding-left:.4em}
"""

SCRIPT = r"""
(function(){
function el(tag, cls, text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!==undefined)e.textContent=text;return e;}
function ports(title, map){var box=el('div');if(!map)return box;Object.keys(map).forEach(function(k){
  box.appendChild(el('div','port',title+' '+k+':'));box.appendChild(el('pre','',map[k]));});return box;}
function keyed(t){var seen={};return t.firings.map(function(f){seen[f.node]=(seen[f.node]||0)+1;
  return [f.node+'#'+seen[f.node], JSON.stringify([f.outputs,f.error||null])];});}
function drawSide(side, i, marked, frames, other){
  var box=el('div','side');box.appendChild(el('h4','',side.label+': '+(side.success?'success':'failure')+' ('+side.termination+', '+side.steps+' steps)'));
  var t=side.ticks[Math.min(i, side.ticks.length-1)];
  if(i>=side.ticks.length){box.appendChild(el('p','na','the episode ended at tick '+side.ticks[side.ticks.length-1].tick));}
  if(side.note)box.appendChild(el('p','na',side.note));
  if(side.result){var r=el('details');r.appendChild(el('summary','','what the simulator reported at the end'));
    r.appendChild(el('pre','',JSON.stringify(side.result,null,1)));box.appendChild(r);}
  if(t.frame!==null){var img=el('img','frame');img.src=frames[t.frame];img.alt='state at tick '+t.tick;box.appendChild(img);}
  if(t.caption)box.appendChild(el('p','meta',t.caption));
  box.appendChild(el('div','port','actions executed at tick '+t.tick+':'));box.appendChild(el('pre','',t.actions.join('\n')||'(none)'));
  var theirs={};if(other&&i<other.ticks.length)keyed(other.ticks[i]).forEach(function(k){theirs[k[0]]=k[1];});
  var mine=keyed(t);
  t.firings.forEach(function(f,j){var differs=other&&i<other.ticks.length&&i<side.ticks.length&&theirs[mine[j][0]]!==mine[j][1];
    var d=el('div','firing'+(differs?' differs':'')+(marked&&f.node===marked.node&&t.tick===marked.tick?' divergent':''));
    if(differs)d.title='differs from the other episode at this tick';
    d.appendChild(el('b','',f.node+' ('+(f.type||'?')+')'));
    d.appendChild(ports('in',f.inputs));d.appendChild(ports('out',f.outputs));d.appendChild(ports('logged',f.logged));
    if(f.usage)d.appendChild(el('div','port','usage: '+JSON.stringify(f.usage)));
    if(f.error)d.appendChild(el('pre','err',f.error));box.appendChild(d);});
  return box;}
document.querySelectorAll('.episode-viewer').forEach(function(v){
  var data=JSON.parse(v.querySelector('.replay-data').textContent);
  var n=Math.max.apply(null,data.sides.map(function(s){return s.ticks.length;}));
  var slider=v.querySelector('.slider'),label=v.querySelector('.tick-label'),sides=v.querySelector('.sides');
  slider.max=n-1;
  var ix=data.divergence?data.sides[1].ticks.findIndex(function(t){return t.tick===data.divergence.tick;}):-1;
  function show(i){i=Math.max(0,Math.min(n-1,i));slider.value=i;sides.innerHTML='';
    data.sides.forEach(function(s,k){sides.appendChild(drawSide(s,i,data.divergence,data.frames,data.sides[1-k]));});
    var t=data.sides[data.sides.length-1].ticks[Math.min(i,data.sides[data.sides.length-1].ticks.length-1)].tick;
    label.textContent='tick '+t+' ('+(i+1)+' of '+n+')'+(i===ix?' · first divergent tick':'');
    label.className='tick-label'+(i===ix?' divergent':'');v.dataset.index=i;}
  v.querySelector('.prev').addEventListener('click',function(){show(+slider.value-1);});
  v.querySelector('.next').addEventListener('click',function(){show(+slider.value+1);});
  slider.addEventListener('input',function(){show(+slider.value);});
  var jump=v.querySelector('.jump');if(jump)jump.addEventListener('click',function(){show(ix);});
  v.tabIndex=0;v.addEventListener('keydown',function(e){if(e.key==='ArrowRight'){show(+slider.value+1);e.preventDefault();}
    else if(e.key==='ArrowLeft'){show(+slider.value-1);e.preventDefault();}});
  show(0);});
})();
"""
