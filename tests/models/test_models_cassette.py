"""Record against a live loopback server, then replay with the server gone."""

import json

import pytest

from harness.models import CassetteMiss, make_client
from harness.models.cassette import Cassette, CassetteError
from harness.models.loopback import LoopbackServer
from harness.models.profile import ProfileError, profile_from_dict
from harness.schemas import validate_instance


def _answer(api, system, messages, body):
    last = messages[-1]["content"]
    return f"plan for: {last}"


def _profile(url, **extra):
    data = {"backend": "openai", "model": "planner", "base_url": url, "price_input_per_mtok": 1.0,
            "price_output_per_mtok": 1.0, "backoff_base_s": 0.01}
    data.update(extra)
    return profile_from_dict(data)


def test_record_then_replay_without_network(tmp_path, monkeypatch):
    cassette = tmp_path / "c.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-recording-key")
    with LoopbackServer(_answer) as srv:
        recorder = make_client(_profile(srv.openai_url), mode="record", cassette=cassette)
        live = [recorder.complete(f"mission {i}", system="sys") for i in range(3)]
        recorder.complete("mission 0", system="sys")  # already recorded: served from the cassette
        assert len(srv.requests) == 3
    lines = cassette.read_text().splitlines()
    assert len(lines) == 3
    for line in lines:
        entry = json.loads(line)
        assert validate_instance("cassette_entry", entry) == []
        assert "sk-recording-key" not in line and "127.0.0.1" not in json.dumps(entry["request"])

    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-key")  # the key is not part of the hash
    replayer = make_client(_profile("http://127.0.0.1:9/v1"), mode="replay", cassette=cassette)
    replayed = [replayer.complete(f"mission {i}", system="sys") for i in range(3)]
    assert [r.text for r in replayed] == [r.text for r in live] == [f"plan for: mission {i}" for i in range(3)]
    assert [r.input_tokens for r in replayed] == [r.input_tokens for r in live]
    assert [r.cost_usd for r in replayed] == pytest.approx([r.cost_usd for r in live])
    assert all(r.replayed for r in replayed)


def test_replay_miss_names_the_hash_and_the_request(tmp_path):
    cassette = tmp_path / "c.jsonl"
    with LoopbackServer(_answer) as srv:
        make_client(_profile(srv.openai_url), mode="record", cassette=cassette).complete("known")
    client = make_client(_profile("http://127.0.0.1:9/v1"), mode="replay", cassette=cassette)
    request = client.build_request("go to the purple key")
    with pytest.raises(CassetteMiss) as info:
        client.complete("go to the purple key")
    message = str(info.value)
    assert request.key()[:16] in message
    assert "go to the purple key" in message
    assert info.value.request_id == f"cassette:{request.key()}"
    # a different sampling parameter is a different request
    with pytest.raises(CassetteMiss):
        client.complete("known", temperature=0.5)
    assert client.complete("known").text == "plan for: known"


def test_replay_backend_profile_and_env_override(tmp_path, monkeypatch):
    cassette = tmp_path / "c.jsonl"
    with LoopbackServer(_answer) as srv:
        make_client(_profile(srv.openai_url), mode="record", cassette=cassette).complete("hello")
    replay_profile = profile_from_dict({"backend": "replay", "model": "planner", "cassette": str(cassette)})
    assert make_client(replay_profile, mode="live").complete("hello").text == "plan for: hello"
    monkeypatch.setenv("ARCHITECT_MODEL_MODE", "replay")
    monkeypatch.setenv("ARCHITECT_CASSETTE", str(cassette))
    client = make_client(_profile("http://127.0.0.1:9/v1"), mode="live")
    assert client.mode == "replay" and client.complete("hello").replayed


def test_replay_needs_an_existing_cassette(tmp_path):
    with pytest.raises(ProfileError, match="needs a cassette"):
        make_client(_profile("http://127.0.0.1:9/v1"), mode="replay")
    with pytest.raises(ProfileError, match="cassette not found"):
        make_client(_profile("http://127.0.0.1:9/v1"), mode="replay", cassette=tmp_path / "none.jsonl")
    with pytest.raises(ProfileError, match="cannot record"):
        make_client(profile_from_dict({"backend": "replay", "model": "m", "cassette": "x"}), mode="record")


def test_malformed_cassette_line_is_reported_with_its_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"key": "abc"}\n')
    with pytest.raises(CassetteError, match=r"c.jsonl:1: bad cassette entry"):
        Cassette(path)
    path.write_text("\n{not json\n")
    with pytest.raises(CassetteError, match=r"c.jsonl:2:\d+: malformed JSON"):
        Cassette(path)


def test_images_are_part_of_the_request_hash(tmp_path):
    from harness.models.images import image_part
    import numpy as np

    client = make_client(_profile("http://127.0.0.1:9/v1"))
    a = client.build_request([{"role": "user", "content": [image_part(np.zeros((2, 2, 3), np.uint8))]}])
    b = client.build_request([{"role": "user", "content": [image_part(np.ones((2, 2, 3), np.uint8))]}])
    assert a.key() != b.key()
    assert a.key() == client.build_request([{"role": "user", "content": [image_part(np.zeros((2, 2, 3), np.uint8))]}]).key()


def test_model_fingerprint_separates_modes_and_cassettes(tmp_path, monkeypatch):
    """The evaluation cache key includes it: a replayed result must never be
    served to a live run, nor one cassette's answers to another's."""
    from harness.models import model_fingerprint

    cassette = tmp_path / "c.jsonl"
    cassette.write_text("")
    profile = tmp_path / "p.yaml"
    profile.write_text("backend: openai\nmodel: m\nbase_url: http://127.0.0.1:9/v1\n"
                       f"cassette: {cassette}\n")
    graph = {"model_profile": {"name": "p", "path": str(profile)}}
    assert model_fingerprint({"model_profile": None}) == ""
    monkeypatch.setenv("ARCHITECT_MODEL_MODE", "live")
    live = model_fingerprint(graph)
    monkeypatch.setenv("ARCHITECT_MODEL_MODE", "replay")
    replay = model_fingerprint(graph)
    cassette.write_text('{"other": "entries"}\n')
    replay_other = model_fingerprint(graph)
    assert len({live, replay, replay_other}) == 3
