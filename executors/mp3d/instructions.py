"""Words of an R2R instruction for the model-free navigators: its lowercase words
(a plural 's' dropped), its landmark words (3+ letters, not in a stop-word list)
and its segments (split at '.', ',', ';', '!', 'then' and 'and')."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z]+")
STOPWORDS = frozenset("""a an the and then to of in on at into onto by with from for your you go walk turn
take make head continue keep until past through toward towards straight forward left right around up down
stop wait stand there here it is are be that this which when where once after before next front near
way just little bit few steps step slightly room area exit enter leave out off over between across along
side end first second third again back inside outside""".split())


def words(text: str) -> list[str]:
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in _WORD.findall(text.lower())]


def landmarks(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 2]


def segments(instruction: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"[.,;!]|\bthen\b|\band\b", instruction.lower()) if p.strip()]
    return parts or [instruction.lower()]
