"""Real users on the pages: the "Real users" panel of the region and target pages (context and words),
read through probes.readings.real_users. Numbers only come from there; this module says them."""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext as _

from latency import labels
from probes import metrics, readings
from probes.readings.realusers import REAL_PERCENTILES, Nearby, NearbyRow
from probes.realusers.location import city_database_configured


def duration(ms: float | None) -> str:
    """A time as people say it: "1.9 s" from a second on, "170 ms" under it; "–" when unknown."""
    if ms is None:
        return "–"
    if ms >= 1000:
        return _("%(seconds)s s") % {"seconds": f"{ms / 1000:.1f}"}
    return _("%(ms)s ms") % {"ms": f"{ms:.0f}" if ms >= 10 else f"{ms:.1f}"}


def sentence(row: NearbyRow) -> str:
    """The panel's comparison in words, on time to first token (or the first real-user metric)."""
    first = metrics.REAL_USERS[0].name
    words = {
        "city": row.region_city or row.region_name,
        "users": duration(row.users[f"{first}_p50"]),
        "probe": duration(row.probes[f"{first}_p50"]),
        # "our Lagos probe": the region's city, as people name where a probe runs.
        "region": row.region_city or row.region_name,
        "metric": labels.short(first),
    }
    text = _("Your users near %(city)s see p50 %(metric)s %(users)s; our %(region)s probe sees %(probe)s") % words
    if row.probes[f"{first}_p50"] is None:
        text = _("Your users near %(city)s see p50 %(metric)s %(users)s; our %(region)s probe has no value") % words
    if row.floor_ms is not None:
        text += _("; the fiber floor is %(floor)s") % {"floor": duration(row.floor_ms)}
    return text + "."


def columns() -> list[dict]:
    """The panel table's figure columns, from probes.metrics.REAL_USERS: real users' then the probes'."""
    out = []
    for m in metrics.REAL_USERS:
        for p in REAL_PERCENTILES:
            out.append(
                {
                    "key": f"{m.name}_{p}",
                    "users": _("Real users %(p)s %(metric)s") % {"p": p, "metric": labels.short(m.name)},
                    "probes": _("Probes %(p)s %(metric)s") % {"p": p, "metric": labels.short(m.name)},
                }
            )
    return out


def empty_reason(near: Nearby, where: str) -> str:
    """Why the panel has no rows: nothing received, everything under the minimum, or nobody near."""
    k = readings.real_users.min_samples()
    if not near.received:
        return _(
            "No real users' calls %(window)s: none received. Send OpenTelemetry GenAI spans or the browser beacon "
            "with an ingest source (Ingest sources, in the admin)."
        ) % {"window": where}
    if near.withheld == near.received:
        return _(
            "Real users' calls arrived %(window)s, but no place reached the minimum of %(k)s calls, so none is "
            "shown: no single user may be identifiable."
        ) % {"window": where, "k": k}
    return _("No real users within %(km)s km of these regions %(window)s (places under %(k)s calls are not shown).") % {
        "window": where,
        "km": f"{near.radius_km:.0f}",
        "k": k,
    }


def panel(
    since: datetime,
    until: datetime,
    where: str,
    *,
    region_ids: list[int] | None = None,
    target_ids: list[int] | None = None,
) -> dict:
    """The "Real users" panel's context: rows (each with its sentence and cells), headings, empty reason."""
    near = readings.real_users.nearby(since, until, region_ids=region_ids, target_ids=target_ids)
    cols = columns()
    rows = [
        {
            "row": row,
            "sentence": sentence(row),
            "users": [duration(row.users[c["key"]]) for c in cols],
            "probes": [duration(row.probes[c["key"]]) for c in cols],
            "floor": duration(row.floor_ms),
        }
        for row in near.rows
    ]
    return {
        "rows": rows,
        "columns": cols,
        "empty": "" if rows else empty_reason(near, where),
        "radius_km": f"{near.radius_km:.0f}",
        "min_samples": readings.real_users.min_samples(),
        "no_city_database": "" if city_database_configured() else no_city_database(),
    }


def no_city_database() -> str:
    """What the panel says while no city database is configured: users are placed by what they send, not where
    they call from."""
    return _(
        "No city database is configured (LATENCY_GEOIP_DATABASE), so real users are not placed by their address: "
        "only by the location their application sends, its cloud region, or their ingest source's default place."
    )
