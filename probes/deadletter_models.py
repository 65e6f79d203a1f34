"""DeadLetter: what the ingest received and could not store (probes.deadletters writes and reads them).
Registered with the app by probes.models, as the other parts' models are."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class DeadLetter(models.Model):
    """Something the ingest received and could not store, kept whole with the
    reason: a measurement payload that failed validation or that the database
    refused, or a broker message that was not a task message at all.

    Nothing reaching the ingest is dropped silently; these rows are the
    evidence, pruned with raw measurements (LATENCY_RETENTION_DAYS). The ids
    are plain integers, not foreign keys: an unknown id is often the very
    reason, and the letter must outlive a deleted probe.
    """

    received_at = models.DateTimeField(help_text=_("When the ingest rejected it (UTC)."), verbose_name=_("received at"))
    source = models.CharField(
        max_length=200, help_text=_('Where it came from, e.g. "ingest" (the queue).'), verbose_name=_("source")
    )
    reason = models.TextField(verbose_name=_("reason"))
    payload = models.JSONField(
        null=True,
        blank=True,
        help_text=_("What was received, when PostgreSQL's jsonb can hold it as it is."),
        verbose_name=_("payload"),
    )
    payload_text = models.TextField(
        blank=True,
        default="",
        help_text=_("What was received, when it is not JSON or holds what jsonb cannot (NaN, NUL, lone surrogates)."),
        verbose_name=_("payload text"),
    )
    worker = models.CharField(
        max_length=255, blank=True, default="", help_text=_("The sending worker, if named."), verbose_name=_("worker")
    )
    probe_id = models.BigIntegerField(null=True, blank=True, verbose_name=_("probe id"))
    target_id = models.BigIntegerField(null=True, blank=True, verbose_name=_("target id"))
    region_id = models.BigIntegerField(null=True, blank=True, verbose_name=_("region id"))
    # Which ingest message, and which payload of it, a letter is about: a message delivered again (a worker
    # killed before it acknowledged) records its letters once (probes.fleet.trust.message_identity).
    message_id = models.CharField(
        max_length=64,
        null=True,
        blank=True,
        help_text=_("The ingest message: its task id, or a digest of it when it has none."),
        verbose_name=_("message id"),
    )
    payload_index = models.IntegerField(
        null=True,
        blank=True,
        help_text=_("The payload's place in the message's list; empty for the whole message."),
        verbose_name=_("payload index"),
    )

    class Meta:
        ordering = ["-received_at"]
        indexes = [
            # The dashboard's 24 h count and retention pruning.
            models.Index(fields=["received_at"], name="dead_letter_received"),
        ]
        constraints = [
            # One letter per message and payload (-1: the message as a whole), written insert-or-ignore. Letters
            # kept before it, and those of no ingest message (a broker message no task reads), have no
            # message_id and stay outside it.
            models.UniqueConstraint(
                F("message_id"),
                Coalesce(F("payload_index"), Value(-1)),
                name="dead_letter_once_per_message_payload",
                condition=Q(message_id__isnull=False),
            ),
        ]
        verbose_name = _("dead letter")
        verbose_name_plural = _("dead letters")

    def __str__(self) -> str:
        when = self.received_at.strftime("%Y-%m-%d %H:%M:%S") if self.received_at else "?"
        return gettext("rejected at %(at)s UTC: %(reason)s") % {"at": when, "reason": self.reason[:80]}
