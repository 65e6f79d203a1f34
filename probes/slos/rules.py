"""What makes an objective valid: one set of rules for the admin's form, the API and `atlas apply`.

`clean_objective` judges the objective's own columns and is what ServiceLevelObjective.clean() runs, so every
full_clean() asks it; `check_scope` judges what it covers, targets and regions included, which are many-to-many
and written after the objective is saved, so only a form or a serializer that holds them can ask it.

A mix here is an object of region slug to share ({"eu-london": 60, "us-ashburn": 40}), the shares of the "where
my users are" page, with its bound; the leaderboard's `mix=slug:share,...` is text parsed by latency.forms, which
probes/ does not import."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# The bound of a share on the "where my users are" page (latency.forms.MAX_SHARE): users or percentages, far from
# a float overflow when summed.
MAX_SHARE = 1_000_000_000
# A region's slug as its SlugField takes it: checked before the database is asked about a key, since PostgreSQL
# cannot even be asked about a NUL or a lone surrogate.
SLUG = re.compile(r"^[-a-zA-Z0-9_]+\Z")

# What a user sets on an objective, in the order the admin's form and the API's body list it.
EDITABLE_FIELDS = (
    "name",
    "enabled",
    "targets",
    "model_group",
    "regions",
    "mix",
    "ttft_threshold_ms",
    "tpot_threshold_ms",
    "total_threshold_ms",
    "degraded_ttft_threshold_ms",
    "objective_percent",
    "window",
    "exclude_silences",
    "exclude_rate_limited",
    "channels",
)

BOTH_SCOPES = _("Choose targets or a model group, not both.")
NO_SCOPE = _("Choose the targets this objective covers, or a model group.")
MIX_AND_REGIONS = _("Give regions or a mix of users, not both: the mix names its regions itself.")
MIX_NOT_AN_OBJECT = _('The mix must be an object of region slugs to shares, e.g. {"eu-london": 60, "us-ashburn": 40}.')
MIX_UNKNOWN = _("No region has the slug %(slugs)s.")
MIX_SHARE = _("The share of %(slug)s must be a number above 0 and at most %(max)s.")
DEGRADED_NOT_BELOW = _(
    "The degraded threshold must be below the TTFT threshold (%(ttft)s ms): calls between the two are degraded."
)
OBJECTIVE_RANGE = _("The objective must be above 0 and below 100 (percent).")


def _a_share(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def cleaned_mix(mix: Any) -> dict[str, float]:
    """The mix with its shares as floats, or ValidationError naming what is wrong (every unknown slug at once)."""
    if not isinstance(mix, dict):
        raise ValidationError(MIX_NOT_AN_OBJECT, code="mix_shape")
    errors = []
    for slug, share in mix.items():
        if not (_a_share(share) and 0 < share <= MAX_SHARE):
            shown = slug if isinstance(slug, str) and SLUG.match(slug) else repr(slug)
            errors.append(ValidationError(MIX_SHARE, code="mix_share", params={"slug": shown, "max": f"{MAX_SHARE:,}"}))
    # Here, not above: probes.slos.models imports this module while probes.models is still being loaded.
    from probes.models import Region

    askable = [slug for slug in mix if isinstance(slug, str) and SLUG.match(slug)]
    known = set(Region.objects.filter(slug__in=askable).values_list("slug", flat=True))
    unknown = [slug for slug in mix if slug not in known]
    if unknown:
        shown = ", ".join(repr(slug) for slug in unknown)
        errors.append(ValidationError(MIX_UNKNOWN, code="mix_unknown", params={"slugs": shown}))
    if errors:
        raise ValidationError(errors)
    return {slug: float(share) for slug, share in mix.items()}


def clean_objective(objective: Any) -> None:
    """ServiceLevelObjective.clean(): the degraded threshold below the TTFT threshold, the objective strictly
    between 0 and 100, the mix's regions known and its shares positive (normalised to floats in place).

    A value its field's own validators refuse (a negative threshold, an objective of 150) is left to them, so a
    field is not refused twice for the same reason; the database's check constraints say the same as a backstop."""
    errors: dict[str, Any] = {}
    ttft, degraded = objective.ttft_threshold_ms, objective.degraded_ttft_threshold_ms
    if _a_share(ttft) and _a_share(degraded) and ttft <= degraded and degraded >= 0:
        errors["degraded_ttft_threshold_ms"] = ValidationError(
            DEGRADED_NOT_BELOW, code="degraded_not_below", params={"ttft": f"{ttft:g}"}
        )
    percent = objective.objective_percent
    if isinstance(percent, Decimal | int | float) and percent in (0, 100):
        errors["objective_percent"] = ValidationError(OBJECTIVE_RANGE, code="objective_range")
    try:
        objective.mix = cleaned_mix(objective.mix if objective.mix is not None else {})
    except ValidationError as exc:
        errors["mix"] = exc
    if errors:
        raise ValidationError(errors)


def check_scope(*, targets: Iterable[Any], model_group: Any, regions: Iterable[Any], mix: Any) -> None:
    """What the objective covers: exactly one of targets or a model group; regions or a mix, not both (neither:
    every region). ValidationError by field, for a form's add_error or a serializer's 400."""
    errors: dict[str, Any] = {}
    has_targets = bool(list(targets))
    if has_targets and model_group is not None:
        errors["model_group"] = ValidationError(BOTH_SCOPES, code="both_scopes")
    elif not has_targets and model_group is None:
        errors["targets"] = ValidationError(NO_SCOPE, code="no_scope")
    if mix and list(regions):
        errors["mix"] = ValidationError(MIX_AND_REGIONS, code="mix_and_regions")
    if errors:
        raise ValidationError(errors)
