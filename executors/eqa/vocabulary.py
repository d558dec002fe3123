"""Words for the mpcat40 categories the questions ask about: how a question names
each one (singular, plural) and the words a caption or a detector uses for it
(BLIP captions and DETR's COCO classes of the caption files). The question
generator uses the names; the model-free agent matches the words. Rooms are
named as `annotations.ROOM_NAMES` names them; ROOM_WORDS are the caption words
that suggest each of those rooms."""

from __future__ import annotations

import re

# category -> (singular, plural, caption and detector words)
CATEGORIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "appliances": ("household appliance", "household appliances",
                   ("refrigerator", "fridge", "oven", "microwave", "stove", "dishwasher", "appliance", "toaster",
                    "washer", "dryer", "washing")),
    "bathtub": ("bathtub", "bathtubs", ("bathtub", "tub", "bath")),
    "bed": ("bed", "beds", ("bed", "beds", "bedroom")),
    "cabinet": ("cabinet", "cabinets", ("cabinet", "cabinets", "cupboard", "cupboards")),
    "chair": ("chair", "chairs", ("chair", "chairs", "armchair")),
    "chest_of_drawers": ("chest of drawers", "chests of drawers", ("dresser", "drawers", "drawer", "chest")),
    "counter": ("counter", "counters", ("counter", "countertop", "counters", "island")),
    "curtain": ("curtain", "curtains", ("curtain", "curtains", "drapes")),
    "cushion": ("cushion", "cushions", ("cushion", "cushions", "pillow", "pillows")),
    "fireplace": ("fireplace", "fireplaces", ("fireplace", "fire", "mantel")),
    "gym_equipment": ("piece of gym equipment", "pieces of gym equipment",
                      ("gym", "treadmill", "exercise", "weights", "bike", "equipment")),
    "mirror": ("mirror", "mirrors", ("mirror", "mirrors")),
    "picture": ("picture", "pictures", ("picture", "pictures", "painting", "paintings", "art", "artwork", "photo")),
    "plant": ("plant", "plants", ("plant", "plants", "flower", "flowers", "vase", "tree")),
    "shelving": ("shelf", "shelves", ("shelf", "shelves", "bookshelf", "bookcase", "shelving")),
    "shower": ("shower", "showers", ("shower",)),
    "sink": ("sink", "sinks", ("sink", "sinks", "basin")),
    "sofa": ("sofa", "sofas", ("sofa", "couch", "sofas", "couches", "sectional")),
    "stool": ("stool", "stools", ("stool", "stools", "barstool")),
    "table": ("table", "tables", ("table", "tables", "desk")),
    "toilet": ("toilet", "toilets", ("toilet",)),
    "towel": ("towel", "towels", ("towel", "towels")),
    "tv_monitor": ("TV or monitor", "TVs or monitors", ("tv", "television", "monitor", "screen", "laptop")),
}
ASKED = tuple(CATEGORIES)          # the categories questions may name, in a fixed order

ROOM_WORDS: dict[str, tuple[str, ...]] = {
    "lounge": ("lounge",),
    "entryway": ("entryway", "entry", "foyer", "entrance"),
    "dining room": ("dining",),
    "living room": ("living",),
    "stairs": ("stairs", "staircase", "stairway", "steps"),
    "kitchen": ("kitchen",),
    "porch": ("porch", "patio", "deck", "balcony"),
    "bathroom": ("bathroom", "bath", "toilet", "shower"),
    "bedroom": ("bedroom", "bed"),
    "hallway": ("hallway", "hall", "corridor"),
}
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

_WORD = re.compile(r"[a-z]+")


def words(text: str) -> set[str]:
    """The lowercase words of a text."""
    return set(_WORD.findall(text.lower()))


def category_named(text: str) -> str | None:
    """The asked category whose singular or plural name occurs in `text` (the longest name wins)."""
    lowered = text.lower()
    best, length = None, 0
    for category, (singular, plural, _) in CATEGORIES.items():
        for name in (singular.lower(), plural.lower()):
            if re.search(rf"\b{re.escape(name)}\b", lowered) and len(name) > length:
                best, length = category, len(name)
    return best


def mentions(text: str, category: str) -> bool:
    """Whether a caption or object list uses one of the category's words."""
    return bool(words(text) & set(CATEGORIES[category][2]))
