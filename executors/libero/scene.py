"""Ground-truth scene of a LIBERO task, read from the simulator state: what VoxPoser's
perception (`detect`) returns, privileged in the sense that no camera is involved.

Every movable object, fixture and region site of the task's BDDL problem, by its
instance name (`akita_black_bowl_1`, `wooden_cabinet_1`, `wooden_cabinet_1_top_region`):
world position, orientation (x, y, z, w), axis-aligned bounding box (from the
object's MuJoCo geoms) and horizontal half size. The workspace is a box around the
scene, fixed for the episode at its start.
"""

from __future__ import annotations

import numpy as np

WORKSPACE_MARGIN = 0.15  # m around the objects and the end effector, horizontally
WORKSPACE_ABOVE = 0.25  # m above the highest of them


def _subtree_geoms(model, root_body: int) -> np.ndarray:
    bodies = {root_body}
    for body in range(root_body + 1, model.nbody):
        if int(model.body_parentid[body]) in bodies:
            bodies.add(body)
    return np.array([g for g in range(model.ngeom) if int(model.geom_bodyid[g]) in bodies], dtype=int)


class Scene:
    """Reads the scene of one built environment (geom lists found once per environment)."""

    def __init__(self, env):
        inner = env.env
        self.sim = inner.sim
        model = self.sim.model
        self.kinds: dict[str, str] = {}
        self.geoms: dict[str, np.ndarray] = {}
        self.sites: dict[str, int] = {}
        for kind, table in (("object", inner.objects_dict), ("fixture", inner.fixtures_dict)):
            for name, obj in table.items():
                self.kinds[name] = kind
                self.geoms[name] = _subtree_geoms(model, model.body_name2id(obj.root_body))
        for name in inner.object_sites_dict:
            owner = next((o for o in self.geoms if name.startswith(o + "_")), None)
            if owner is not None and name in model.site_names:  # regions of objects/fixtures, not placement areas
                self.kinds[name] = "region"
                self.sites[name] = model.site_name2id(name)
        self.bodies = {name: model.body_name2id(table[name].root_body)
                       for table in (inner.objects_dict, inner.fixtures_dict) for name in table}

    def _aabb(self, geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        model, data = self.sim.model, self.sim.data
        local = np.asarray(model.geom_aabb)[geoms]  # centre (3), half size (3) in each geom's frame
        rot = np.asarray(data.geom_xmat)[geoms].reshape(-1, 3, 3)
        centre = np.asarray(data.geom_xpos)[geoms] + np.einsum("nij,nj->ni", rot, local[:, :3])
        half = np.einsum("nij,nj->ni", np.abs(rot), local[:, 3:])
        return (centre - half).min(axis=0), (centre + half).max(axis=0)

    def objects(self) -> dict[str, dict]:
        data = self.sim.data
        out: dict[str, dict] = {}
        for name, kind in self.kinds.items():
            if kind == "region":
                site = self.sites[name]
                position = np.asarray(data.site_xpos[site], float)
                rot = np.asarray(data.site_xmat[site]).reshape(3, 3)
                half = np.abs(rot) @ np.asarray(self.sim.model.site_size[site], float)
                low, high = position - half, position + half
                quat = _quat_xyzw(rot)
            else:
                low, high = self._aabb(self.geoms[name]) if len(self.geoms[name]) else (None, None)
                body = self.bodies[name]
                position = np.asarray(data.body_xpos[body], float)
                quat = np.roll(np.asarray(data.body_xquat[body], float), -1)  # MuJoCo w-first -> x, y, z, w
                if low is None:
                    low = high = position
            out[name] = {"kind": kind, "position": [float(v) for v in position],
                         "quaternion": [float(v) for v in quat],
                         "aabb": [[float(v) for v in low], [float(v) for v in high]],
                         "size": float(max(high[0] - low[0], high[1] - low[1]) / 2)}
        return out


def _quat_xyzw(rot: np.ndarray) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(rot).as_quat()


def gripper_state(obs: dict) -> dict:
    """End effector position, quaternion (x, y, z, w), finger joint positions and opening (m)."""
    fingers = obs["robot0_gripper_qpos"]
    return {"position": [float(v) for v in obs["robot0_eef_pos"]],
            "quaternion": [float(v) for v in obs["robot0_eef_quat"]],
            "fingers": [float(v) for v in fingers], "opening": float(fingers[0] - fingers[1])}


def workspace(objects: dict, gripper: dict) -> dict:
    """A box around every movable object, fixture and the end effector."""
    points = [np.asarray(gripper["position"])]
    for spec in objects.values():
        if spec["kind"] != "region":
            points.extend(np.asarray(corner) for corner in spec["aabb"])
    points = np.array(points)
    low, high = points.min(axis=0), points.max(axis=0)
    low[:2] -= WORKSPACE_MARGIN
    high[:2] += WORKSPACE_MARGIN
    low[2] = min(float(low[2]), float(points[1:, 2].min()) if len(points) > 1 else float(low[2])) - 0.02
    high[2] = float(high[2]) + WORKSPACE_ABOVE
    return {"min": [float(v) for v in low], "max": [float(v) for v in high]}
