"""Image mode: MapGPT's planner seeing the RGB view of each place.

With the real MatterSim, rendering on and the Matterport3D skyboxes
(`mapgpt.Simulator` config `{"backend": "mattersim", "observation": "image",
"dataset_path": ...}`), every candidate carries the RGB image of the view it
was chosen from and the map memory keeps one image per place. This planner
sends the prompt builder's text followed by one image per place ("Image k"
belongs to "Place k", as in MapGPT) to the pinned multimodal model. The graph
backend renders nothing, so offline seeds use text observations instead.
"""

from __future__ import annotations

from harness.canvas.registry import Node, node_type
from harness.models.images import image_part
from harness.models.prompts import read_candidate_file

IMAGE_NOTE = "Image k shows the view towards Place k."


def image_messages(prompt: str, nav_map: dict, max_images: int = 20) -> list[dict]:
    """One user message: the step text, then 'Image k:' and the image of each
    place that has one (in place order; at most `max_images`, the most recent places kept)."""
    numbered = [(k, nav_map["images"][vp]) for k, vp in enumerate(nav_map["places"]) if vp in nav_map["images"]]
    numbered = numbered[-max_images:]
    content = [{"type": "text", "text": f"{prompt}\n\n{IMAGE_NOTE}"}]
    for k, image in numbered:
        content.append({"type": "text", "text": f"Image {k}:"})
        content.append(image_part(image))
    return [{"role": "user", "content": content}]


@node_type(
    "mapgpt.ImagePlanner",
    inputs={"prompt": "Text", "map": "NavMap"},
    outputs={"text": {"type": "Text", "doc": "the model's reply (Thought / New Planning / Action)"}},
    config_schema={"type": "object", "additionalProperties": False, "required": ["system_prompt"], "properties": {
        "system_prompt": {"type": "string", "description": "candidate file with the system prompt"},
        "max_images": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20,
                       "description": "most place images sent per call (the most recent places)"}}},
    role="llm", uses_model=True,
    doc="Sends the step text and one RGB image per place to the pinned multimodal model (image mode; "
        "needs the real MatterSim with rendering).",
)
class ImagePlanner(Node):
    """Calls the pinned multimodal model once per tick with one user message: the prompt
    text, a note that 'Image k shows the view towards Place k', then 'Image k:' and the
    image for each place of the map that has one, in place order, keeping only the last
    `max_images` of them. The system prompt is read from the candidate file
    `system_prompt` on first use. Places without an image are left out; with text
    observations (the graph backend) the map has no images and only the text is sent.
    The reply is emitted as is (no parsing, no retry). Without a pinned model_profile it
    raises (a node error); a missing prompt file is an error too."""

    def setup(self) -> None:
        self._system: str | None = None

    def step(self, inputs, ctx):
        if ctx.model is None:
            raise RuntimeError(f"node {self.node_id!r} calls a model but the graph pins no model_profile")
        if self._system is None:
            self._system = read_candidate_file(ctx.candidate_dir, self.config["system_prompt"])
        messages = image_messages(inputs["prompt"], inputs["map"], self.config["max_images"])
        response = ctx.model.complete(messages, system=self._system)
        ctx.log(images=len(messages[0]["content"]) // 2, reply=response.text[:500])
        return {"text": response.text}
