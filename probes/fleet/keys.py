"""Region credentials on the central side: making one (shown once), rotating
with an overlap, and finding the key a signed message names."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import transaction

from probes.worker.protocol import BadCredential, Credential, PublicKey

# How long the previous credential keeps working after a rotation unless told
# otherwise: time to put the new one on the region's hosts and restart them.
DEFAULT_OVERLAP = timedelta(hours=24)


@dataclass(frozen=True)
class IssuedKey:
    credential: str  # shown once, never stored
    key_id: str
    retired: int  # earlier keys given an end by this rotation
    old_keys_retire_at: datetime | None


def issue_key(
    region, *, overlap: timedelta = DEFAULT_OVERLAP, note: str = "", now: datetime | None = None
) -> IssuedKey:
    """A new credential for `region`. Keys already in force stop being
    accepted after `overlap` (at once with timedelta(0)); a key that was
    already set to retire sooner keeps its earlier end."""
    from probes.fleet.central import public_keys
    from probes.models import Region, RegionKey

    now = now or datetime.now(UTC)
    # The central keys in force go inside the credential: the one variable a region host sets carries what
    # it needs to believe the central site's run orders and replies.
    credential, text = Credential.new(public_keys(now))
    ends = now + overlap
    with transaction.atomic():
        # Locked: two rotations at once must not both leave their old keys in force.
        Region.objects.select_for_update().filter(pk=region.pk).exists()
        live = RegionKey.objects.filter(region=region).exclude(retires_at__lte=now)
        retired = live.filter(retires_at__isnull=True).update(retires_at=ends)
        retired += live.filter(retires_at__gt=ends).update(retires_at=ends)
        RegionKey.objects.create(
            region=region,
            key_id=credential.key_id,
            public_key=credential.public_key,
            created_at=now,
            note=note[:200],
        )
    return IssuedKey(text, credential.key_id, retired, ends if retired else None)


def refusal_of(text: str, region, now: datetime | None = None) -> str | None:
    """Why the credential `text` would not serve `region` from now on, or None: not a credential, not a key of
    this region, retired or retiring, or missing a central key in force (a worker holding it could not believe
    every run order). Never quotes the credential."""
    from probes.fleet.central import public_keys
    from probes.models import RegionKey

    now = now or datetime.now(UTC)
    try:
        credential = Credential.parse(text, region=region.slug)
    except BadCredential as exc:
        return str(exc)
    key = RegionKey.objects.filter(key_id=credential.key_id).first()
    if key is None or key.region_id != region.pk:
        return f"key {credential.key_id} is not a key of region {region.slug}"
    if key.retires_at is not None:
        # Retiring after an overlap is as good as retired for a file a worker will read from now on.
        verb = "was retired" if key.retires_at <= now else "retires"
        return f"key {credential.key_id} {verb} at {key.retires_at:%Y-%m-%d %H:%M:%S} UTC"
    missing = {k.key_id for k in public_keys(now)} - set(credential.central_keys())
    if missing:
        return f"key {credential.key_id} lacks the central key {sorted(missing)[0]} in force"
    return None


@dataclass(frozen=True)
class KnownKey:
    key: PublicKey
    region_id: int
    region_slug: str
    region_active: bool
    retires_at: datetime | None

    def problem(self, claimed_region: str, now: datetime) -> str | None:
        """Why a message signed with this key for `claimed_region` is refused, or None."""
        if claimed_region != self.region_slug:
            return (
                f"key {self.key.key_id} belongs to region {self.region_slug}, "
                f"not to {claimed_region}: a region's credential speaks only for that region"
            )
        if self.retires_at is not None and self.retires_at <= now:
            return (
                f"key {self.key.key_id} of region {self.region_slug} was retired at "
                f"{self.retires_at:%Y-%m-%d %H:%M:%S} UTC: install the region's current credential"
            )
        return None


def known_keys(key_ids) -> dict[str, KnownKey]:
    """The stored keys among `key_ids`, whatever their state."""
    from probes.models import RegionKey

    # Values, not model instances: ingest asks once per batch, and a key's region needs only these.
    found = RegionKey.objects.filter(key_id__in=set(key_ids)).values_list(
        "key_id", "public_key", "region_id", "region__slug", "region__active", "retires_at"
    )
    return {
        key_id: KnownKey(PublicKey(key_id, public_key), region_id, slug, active, retires_at)
        for key_id, public_key, region_id, slug, active, retires_at in found
    }


def unknown_key_reason(key_id: str, region: str) -> str:
    return f"key {key_id} is not a credential of this site (claimed region {region}): a wrong or deleted credential"
