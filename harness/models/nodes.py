"""LLM node types (`llm.*`): chat, structured JSON output and image description.

Prompts are files of the candidate (editable and diffable by a proposer):
`{{name}}` placeholders are filled from the node's input ports, from
`config.files` (name -> another candidate file, e.g. a skill) and `config.vars`.
Every call goes through `ctx.model`, which accounts tokens, cost and budgets.
A node calls its model only on ticks where at least one input arrived (and all
ports listed in `config.require`), so gating it upstream controls the cost.
"""

from __future__ import annotations

import json
import re

from jsonschema import Draft202012Validator

from harness.canvas.registry import Node, Registry, default_registry, node_type
from harness.models.context_harness import shared_harness
from harness.models.images import image_part
from harness.models.prompts import PromptError, extract_json, read_candidate_file, render
from harness.models.request import ModelCallError

TEXT_INPUTS = {
    "mission": {"type": "Text", "required": False, "doc": "task instruction"},
    "context": {"type": "Text", "required": False, "doc": "context built from the history"},
    "previous": {"type": "Text", "required": False, "doc": "the node's previous output (delay edge)"},
    "observation": {"type": "Any", "required": False, "doc": "anything to show the model, as text/JSON"},
    "values": {"type": "Dict[Text, Any]", "required": False, "doc": "more named template values"},
}

_PROMPT_PROPS = {
    "system_prompt": {"type": "string", "description": "candidate file with the system prompt"},
    "user_template": {"type": "string", "description": "candidate file with the user message template ({{port}} placeholders)"},
    "files": {"type": "object", "additionalProperties": {"type": "string"},
              "description": "template name -> candidate file inserted as that value (e.g. skill: skill.md)"},
    "vars": {"type": "object", "description": "constant template values"},
    "require": {"type": "array", "items": {"enum": list(TEXT_INPUTS)}, "default": [],
                "description": "input ports that must all have arrived for the node to call the model"},
    "max_tokens": {"type": "integer", "minimum": 1, "description": "override the profile's max_tokens"},
    "reply_pattern": {"type": "string", "description": "regex: emit only its first match in the reply "
                                                        "(case-insensitive); no match is a node error"},
    "temperature": {"type": "number", "minimum": 0, "maximum": 2, "description": "override the profile's temperature"},
}

_BUILTIN: list[tuple[str, dict, type]] = []


def _builtin(name: str, **spec):
    def decorate(cls):
        _BUILTIN.append((name, spec, cls))
        return cls
    return decorate


def register_into(registry: Registry) -> None:
    """Register every `llm.*` type into `registry` (done for the default registry on import)."""
    for name, spec, cls in _BUILTIN:
        existing = registry.get(name) if name in registry.names() else None
        if existing is None or existing.cls is not cls:
            node_type(name, registry=registry, **spec)(cls)


class PromptedNode(Node):
    """Shared by the llm.* types: candidate prompt files, templating, accounted calls."""

    def setup(self) -> None:
        self._texts: dict[str, str] | None = None

    def _load(self, ctx) -> dict[str, str]:
        # Candidate files do not change while a runner lives; read them once.
        if self._texts is None:
            texts = {}
            for key in ("system_prompt", "user_template", "prompt_file", "schema_file"):
                if self.config.get(key):
                    texts[key] = read_candidate_file(ctx.candidate_dir, self.config[key])
            for name, path in (self.config.get("files") or {}).items():
                texts["file:" + name] = read_candidate_file(ctx.candidate_dir, path)
            self._texts = texts
        return self._texts

    def _values(self, inputs: dict, ctx) -> dict:
        texts = self._load(ctx)
        values = dict(self.config.get("vars") or {})
        values.update({k[5:]: v for k, v in texts.items() if k.startswith("file:")})
        values.update(inputs.get("values") or {})
        values.update({k: v for k, v in inputs.items() if k != "values"})
        values["tick"] = ctx.tick
        return values

    def _should_call(self, inputs: dict) -> bool:
        required = self.config.get("require") or []
        return bool(inputs) and all(port in inputs for port in required)

    def _system(self, values: dict, ctx) -> str | None:
        text = self._load(ctx).get("system_prompt")
        return render(text, values, where=self.config["system_prompt"]) if text is not None else None

    def _call(self, ctx, messages, *, system, json_schema=None, temperature=None):
        if ctx.model is None:
            raise RuntimeError(f"node {self.node_id!r} calls a model but the graph pins no model_profile")
        try:
            response = ctx.model.complete(messages, system=system, json_schema=json_schema,
                                          max_tokens=self.config.get("max_tokens"),
                                          temperature=temperature if temperature is not None
                                          else self.config.get("temperature"))
        except ModelCallError as exc:
            ctx.log(model_error=exc.kind, request_id=exc.request_id, attempts=exc.attempts)
            raise
        calls = ctx.self_log.get("calls", []) if ctx.self_log else []
        calls.append({"request_id": response.request_id, "latency_s": round(response.latency_s, 4),
                      "attempts": response.attempts, "replayed": response.replayed})
        ctx.log(calls=calls, reply=response.text[:500])
        return response


