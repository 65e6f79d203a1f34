"""`manage.py atlas apply`: make the database match a file, in one transaction, and say what that takes.

Each object of the file goes through the admin's own form for its model (the model's full_clean() and the
checks only a form can make: a probe needs a region, a rule that can never or always fire is refused, a
channel's URL must be one Apprise understands): one set of rules, so a file is refused exactly where the admin
would refuse the same values. The plan is the difference between the stored object and the cleaned one, so a
value the rules normalise is compared as it will be stored, and a second apply finds nothing to do.

Every object is written in the same transaction, in the file's order (what a row names exists before it):
regions, targets, channels, probes, then alert rules, judged against the probes as the file leaves them, model
groups, objectives and status pages. Any problem, or --dry-run, rolls all of it back.

--prune deletes the objects of each section the file has that the file does not name (a section left out of
the file is not managed by it). An object that measurements or rollups refer to is never deleted: its history
is kept (on_delete=PROTECT), and the plan says which ones and refuses the file. Keep it in the file, disabled,
until retention has removed its history.
"""

from __future__ import annotations

import hmac
import json
import os
from collections import Counter
from dataclasses import dataclass, fields
from functools import cache, partial
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, models, router, transaction
from django.db.models.deletion import Collector

from probes.config_as_code.export import model_of, refs_of, row_of
from probes.config_as_code.rows import (
    ALERT_RULES,
    BY_SECTION,
    CHANNELS,
    MODEL_GROUPS,
    OBJECTIVES,
    PROBES,
    REGIONS,
    STATUS_PAGES,
    TARGETS,
    Kind,
    Row,
)
from probes.config_as_code.schema import Document, Problem
from probes.engine.envpolicy import SITE_VARIABLES, site_rule
from probes.rollups.locks import LockSpace
from probes.statuspages.services import forget_on_commit

CREATE = "create"
UPDATE = "update"
DELETE = "delete"
KEEP = "keep"  # a deletion --prune refused
_MARKS = {CREATE: "+", UPDATE: "~", DELETE: "-", KEEP: "!"}
_SHOWN_CHARS = 60


@dataclass(frozen=True)
class Change:
    field: str
    before: str
    after: str

    def __str__(self) -> str:
        if self.field in ("regions", "channels") or not self.before:
            return f"{self.field} {self.after}"
        return f"{self.field} {self.before} -> {self.after}"


@dataclass(frozen=True)
class Step:
    """One line of the plan."""

    action: str  # CREATE, UPDATE, DELETE or KEEP
    label: str  # 'target "gpt-eu"'
    changes: tuple[Change, ...] = ()
    detail: str = ""

    def __str__(self) -> str:
        text = f"{_MARKS[self.action]} {self.action} {self.label}"
        if self.changes:
            text += ": " + "; ".join(str(change) for change in self.changes)
        if self.detail:
            text += f" ({self.detail})"
        return text


@dataclass(frozen=True)
class Outcome:
    steps: tuple[Step, ...]
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]
    applied: bool  # committed: no problem, not a dry run, something to do

    def count(self, action: str) -> int:
        return sum(1 for step in self.steps if step.action == action)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def diff(before: Row | None, after: Row) -> tuple[Change, ...]:
    if before is None:
        return ()
    changes = []
    for field in fields(after):
        old, new = getattr(before, field.name), getattr(after, field.name)
        if old == new:
            continue
        if isinstance(new, tuple):
            added = [f"+{name}" for name in new if name not in old]
            removed = [f"-{name}" for name in old if name not in new]
            changes.append(Change(field.name, "", " ".join(added + removed)))
        else:
            changes.append(Change(field.name, _show(old), _show(new)))
    return tuple(changes)


