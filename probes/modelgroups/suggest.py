"""Suggested model groups: targets whose model names name the same model, once the parts that name a vendor,
a snapshot or a serving flavour are left out. Only suggested: the admin creates a group with one click
(probes.admin), nothing is created on its own.

The rule (model_key), in order:
1. lower case; only what follows the last "/" (vendor paths: meta-llama/, accounts/fireworks/models/);
2. a leading vendor word with a dot (Bedrock's anthropic., meta.) is dropped;
3. version suffixes -v1, -v1:0 and dates (2024-08-06, 20240806, @20240620, 0613) are dropped, and
   Fireworks' v3p1 reads as 3.1;
4. the name is split into runs of letters and runs of digits (llama3.1 and Llama-3-1 read alike);
5. a leading "meta" before "llama" is dropped, and trailing serving words (instruct, versatile, chat, latest,
   hf) and trailing 4- or 8-digit runs (dates) are dropped, repeatedly.
"turbo", "mini", sizes (70b) and the like are kept: gpt-4-turbo and gpt-4 are different models.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from probes.models import ModelGroup, Target

QUALIFIERS = frozenset({"instruct", "versatile", "chat", "latest", "hf"})


def model_key(model: str) -> str:
    """The key targets are grouped by (the module's rule); "" for a name with nothing left."""
    text = model.strip().lower().rsplit("/", 1)[-1]
    text = re.sub(r"^[a-z]+\.(?=[a-z])", "", text)
    text = text.replace("@", "-").replace(":", "-")
    text = re.sub(r"-v\d+(-\d+)?$", "", text)
    text = re.sub(r"-\d{4}-\d{2}-\d{2}", "", text)
    text = re.sub(r"\bv(\d+)p(\d+)", r"\1.\2", text)
    tokens = re.findall(r"[a-z]+|\d+", text)
    if tokens[:2] == ["meta", "llama"]:
        tokens = tokens[1:]
    while tokens and (tokens[-1] in QUALIFIERS or (tokens[-1].isdigit() and len(tokens[-1]) in (4, 8))):
        tokens.pop()
    return "-".join(tokens)


@dataclass(frozen=True)
class Suggestion:
    key: str
    name: str  # the shortest of the members' model names without a vendor path
    target_ids: tuple[int, ...]
    target_names: tuple[str, ...]


def suggestions() -> list[Suggestion]:
    """Groups of two or more targets with the same model_key that no existing group already holds all of,
    by name."""
    by_key: dict[str, list[dict]] = {}
    for target in Target.objects.order_by("name").values("id", "name", "model"):
        key = model_key(target["model"] or "")
        if key:
            by_key.setdefault(key, []).append(target)
    held = [
        set(ids)
        for ids in (
            list(group.targets.values_list("id", flat=True)) for group in ModelGroup.objects.prefetch_related("targets")
        )
    ]
    found = []
    for key, members in by_key.items():
        ids = {t["id"] for t in members}
        if len(members) < 2 or any(ids <= group for group in held):
            continue
        name = min((t["model"].strip().rsplit("/", 1)[-1] for t in members), key=lambda n: (len(n), n))
        found.append(
            Suggestion(
                key=key,
                name=name,
                target_ids=tuple(t["id"] for t in members),
                target_names=tuple(t["name"] for t in members),
            )
        )
    return sorted(found, key=lambda s: s.name)


def create(key: str) -> ModelGroup | None:
    """Create the group suggested under `key` (None when there is no such suggestion now). A name already
    taken gets the key appended, so the click never fails on uniqueness."""
    found = next((s for s in suggestions() if s.key == key), None)
    if found is None:
        return None
    name = found.name
    if ModelGroup.objects.filter(name=name).exists():
        name = f"{name} ({found.key})"[:100]
    group = ModelGroup.objects.create(name=name)
    group.targets.set(found.target_ids)
    return group