CHAT_INPUTS = {**TEXT_INPUTS,
               "image": {"type": "Any", "required": False,
                         "doc": "image(s) sent before the text: an HxWx3 uint8 array, PNG/JPEG bytes, or a dict "
                                "of camera -> frame (every frame, in key order)"}}


def image_parts(image) -> list[dict]:
    frames = list(image.values()) if isinstance(image, dict) and image.get("type") != "image" else [image]
    return [image_part(frame) for frame in frames]


@_builtin("llm.Chat", inputs=CHAT_INPUTS, outputs={"text": "Text"},
          config_schema={"type": "object", "required": ["user_template"], "additionalProperties": False,
                         "properties": {**_PROMPT_PROPS,
                                        "require": dict(_PROMPT_PROPS["require"],
                                                        items={"enum": list(CHAT_INPUTS)})}},
          role="llm", uses_model=True,
          doc="Fills a candidate prompt template from its inputs, asks the pinned model (with the `image` input's "
              "frames first, when given), emits the reply text.")
class Chat(PromptedNode):
    def step(self, inputs: dict, ctx) -> dict:
        if not self._should_call(inputs):
            return {}
        messages, system = self._request(inputs, ctx)
        return {"text": self._reply_text(self._call(ctx, messages, system=system))}

    def _request(self, inputs: dict, ctx) -> tuple[list, str | None]:
        image = inputs.get("image")
        values = self._values({k: v for k, v in inputs.items() if k != "image"}, ctx)
        user = render(self._load(ctx)["user_template"], values, where=self.config["user_template"])
        content = user if image is None else [*image_parts(image), {"type": "text", "text": user}]
        return [{"role": "user", "content": content}], self._system(values, ctx)

    def _reply_text(self, response) -> str:
        text = response.text.strip()
        pattern = self.config.get("reply_pattern")
        if pattern:
            match = re.search(pattern, text, re.IGNORECASE)
            if match is None:
                raise ValueError(f"node {self.node_id!r}: reply does not match reply_pattern {pattern!r}: "
                                 f"{text[:200]!r} [request_id={response.request_id}]")
            text = match.group(0).strip()
        return text


VERIFIER_PROMPT = ("Candidate replies to the request above:\n{candidates}\n"
                   "Which candidate is the best next reply? Answer with its number only.")


@_builtin("llm.SampledChat", inputs=CHAT_INPUTS, outputs={"text": "Text"},
          config_schema={"type": "object", "required": ["user_template"], "additionalProperties": False,
                         "properties": {
                             **_PROMPT_PROPS,
                             "require": dict(_PROMPT_PROPS["require"], items={"enum": list(CHAT_INPUTS)}),
                             "samples": {"type": "integer", "minimum": 1, "maximum": 16, "default": 4,
                                         "description": "replies sampled per call"},
                             "sample_temperature": {"type": "number", "minimum": 0, "maximum": 2, "default": 0.7},
                             "pick": {"enum": ["vote", "verifier"], "default": "vote",
                                      "description": "vote: the most frequent reply (the first of the tied); "
                                                     "verifier: one more call shown the request and the numbered "
                                                     "replies names the one to emit"}}},
          role="llm", uses_model=True,
          doc="llm.Chat with test-time scaling: samples `samples` replies at `sample_temperature` and emits one, "
              "picked by vote or by a verifier call to the same model.")