@cache
def _form_class(section: str) -> type[forms.ModelForm]:
    # The admin's forms where it has its own; a plain ModelForm where the admin has none (its default).
    if section == PROBES.section:
        from probes.forms import ProbeAdminForm

        return ProbeAdminForm
    if section == ALERT_RULES.section:
        from probes.alerts.rules_admin import AlertRuleAdminForm

        return AlertRuleAdminForm
    if section == CHANNELS.section:
        from probes.alerts.channels_admin import NotificationChannelForm

        return NotificationChannelForm
    if section == OBJECTIVES.section:
        from probes.slos.admin import ObjectiveAdminForm

        return ObjectiveAdminForm
    kind = BY_SECTION[section]
    return forms.modelform_factory(model_of(kind), fields=kind.field_names())


def _lookup(kind: Kind, key: tuple[str, ...]) -> dict[str, str]:
    if kind is PROBES:
        return {"target__name": key[0], "name": key[1]}
    return {kind.key[0]: key[0]}


def _key_of(kind: Kind, obj: Any) -> tuple[str, ...]:
    if kind is PROBES:
        return (obj.target.name, obj.name)
    return (getattr(obj, kind.key[0]),)


def _protected_by(obj: models.Model) -> list[str]:
    """What refers to `obj` with on_delete=PROTECT, by name. Asked with EXISTS, relation by relation: the
    deletion collector would load every protected row, millions of measurements for a target."""
    names = []
    for relation in obj._meta.related_objects:
        if getattr(relation, "on_delete", None) not in (models.PROTECT, models.RESTRICT):
            continue
        if relation.related_model._default_manager.filter(**{relation.field.name: obj}).exists():
            names.append(str(relation.related_model._meta.verbose_name_plural))
    return names


def _delete(obj: models.Model) -> str:
    """Deletes `obj`, and says what went with it (as the admin's confirmation page lists it)."""
    collector = Collector(using=router.db_for_write(type(obj)))
    collector.collect([obj])
    counts: Counter[type[models.Model]] = Counter()
    for model, instances in collector.data.items():
        counts[model] += len(instances) - (1 if model is type(obj) else 0)
    for queryset in collector.fast_deletes:
        counts[queryset.model] += queryset.count()
    obj.delete()
    named = {
        str(model._meta.verbose_name if count == 1 else model._meta.verbose_name_plural): count
        for model, count in counts.items()
        if count and not model._meta.auto_created  # many-to-many links: the objects they join are what counts
    }
    parts = [f"{count} {name}" for name, count in sorted(named.items())]
    return "with " + ", ".join(parts) if parts else ""


