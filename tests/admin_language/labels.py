"""Every English label of ours the admin shows, collected from the models and the admin classes themselves (not a
list typed here, which would miss the next field): models' names, fields' names, help texts and choices, list
columns, filters, fieldsets, actions and inlines of every ModelAdmin registered for a model of the probes app.

`labels()` gives (where, English, Chinese) for each; the tests hold the Chinese to differ from the English, and the
browser test looks for the English on the Chinese pages."""

from __future__ import annotations

import re
from collections.abc import Iterator

from django.contrib import admin
from django.contrib.admin.utils import label_for_field
from django.utils.translation import override

# Words that read the same in Chinese: acronyms, units and proper names (a service's name, a format's).
SAME_IN_BOTH = re.compile(r"^[\sA-Z0-9/.\-_:()%·,+]*$|^p\d+$|^(Apprise URL|Google Gemini)$")

# Django's own words, which its catalog translates on the page (the admin fills them in as the request's language
# is active, not at import).
DJANGOS_OWN = {"Hold down “Control”, or “Command” on a Mac, to select more than one."}


def _a_name(field, value) -> bool:
    """Choices that are names, the same in every language: providers and languages (each in its own tongue)."""
    from probes.engine.providers import PROVIDER_LIST

    return (field.name == "provider" and value in {p.key for p in PROVIDER_LIST}) or field.name == "language"


def _admins() -> Iterator[tuple[type, admin.ModelAdmin]]:
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label == "probes":
            yield model, model_admin


def _field_labels(model, where: str) -> Iterator[tuple[str, object]]:
    opts = model._meta
    yield f"{where} verbose_name", opts.verbose_name
    yield f"{where} verbose_name_plural", opts.verbose_name_plural
    for field in opts.get_fields():
        if not getattr(field, "concrete", False) and not field.many_to_many:
            continue
        if field.auto_created and not field.concrete:
            continue
        if getattr(field, "name", "") == "id":
            continue
        yield f"{where}.{field.name} verbose_name", field.verbose_name
        if field.help_text:
            yield f"{where}.{field.name} help_text", field.help_text
        for value, label in getattr(field, "flatchoices", None) or ():
            if value not in ("", None) and not _a_name(field, value):
                yield f"{where}.{field.name} choice {value}", label


def _admin_labels(model, model_admin) -> Iterator[tuple[str, object]]:
    where = f"{type(model_admin).__name__}"
    for name in model_admin.list_display:
        if name == "__str__" or name == "action_checkbox":
            continue
        yield f"{where} column {name}", _Label(lambda n=name: label_for_field(n, model, model_admin))
    for item in model_admin.list_filter:
        if isinstance(item, type) and hasattr(item, "title"):
            yield f"{where} filter {item.__name__}", item.title
    for title, options in model_admin.fieldsets or ():
        if title:
            yield f"{where} fieldset", title
        if options.get("description"):
            yield f"{where} fieldset description", options["description"]
    for action in model_admin.actions or ():
        func = action if callable(action) else getattr(model_admin, action)
        description = getattr(func, "short_description", None)
        if description:
            yield f"{where} action {getattr(func, '__name__', action)}", description
    if model_admin.search_help_text:
        yield f"{where} search_help_text", model_admin.search_help_text
    for name in model_admin.readonly_fields:
        attribute = getattr(model_admin, name, None)
        if callable(attribute) and getattr(attribute, "short_description", None):
            yield f"{where} readonly {name}", attribute.short_description
    yield from _form_labels(model_admin, where)
    for inline in model_admin.inlines:
        if inline.verbose_name:
            yield f"{where} inline {inline.__name__}", inline.verbose_name
        if inline.verbose_name_plural:
            yield f"{where} inline {inline.__name__} plural", inline.verbose_name_plural
        yield from _field_labels(inline.model, f"{where} inline {inline.model.__name__}")


def _form_labels(model_admin, where: str) -> Iterator[tuple[str, object]]:
    """The add form's own fields (a form may add fields or relabel the model's), as a superuser gets it."""
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = get_user_model()(username="labels", is_staff=True, is_superuser=True)
    if not model_admin.has_add_permission(request):
        return
    for name, field in model_admin.get_form(request).base_fields.items():
        if field.label:
            yield f"{where} form {name} label", field.label
        if field.help_text and str(field.help_text) not in DJANGOS_OWN:
            yield f"{where} form {name} help_text", field.help_text


class _Label:
    """A label that is only known once rendered in a language (a list column's header)."""

    def __init__(self, render):
        self.render = render

    def __str__(self) -> str:
        return str(self.render())


def labels() -> list[tuple[str, str, str]]:
    """(where, English, Chinese) of every label of ours in the admin."""
    from django.apps import apps

    found: dict[tuple[str, str], tuple[str, str, str]] = {}
    app = ("probes app", apps.get_app_config("probes").verbose_name)
    for model, model_admin in _admins():
        items = [app, *_field_labels(model, model.__name__), *_admin_labels(model, model_admin)]
        for where, label in items:
            with override("en"):
                english = str(label)
            with override("zh-hans"):
                chinese = str(label)
            found.setdefault((where, english), (where, english, chinese))
    return sorted(found.values())


def untranslated() -> list[str]:
    """The labels that read the same in Chinese as in English, other than acronyms and names."""
    return [
        f"{where}: {english!r}"
        for where, english, chinese in labels()
        if english == chinese and not SAME_IN_BOTH.match(english)
    ]