class SampledChat(Chat):
    """Replies that do not match `reply_pattern` are left out of the pick; none matching is
    the node error llm.Chat raises. The verifier's answer is read as the first integer in
    it; a number out of range picks the first sample."""

    def step(self, inputs: dict, ctx) -> dict:
        if not self._should_call(inputs):
            return {}
        messages, system = self._request(inputs, ctx)
        replies, error = [], None
        for _ in range(self.config.get("samples", 4)):
            response = self._call(ctx, messages, system=system,
                                  temperature=self.config.get("sample_temperature", 0.7))
            try:
                replies.append(self._reply_text(response))
            except ValueError as exc:
                error = exc
        if not replies:
            raise error
        if self.config.get("pick", "vote") == "vote" or len(set(replies)) == 1:
            counts = {reply: replies.count(reply) for reply in replies}
            return {"text": max(counts, key=counts.get)}
        numbered = "\n".join(f"{i}. {reply}" for i, reply in enumerate(replies, start=1))
        verdict = self._call(ctx, messages + [{"role": "user", "content": VERIFIER_PROMPT.format(candidates=numbered)}],
                             system=system, temperature=0.0)
        number = re.search(r"\d+", verdict.text)
        index = int(number.group(0)) - 1 if number else 0
        return {"text": replies[index] if 0 <= index < len(replies) else replies[0]}


class StructuredOutputError(ValueError):
    """The model's reply was not JSON matching the schema, even after the repair round."""


@_builtin("llm.Structured", inputs=TEXT_INPUTS, outputs={"value": "Any", "text": "Text"},
          config_schema={"type": "object", "required": ["user_template"], "additionalProperties": False,
                         "properties": {**_PROMPT_PROPS,
                                        "schema": {"type": "object", "description": "JSON Schema the reply must match"},
                                        "schema_file": {"type": "string", "description": "candidate file holding that schema"},
                                        "repair": {"type": "boolean", "default": True,
                                                   "description": "one extra call with the error when the reply does not parse"}},
                         "oneOf": [{"required": ["schema"]}, {"required": ["schema_file"]}]},
          role="llm", uses_model=True,
          doc="Asks the pinned model for JSON matching a schema, parses and validates it (one repair round).")
class Structured(PromptedNode):
    def _schema(self, ctx) -> dict:
        if "schema" in self.config:
            return self.config["schema"]
        try:
            return json.loads(self._load(ctx)["schema_file"])
        except json.JSONDecodeError as exc:
            raise PromptError(f"schema file {self.config['schema_file']!r} is not JSON: {exc}") from None

    def _parse(self, text: str, validator: Draft202012Validator):
        value = extract_json(text)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
            raise ValueError(f"JSON does not match the schema at {where}: {errors[0].message}")
        return value

    def step(self, inputs: dict, ctx) -> dict:
        if not self._should_call(inputs):
            return {}
        schema = self._schema(ctx)
        validator = Draft202012Validator(schema)
        values = self._values(inputs, ctx)
        user = render(self._load(ctx)["user_template"], values, where=self.config["user_template"])
        user += "\n\nReply with JSON only, matching this JSON Schema:\n" + json.dumps(schema, sort_keys=True)
        system = self._system(values, ctx)
        messages = [{"role": "user", "content": user}]
        response = self._call(ctx, messages, system=system, json_schema=schema)
        try:
            return {"value": self._parse(response.text, validator), "text": response.text}
        except ValueError as first:
            if not self.config.get("repair", True):
                raise StructuredOutputError(f"node {self.node_id!r}: {first}") from None
            ctx.log(repair_reason=str(first))
            messages += [{"role": "assistant", "content": response.text},
                         {"role": "user", "content": f"That reply is invalid: {first}. "
                                                     "Reply again with only the corrected JSON."}]
            response = self._call(ctx, messages, system=system, json_schema=schema)
            try:
                return {"value": self._parse(response.text, validator), "text": response.text}
            except ValueError as second:
                raise StructuredOutputError(f"node {self.node_id!r}: reply still invalid after one repair "
                                            f"round: {second}; reply was {response.text[:200]!r}") from None