class _Run:
    def __init__(self, document: Document, prune: bool) -> None:
        self.document = document
        self.prune = prune
        self.steps: list[Step] = []
        self.problems: list[Problem] = []
        self.notes: list[str] = []
        # Keys of objects the file gives that were refused: what names them is skipped, not refused again.
        self.refused: set[tuple[str, tuple[str, ...]]] = set()

    # Relations --------------------------------------------------------------------------------------------

    def _pk(self, section: str, name: str, label: str, field: str) -> int | None:
        kind = BY_SECTION[section]
        named = self.document.keys(section)
        if (section, (name,)) in self.refused:
            return None
        if named is not None and self.prune and (name,) not in named:
            self.problems.append(
                Problem(label, field, f"{kind.label((name,))} is not in the file, and --prune deletes it")
            )
            return None
        pk = model_of(kind).objects.filter(**_lookup(kind, (name,))).values_list("pk", flat=True).first()
        if pk is None:
            self.problems.append(Problem(label, field, f"no {kind.label((name,))} in the file or the database"))
        return pk

    def _resolve(self, kind: Kind, row: Row, label: str) -> dict[str, Any] | None:
        """The row's relations as the forms take them (primary keys), or None if one cannot be had."""
        out: dict[str, Any] = {}
        complete = True
        for field, section in kind.refs:
            value = getattr(row, field)
            names = value if isinstance(value, tuple) else (() if value is None else (value,))
            pks = [self._pk(section, name, label, field) for name in names]
            complete = complete and None not in pks
            out[field] = pks if isinstance(value, tuple) else (pks[0] if pks else None)
        return out if complete else None

    def _mix_kept(self, row: Any, label: str) -> bool:
        """Whether every region of an objective's mix outlives the apply. The mix names regions by slug in a JSON
        column, which protects none: a region --prune deletes would leave the mix naming nothing."""
        named = self.document.keys(REGIONS.section)
        if not self.prune or named is None:
            return True
        gone = sorted(slug for slug in row.mix if (slug,) not in named)
        for slug in gone:
            self.problems.append(
                Problem(label, "mix", f"{REGIONS.label((slug,))} is not in the file, and --prune deletes it")
            )
        return not gone

    # Creating and updating --------------------------------------------------------------------------------

    def _channel_url(self, row: Any, existing: Any, label: str) -> tuple[str | None, bool]:
        """(the Apprise URL to store, read from url_env, or None to keep the stored one; whether the channel can
        be written). The URL is never shown."""
        from probes.alerts.secrets import UnreadableURL, decrypt_url
        from probes.models import validate_env_name

        if not row.url_env:
            if existing is None:
                self.problems.append(
                    Problem(
                        label,
                        "url_env",
                        "the channel is not in the database and its Apprise URL is a secret that never goes in "
                        "the file: name the environment variable holding it in url_env, or create the channel in "
                        "the admin",
                    )
                )
            return None, existing is not None
        if site_rule(row.url_env) is not None:
            # Its value would become where the site's notifications go: the broker's or the database's URL
            # handed to any webhook a file names.
            self.problems.append(
                Problem(
                    label,
                    "url_env",
                    f"{row.url_env} is one of the site's own variables ({SITE_VARIABLES}): a channel's URL is never "
                    "read from one; give the URL a variable of its own",
                )
            )
            return None, False
        try:
            validate_env_name(row.url_env)
        except ValidationError as exc:
            self.problems.extend(Problem(label, "url_env", message) for message in exc.messages)
            return None, False
        url = os.environ.get(row.url_env, "").strip()
        same_variable = existing is not None and existing.url_env == row.url_env
        if not url:
            if not same_variable:
                self.problems.append(
                    Problem(label, "url_env", f"{row.url_env} is not set: the channel's URL is read from it")
                )
                return None, False
            self.notes.append(f"{label}: {row.url_env} is not set here; the stored URL is kept")
            return None, True
        if same_variable:
            try:
                stored = decrypt_url(existing.apprise_url)
            except UnreadableURL:
                return url, True
            if hmac.compare_digest(stored.encode(), url.encode()):
                return None, True
        return url, True

    def _form(self, kind: Kind, row: Any, refs: dict[str, Any], existing: Any, url: str | None) -> Any:
        data = {name: refs.get(name, getattr(row, name)) for name in kind.field_names()}
        if kind is CHANNELS:
            data = {"name": row.name, "enabled": row.enabled, "language": row.language, "apprise_url": url or ""}
        instance = existing if existing is not None else model_of(kind)()
        return _form_class(kind.section)(data=data, instance=instance)

    def upsert(self, kind: Kind) -> None:
        for row in self.document.sections.get(kind.section, ()):
            key = kind.key_of(row)
            label = kind.label(key)
            refs = self._resolve(kind, row, label)
            existing = model_of(kind).objects.filter(**_lookup(kind, key)).first()
            url, writable = self._channel_url(row, existing, label) if kind is CHANNELS else (None, True)
            if kind is OBJECTIVES:
                writable = self._mix_kept(row, label)
            if refs is None or not writable:
                self.refused.add((kind.section, key))
                continue
            before = row_of(kind, existing, refs_of(kind, existing)) if existing is not None else None
            form = self._form(kind, row, refs, existing, url)
            if not form.is_valid():
                self.refused.add((kind.section, key))
                for field, messages in form.errors.items():
                    shown = "" if field == "__all__" else ("url_env" if field == "apprise_url" else field)
                    prefix = f"${row.url_env}: " if field == "apprise_url" else ""
                    self.problems.extend(Problem(label, shown, prefix + message) for message in messages)
                continue
            after = row_of(kind, form.instance, {field: getattr(row, field) for field, _ in kind.refs})
            if kind is CHANNELS:
                after = CHANNELS.row(
                    name=form.instance.name,
                    enabled=form.instance.enabled,
                    url_env=row.url_env,
                    language=form.instance.language,
                )
            changes = diff(before, after)
            if url is not None and existing is not None:
                changes += (Change("url", "", f"read from ${row.url_env}"),)
            if existing is not None and not changes:
                continue
            if kind is CHANNELS:
                channel = form.save(commit=False)
                channel.url_env = row.url_env
                channel.save()
            else:
                form.save()
            if kind is OBJECTIVES:
                # Once the whole file is committed (never after a dry run or a refusal): counts made under a
                # condition the file changed are emptied (probes.slos.services).
                from probes.slos.services import objective_saved

                transaction.on_commit(partial(objective_saved, form.instance.pk))
            elif kind is MODEL_GROUPS:
                # Objectives over a group count its targets: a change of them is a change of their coverage.
                from probes.slos.services import reconcile

                transaction.on_commit(reconcile)
            elif kind is STATUS_PAGES:
                # Readers get the cached page until it is forgotten (probes.statuspages.cache).
                forget_on_commit(form.instance.slug)
            self.steps.append(Step(CREATE if existing is None else UPDATE, label, changes))

    # Pruning ----------------------------------------------------------------------------------------------

    def prune_kind(self, kind: Kind) -> None:
        named = self.document.keys(kind.section)
        if not self.prune or named is None:
            return
        queryset = model_of(kind).objects.all()
        if kind is PROBES:
            queryset = queryset.select_related("target")
        for obj in sorted(queryset, key=lambda o: _key_of(kind, o)):
            key = _key_of(kind, obj)
            if key in named:
                continue
            label = kind.label(key)
            protected = _protected_by(obj)
            if protected:
                history = ", ".join(protected)
                self.steps.append(Step(KEEP, label, detail=f"--prune cannot delete it: {history} refer to it"))
                self.problems.append(
                    Problem(
                        label,
                        "",
                        f"--prune cannot delete it: its {history} are kept as history (PROTECT). Keep it in the "
                        "file, disabled (enabled: false; a region active: false), until retention has removed "
                        "its history",
                    )
                )
                continue
            self.steps.append(Step(DELETE, label, detail=_delete(obj)))
            if kind is STATUS_PAGES:
                forget_on_commit(obj.slug)


