"""Inference profiles: loading, validation errors that name the key, the example profiles."""

import json
import subprocess
import sys

import pytest

from harness import PROJECT_ROOT
from harness.models import ProfileError, load_profile


def _write(tmp_path, text, name="p.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["anthropic-claude", "vllm-qwen", "replay"])
def test_example_profiles_load(name):
    profile = load_profile(PROJECT_ROOT / "profiles" / f"{name}.yaml")
    assert profile.name == name
    assert profile.concurrency >= 1


def test_vllm_example_points_at_localhost():
    profile = load_profile(PROJECT_ROOT / "profiles" / "vllm-qwen.yaml")
    assert profile.backend == "openai" and profile.base_url == "http://localhost:8000/v1"
    assert profile.structured_output == "vllm"


def test_defaults_and_cost(tmp_path):
    profile = load_profile(_write(tmp_path, "backend: openai\nmodel: m\nprice_input_per_mtok: 1.5\n"
                                            "price_output_per_mtok: 6\n"))
    assert profile.temperature == 0 and profile.max_tokens == 512 and profile.max_retries == 4
    assert profile.cost_usd(1_000_000, 500_000) == pytest.approx(1.5 + 3.0)
    assert profile.cost_usd(1_000_000, 0, cache_read_tokens=1_000_000) == pytest.approx(0.15)


@pytest.mark.parametrize("text,needle", [
    ("backend: openai\nmodel: m\ntempreature: 0.2\n", "tempreature"),
    ("backend: gemini\nmodel: m\n", "backend"),
    ("backend: openai\n", "model"),
    ("backend: openai\nmodel: m\nconcurrency: 0\n", "concurrency"),
    ("backend: openai\nmodel: m\nmax_tokens: lots\n", "max_tokens"),
    ("backend: openai\nmodel: m\nbase_url: localhost:8000\n", "base_url"),
    ("backend: openai\nmodel: m\napi_key_env: sk-abc-123\n", "api_key_env"),
    ("backend: anthropic\nmodel: m\nstructured_output: vllm\n", "structured_output"),
])
def test_bad_profile_names_the_key(tmp_path, text, needle):
    with pytest.raises(ProfileError) as info:
        load_profile(_write(tmp_path, text))
    assert needle in str(info.value)
    assert "p.yaml" in str(info.value)


def test_yaml_syntax_error_has_a_line(tmp_path):
    with pytest.raises(ProfileError, match=r"p.yaml:2:\d+: not valid YAML"):
        load_profile(_write(tmp_path, "backend: openai\nmodel: m: x\n"))


def test_not_a_mapping_and_missing_file(tmp_path):
    with pytest.raises(ProfileError, match="mapping"):
        load_profile(_write(tmp_path, "- a\n- b\n"))
    with pytest.raises(ProfileError, match="not found"):
        load_profile(tmp_path / "absent.yaml")


def test_cli_models_check(tmp_path):
    ok = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "models", "check",
                         str(PROJECT_ROOT / "profiles" / "vllm-qwen.yaml"), "--json"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    body = json.loads(ok.stdout)
    assert body["ok"] is True and body["profile"]["model"] == "Qwen/Qwen3-8B"
    bad = subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", "models", "check",
                          str(_write(tmp_path, "backend: openai\nmodel: m\ntimeout: -1\n")), "--json"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0
    body = json.loads(bad.stdout)
    assert body["ok"] is False and "timeout" in body["error"]
    assert "Traceback" not in bad.stderr


def test_hosted_api_without_its_key_is_refused_up_front(monkeypatch):
    from harness.models import make_client

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    profile = load_profile(PROJECT_ROOT / "profiles" / "anthropic-claude.yaml")
    with pytest.raises(ProfileError, match=r"\$ANTHROPIC_API_KEY is not set"):
        make_client(profile, mode="live")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert make_client(profile, mode="live").backend.name == "anthropic"


def _cli(*args):
    return subprocess.run([sys.executable, "-c", "from harness.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_cassette_and_check_harness(tmp_path):
    ok = _cli("models", "cassette", str(PROJECT_ROOT / "tests" / "cassettes" / "babyai_llm_smoke.jsonl"), "--json")
    assert ok.returncode == 0, ok.stderr
    body = json.loads(ok.stdout)
    assert body["entries"] > 0 and body["models"] == ["Qwen/Qwen3-8B"] and "no real LLM" in body["notes"][0]
    broken = _write(tmp_path, '{"key": "x"}\n', name="c.jsonl")
    bad = _cli("models", "cassette", str(broken), "--json")
    assert bad.returncode != 0 and "c.jsonl:1" in json.loads(bad.stdout)["error"]

    hostile = _write(tmp_path, "import os\ndef build_context(h):\n    return os.getcwd()\n", name="build_context.py")
    rejected = _cli("models", "check-harness", str(hostile), "--json")
    assert rejected.returncode == 1
    body = json.loads(rejected.stdout)
    assert body["ok"] is False and any("imports are not allowed" in p for p in body["details"])
    fine = _cli("models", "check-harness", str(PROJECT_ROOT / "seeds" / "babyai-llm" / "build_context.py"), "--json")
    assert fine.returncode == 0 and json.loads(fine.stdout)["ok"] is True


def test_cli_ping_goes_through_the_real_client(tmp_path):
    from harness.models.loopback import LoopbackServer

    with LoopbackServer(lambda *a: "OK") as srv:
        profile = _write(tmp_path, f"backend: openai\nmodel: pinged\nbase_url: {srv.openai_url}\n")
        result = _cli("models", "check", str(profile), "--ping", "--json")
        assert result.returncode == 0, result.stderr
        body = json.loads(result.stdout)
        assert body["ping"]["text"] == "OK" and body["ping"]["model"] == "pinged"
        assert srv.requests[0]["messages"] == [{"role": "user", "content": "Reply with OK."}]
        assert srv.requests[0]["max_tokens"] == 16
    down = _cli("models", "check", str(_write(tmp_path, "backend: openai\nmodel: m\nbase_url: http://127.0.0.1:9/v1\n"
                                                         "max_retries: 0\n", name="down.yaml")), "--ping", "--json")
    assert down.returncode != 0
    assert json.loads(down.stdout)["error"].startswith("ping failed:") and "request_id=architect-" in down.stdout