@_builtin("llm.Describe",
          inputs={"image": {"type": "Any", "doc": "HxWx3 uint8 array, PNG/JPEG bytes, or a dict with 'image'"},
                  "prompt": {"type": "Text", "required": False, "doc": "question about the image"}},
          outputs={"text": "Text"},
          config_schema={"type": "object", "additionalProperties": False,
                         "properties": {"prompt_file": {"type": "string", "description": "candidate file with the question"},
                                        "prompt": {"type": "string", "default": "Describe this image briefly."},
                                        "system_prompt": _PROMPT_PROPS["system_prompt"],
                                        "max_tokens": _PROMPT_PROPS["max_tokens"],
                                        "temperature": _PROMPT_PROPS["temperature"]}},
          role="vision", uses_model=True,
          doc="Sends an image (and a question) to the pinned vision-language model; emits its description.")
class Describe(PromptedNode):
    def step(self, inputs: dict, ctx) -> dict:
        image = inputs["image"]
        if isinstance(image, dict) and "image" in image:
            image = image["image"]
        texts = self._load(ctx)
        question = inputs.get("prompt") or texts.get("prompt_file") or self.config["prompt"]
        content = [image_part(image), {"type": "text", "text": question}]
        response = self._call(ctx, [{"role": "user", "content": content}], system=texts.get("system_prompt"))
        return {"text": response.text.strip()}


@_builtin("llm.ContextHarness",
          inputs={"history": {"type": "Any", "doc": "JSON-like record of the episode so far (e.g. planner rounds)"}},
          outputs={"context": "Text"},
          config_schema={"type": "object", "additionalProperties": False,
                         "properties": {"file": {"type": "string", "default": "build_context.py",
                                                 "description": "candidate file defining build_context(history) -> str"}}},
          role="context",
          doc="Runs the candidate's restricted build_context(history) in a sandbox process (CPU, memory and "
              "wall-clock limits; a fresh module per call) to decide what the planner sees; any failure of the "
              "harness is a node error.")
class ContextHarnessNode(Node):
    def setup(self) -> None:
        self._harness = None

    def step(self, inputs: dict, ctx) -> dict:
        if self._harness is None:
            source = read_candidate_file(ctx.candidate_dir, self.config["file"])
            self._harness = shared_harness(source, filename=self.config["file"])
        return {"context": self._harness(inputs["history"])}


@_builtin("llm.RoundHistory",
          inputs={"decision": {"type": "Text", "required": False,
                               "doc": "what the planner decided last tick (wire it with delay 1)"},
                  "outcome": {"type": "Any", "required": False,
                              "doc": "what happened since, e.g. the simulator's feedback"},
                  "observation": {"type": "Any", "required": False,
                                  "doc": "what the agent perceives after the round (e.g. a text view)"}},
          outputs={"history": "List[Any]"},
          config_schema={"type": "object", "additionalProperties": False,
                         "properties": {"max_rounds": {"type": "integer", "minimum": 1, "default": 50,
                                                       "description": "oldest rounds are dropped beyond this"}}},
          role="history",
          doc="Pairs each planner decision with what followed: [{round, decision, outcome, observation}, ...].")
class RoundHistory(Node):
    def reset(self, ctx) -> None:
        self.rounds: list[dict] = []
        self.count = 0

    def step(self, inputs: dict, ctx) -> dict:
        outcome = _json_copy(inputs.get("outcome"))
        observation = _json_copy(inputs.get("observation"))
        # Unabridged in the episode log (port values are summarised there): rollout
        # recorders read each tick's observation and the outcome of the last chunk.
        ctx.log(observation=observation, outcome=outcome)
        if "decision" in inputs:
            self.count += 1
            self.rounds.append({"round": self.count, "decision": inputs["decision"],
                                "outcome": outcome, "observation": observation})
            del self.rounds[:-self.config["max_rounds"]]
        return {"history": list(self.rounds)}


def _json_copy(value):
    return None if value is None else json.loads(json.dumps(value, default=str))


register_into(default_registry())