def apply_document(document: Document, *, prune: bool = False, dry_run: bool = False) -> Outcome:
    """Makes the database match `document` (all of it or nothing), or, with dry_run, only says what that
    takes. Problems refuse the whole file."""
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, 0)", [int(LockSpace.CONFIG_APPLY)])
            run = _Run(document, prune)
            for kind in (REGIONS, TARGETS, CHANNELS, PROBES):
                run.upsert(kind)
            # Before the rules are judged: whether a rule can fire depends on the probes left.
            run.prune_kind(ALERT_RULES)
            run.prune_kind(PROBES)
            run.upsert(ALERT_RULES)
            run.upsert(MODEL_GROUPS)
            run.upsert(OBJECTIVES)
            run.upsert(STATUS_PAGES)
            # Nothing protects a status page, and it protects none of what it names: its place in the order is free.
            run.prune_kind(STATUS_PAGES)
            # Before the model groups: an objective protects the group it covers.
            run.prune_kind(OBJECTIVES)
            run.prune_kind(MODEL_GROUPS)
            for kind in (CHANNELS, TARGETS, REGIONS):
                run.prune_kind(kind)
            if run.problems or dry_run:
                transaction.set_rollback(True)
    except DatabaseError as exc:
        # A write the forms let through and PostgreSQL refused (another session changed a row meanwhile).
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Outcome((), (Problem("the database", "", first_line),), (), False)
    applied = not run.problems and not dry_run and bool(run.steps)
    return Outcome(tuple(run.steps), tuple(run.problems), tuple(run.notes), applied)
