"""The database as rows, and rows as YAML: `manage.py atlas export`.

Deterministic: sections in the file's order, objects sorted by key, fields in the rows' order, names in a
list sorted, header names sorted. Secrets are not in the database to begin with (keys and header secrets are
environment variable names), except a channel's Apprise URL, which is never read here: a channel is written as
its name, whether it is enabled and the environment variable its URL came from.
"""

from __future__ import annotations

from dataclasses import asdict
from decimal import Decimal
from typing import Any

import yaml
from django.db import models

from probes.config_as_code.rows import (
    ALERT_RULES,
    CHANNELS,
    FORMAT_VERSION,
    KINDS,
    MODEL_GROUPS,
    OBJECTIVES,
    PROBES,
    REGIONS,
    STATUS_PAGES,
    TARGETS,
    Kind,
    Row,
)

HEADER = """\
# Latency Atlas configuration (manage.py atlas export); apply with: manage.py atlas apply FILE [--dry-run] [--prune]
# No secrets here: a provider's key is named by its environment variable (api_key_env, ${VAR} in headers), and a
# channel's Apprise URL is read at apply time from the environment variable its url_env names.
"""


def model_of(kind: Kind) -> type[models.Model]:
    from probes.models import (
        AlertRule,
        ModelGroup,
        NotificationChannel,
        Probe,
        Region,
        ServiceLevelObjective,
        StatusPage,
        Target,
    )

    return {
        REGIONS.section: Region,
        TARGETS.section: Target,
        CHANNELS.section: NotificationChannel,
        PROBES.section: Probe,
        ALERT_RULES.section: AlertRule,
        MODEL_GROUPS.section: ModelGroup,
        OBJECTIVES.section: ServiceLevelObjective,
        STATUS_PAGES.section: StatusPage,
    }[kind.section]


def row_of(kind: Kind, obj: models.Model, refs: dict[str, Any]) -> Row:
    """The row of `obj`, its relations given by key in `refs` (field -> key or sorted tuple of keys)."""
    values: dict[str, Any] = {}
    for name in kind.field_names():
        value = refs[name] if name in refs else getattr(obj, name)
        if name == "headers":
            value = dict(sorted((value or {}).items()))
        elif name == "mix":
            value = {slug: float(share) for slug, share in sorted((value or {}).items())}
        elif isinstance(value, Decimal):
            # An objective's percentage: the file's number, compared with the file's as a float.
            value = float(value)
        values[name] = value
    return kind.row(**values)


def refs_of(kind: Kind, obj: Any) -> dict[str, Any]:
    """A stored object's relations by key (what row_of needs besides the object)."""
    refs: dict[str, Any] = {}
    for field, _section in kind.refs:
        if field == "target":
            refs[field] = obj.target.name if obj.target is not None else None
        elif field == "model_group":
            refs[field] = obj.model_group.name if obj.model_group is not None else None
        elif field == "regions":
            refs[field] = tuple(sorted(region.slug for region in obj.regions.all()))
        elif field == "channels":
            refs[field] = tuple(sorted(channel.name for channel in obj.channels.all()))
        elif field == "targets":
            refs[field] = tuple(sorted(target.name for target in obj.targets.all()))
        elif field == "model_groups":
            refs[field] = tuple(sorted(group.name for group in obj.model_groups.all()))
        elif field == "slos":
            refs[field] = tuple(sorted(objective.name for objective in obj.slos.all()))
    return refs


def stored_rows(kind: Kind) -> list[Row]:
    queryset = model_of(kind).objects.all()
    related = [field for field, _section in kind.refs if field not in ("target", "model_group")]
    if related:
        queryset = queryset.prefetch_related(*related)
    single = [field for field, _section in kind.refs if field in ("target", "model_group")]
    if single:
        queryset = queryset.select_related(*single)
    rows = [row_of(kind, obj, refs_of(kind, obj)) for obj in queryset]
    return sorted(rows, key=kind.key_of)


def export_rows() -> dict[str, list[Row]]:
    return {kind.section: stored_rows(kind) for kind in KINDS}


def _plain(row: Row) -> dict[str, Any]:
    # Tuples become lists: safe_dump writes only YAML's own types.
    return {name: list(value) if isinstance(value, tuple) else value for name, value in asdict(row).items()}


def dump(sections: dict[str, list[Row]]) -> str:
    document: dict[str, Any] = {"version": FORMAT_VERSION}
    for kind in KINDS:
        document[kind.section] = [_plain(row) for row in sections.get(kind.section, [])]
    # sort_keys=False: the rows' field order, which is stable, reads better than the alphabet.
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, default_flow_style=False, width=120)
    return HEADER + body


def export_yaml() -> str:
    """Every region, target, notification channel, probe, alert rule, model group, objective and status page, as
    YAML."""
    return dump(export_rows())
