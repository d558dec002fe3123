"""minigrid BabyAI environments with explicit-stop semantics.

`executors.babyai` sets `BABYAI_DONE_ACTIONS=1` before minigrid's verifier is
imported, so an instruction succeeds only on a `done` issued right after the
action that met it, and a premature `done` fails the episode.

minigrid's sequence verifiers (`BeforeInstr` "A, then B" / `AfterInstr` "A after
you B") pass the `done` that completes the first part on to the second part,
which has never been checked and so fails: with done actions a sequence could
never succeed. `fix_sequence_verifiers` rebinds `verify` on this episode's
instruction objects so the `done` that completes the first part is consumed by
it (each part needs its own `done`), as BabyAI's own `AndInstr` does.
"""

from __future__ import annotations

import contextlib
import io
import os
import types
import warnings

import gymnasium as gym

os.environ["BABYAI_DONE_ACTIONS"] = "1"  # before minigrid's verifier is first imported (see executors.babyai)

import minigrid  # noqa: E402,F401  (registers the BabyAI ids)
from minigrid.envs.babyai.core import verifier as V  # noqa: E402

from executors.babyai import world as W  # noqa: E402


def explicit_stop_active() -> bool:
    return bool(V.use_done_actions)


def force_explicit_stop() -> None:
    """For a verifier imported before BABYAI_DONE_ACTIONS was set: `verify` reads
    this module global at call time."""
    V.use_done_actions = "1"


if not explicit_stop_active():
    force_explicit_stop()
    warnings.warn("minigrid's BabyAI verifier was imported before executors.babyai; "
                  "explicit STOP (done actions) was switched on afterwards", RuntimeWarning, stacklevel=2)


def make_env(level: str):
    if not level.startswith("BabyAI-"):
        raise ValueError(f"not a BabyAI level id: {level!r}")
    return gym.make(level)


def reset_env(env, seed: int) -> dict:
    """Reset quietly (minigrid prints rejected samples to stdout, which must stay
    clean for --json) and fix the sequence verifiers of the new instructions."""
    with contextlib.redirect_stdout(io.StringIO()):
        obs, _ = env.reset(seed=int(seed))
    fix_sequence_verifiers(env.unwrapped.instrs)
    return obs


def _before_verify(self, action):
    is_done = action == self.env.actions.done
    if self.a_done != "success":
        self.a_done = self.instr_a.verify(action)
        if self.a_done == "failure":
            return "failure"
        if self.a_done != "success" or is_done:
            return "continue"
    self.b_done = self.instr_b.verify(action)
    return self.b_done if self.b_done in ("success", "failure") else "continue"


def _after_verify(self, action):
    is_done = action == self.env.actions.done
    if self.b_done != "success":
        self.b_done = self.instr_b.verify(action)
        if self.b_done == "failure":
            return "failure"
        if self.b_done != "success" or is_done:
            return "continue"
    self.a_done = self.instr_a.verify(action)
    return self.a_done if self.a_done in ("success", "failure") else "continue"


def fix_sequence_verifiers(instr) -> None:
    if isinstance(instr, V.BeforeInstr):
        instr.verify = types.MethodType(_before_verify, instr)
    elif isinstance(instr, V.AfterInstr):
        instr.verify = types.MethodType(_after_verify, instr)
    for child in (getattr(instr, "instr_a", None), getattr(instr, "instr_b", None)):
        if child is not None:
            fix_sequence_verifiers(child)


def pending_leaves(instr) -> list:
    """The action instructions that may be completed next (verifier state: privileged)."""
    if isinstance(instr, V.ActionInstr):
        return [instr]
    if isinstance(instr, V.BeforeInstr):
        first, then = ("a_done", "instr_a"), "instr_b"
    elif isinstance(instr, V.AfterInstr):
        first, then = ("b_done", "instr_b"), "instr_a"
    else:  # AndInstr
        out = []
        if instr.a_done != "success":
            out += pending_leaves(instr.instr_a)
        if instr.b_done != "success":
            out += pending_leaves(instr.instr_b)
        return out
    if getattr(instr, first[0]) != "success":
        return pending_leaves(getattr(instr, first[1]))
    return pending_leaves(getattr(instr, then))


def leaves_in_order(instr) -> list:
    if isinstance(instr, V.ActionInstr):
        return [instr]
    if isinstance(instr, V.AfterInstr):
        return leaves_in_order(instr.instr_b) + leaves_in_order(instr.instr_a)
    return leaves_in_order(instr.instr_a) + leaves_in_order(instr.instr_b)


def shortest_path_length(env) -> int | None:
    """A lower bound on the steps of a perfect agent, from the true grid (for
    scoring only): moves between the leaf instructions' nearest objects through
    anything but walls (doors, blockers), turns ignored, plus one interaction
    and one `done` per leaf. None if some target is unreachable even so."""
    u = env.unwrapped
    grid = u.grid

    def passable(x, y):
        if not (0 <= x < grid.width and 0 <= y < grid.height):
            return False
        cell = grid.get(x, y)
        return cell is None or cell.type not in ("wall", "lava")

    pos = tuple(int(v) for v in u.agent_pos)
    total = 0
    for leaf in leaves_in_order(u.instrs):
        descs = [leaf.desc] if hasattr(leaf, "desc") else [leaf.desc_move, leaf.desc_fixed]
        for desc in descs:
            goals = set()
            for p in desc.obj_poss:
                p = tuple(int(v) for v in p)
                goals |= {(p[0] + dx, p[1] + dy) for dx, dy in W.DIRS if passable(p[0] + dx, p[1] + dy)}
            found = W.bfs_distance(passable, pos, goals)
            if found is None:
                return None
            total += found[0] + 1
            pos = found[1]
        total += 1
    return total


# --------------------------------------------------------------------------- stochastic mode

SLIP_ACTIONS = (0, 1, 2)  # left, right, forward: what a slipped action becomes


def slip_rng(episode: dict):
    """The episode's action-slip generator, or None in the deterministic mode.
    Seeded by (noise seed, episode seed): the same draws for every candidate
    evaluated under one noise seed, fresh draws under another."""
    p = float(episode.get("slip") or 0.0)
    if p <= 0.0:
        return None
    import numpy as np

    return np.random.default_rng([int(episode.get("noise_seed") or 0), int(episode["seed"])])


def slipped(index: int, rng, p: float) -> int:
    """With probability p the intended action is replaced by a random move
    (one draw per executed action, so both candidates see the same noise)."""
    if rng is None:
        return index
    slip, pick = rng.random(), int(rng.integers(len(SLIP_ACTIONS)))
    return SLIP_ACTIONS[pick] if slip < p else index
