"""Model calls of the navigation executors' LLM nodes: a candidate's prompt files
(a system prompt and a `{{name}}` user template, read once per runner), one
accounted call through `ctx.model` (images appended in image mode), and the
reply's JSON object, or None when the reply holds none (the caller falls back)."""

from __future__ import annotations

from harness.models.images import image_part
from harness.models.prompts import extract_json, read_candidate_file, render

PROMPT_CONFIG = {
    "system_prompt": {"type": "string", "description": "candidate file with the system prompt"},
    "user_template": {"type": "string", "description": "candidate file with the user message ({{name}} placeholders)"},
}
PROMPTED_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["system_prompt", "user_template"],
                   "properties": PROMPT_CONFIG}     # the config schema of a node configured by its prompt files only


class Prompted:
    """Mixin for Node subclasses whose config has `system_prompt` and `user_template`."""

    _prompts: tuple[str, str] | None = None

    def prompts(self, ctx) -> tuple[str, str]:
        if self._prompts is None:
            self._prompts = (read_candidate_file(ctx.candidate_dir, self.config["system_prompt"]),
                             read_candidate_file(ctx.candidate_dir, self.config["user_template"]))
        return self._prompts

    def ask(self, ctx, values: dict, images: list = ()) -> tuple[dict | None, str]:
        """Render the template with `values`, call the pinned model once; (the reply's JSON
        object or None, the reply text). A graph without a model raises."""
        if ctx.model is None:
            raise RuntimeError(f"node {self.node_id!r} calls a model but the graph pins no model_profile")
        system, template = self.prompts(ctx)
        user = render(template, values, where=self.config["user_template"])
        content = [{"type": "text", "text": user}] + [image_part(image) for image in images] if images else user
        response = ctx.model.complete([{"role": "user", "content": content}], system=system)
        try:
            value = extract_json(response.text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            ctx.log(unparsed=response.text[:300])
            return None, response.text
        ctx.log(reply=response.text[:500])
        return value, response.text


def probability(value) -> float:
    """A reply's probability as a float in [0, 1] (anything else: 0)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return min(1.0, max(0.0, number)) if number == number else 0.0
