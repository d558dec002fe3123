"""Fresh R2R episodes for certification reruns: unused instructions of the same split."""

from mapgpt_testkit import needs_full_data

from harness.evaluation.evaluator import fresh_episodes, fresh_unavailable
from harness.executor_api import load_executor


@needs_full_data
def test_fresh_episodes_are_unused_instructions_of_the_same_split_on_unused_paths():
    ex = load_executor("mapgpt")
    tier = ex.episodes("search")
    used = {e["instr_id"] for name in ex.profile["tiers"] for e in ex.episodes(name)}
    used_paths = {i.rsplit("_", 1)[0] for i in used}
    first = fresh_episodes(ex, "search", tier, 10_000_000)
    assert fresh_unavailable(ex, "search") is None
    assert [e["split"] for e in first] == [e["split"] for e in tier]
    assert not {e["instr_id"] for e in first} & used
    assert not {e["instr_id"].rsplit("_", 1)[0] for e in first} & used_paths
    assert len({e["instr_id"] for e in first}) == len(tier)
    assert all(e["episode_id"] == f"{e['instr_id']}~fresh10000000" for e in first)
    assert fresh_episodes(ex, "search", tier, 10_000_000) == first          # the same draw, the same episodes
    assert fresh_episodes(ex, "search", tier, 20_000_000) != first


def test_seeded_executors_draw_fresh_episodes_by_shifting_seeds():
    ex = load_executor("babyai")
    tier = ex.episodes("smoke")
    fresh = fresh_episodes(ex, "smoke", tier, 7)
    assert [e["seed"] for e in fresh] == [e["seed"] + 7 for e in tier]
    assert all(e["episode_id"].endswith("~seed+7") for e in fresh)
