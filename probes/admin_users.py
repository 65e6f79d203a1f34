"""Users and groups in the admin: Django's own admins, with rights kept to superusers.

Django's stock UserAdmin lets a staff user with "change user" tick is_superuser on their own account, and its
GroupAdmin lets one with "change group" give their group any permission: either raises their rights, and the
admin's permissions are also the API's (/api/v1/, latency.api_v1.permissions). Here:
- only superusers see or change RIGHTS (is_superuser, is_staff, groups, user_permissions): the fields are left
  out of everyone else's forms, lists and filters, and a form posting them anyway is refused (403);
- a non-superuser may change or delete only accounts that hold no right they lack themselves (never a
  superuser's), password included, so taking over an account never gains them anything;
- only superusers see or change a group's permissions.
A user added by a non-superuser holds no rights: the add form has none to give. Registered from probes.admin."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import PermissionDenied
from django.db.models import Q

RIGHTS = ("is_superuser", "is_staff", "groups", "user_permissions")


def _without(fieldsets, names) -> tuple:
    """`fieldsets` without the fields `names` (and without a fieldset left empty)."""
    kept = []
    for title, options in fieldsets:
        fields = tuple(f for f in options["fields"] if f not in names)
        if fields:
            kept.append((title, {**options, "fields": fields}))
    return tuple(kept)


def granted(user) -> set[str]:
    """The permissions `user` holds directly or through a group, as "app_label.codename", whether or not the
    account is active (ModelBackend counts none for an inactive one, which may be activated again)."""
    rows = Permission.objects.filter(Q(user=user) | Q(group__user=user)).values_list(
        "content_type__app_label", "codename"
    )
    return {f"{app}.{codename}" for app, codename in rows}


def may_manage(actor, account) -> bool:
    """Whether `actor` may change or delete `account`: a superuser may; anyone else only an account that is no
    superuser and holds no permission `actor` lacks (their own included)."""
    if actor.is_superuser:
        return True
    if account.is_superuser:
        return False
    return granted(account) <= actor.get_all_permissions()


def refuse_posted(request, names) -> None:
    """A non-superuser's POST naming any of `names` (fields their form does not have) is refused outright,
    rather than silently dropped, so a forged form is seen as one."""
    if request.method == "POST" and not request.user.is_superuser and any(name in request.POST for name in names):
        raise PermissionDenied


admin.site.unregister(get_user_model())
admin.site.unregister(Group)


@admin.register(get_user_model())
class UserAdmin(auth_admin.UserAdmin):
    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        return fieldsets if request.user.is_superuser else _without(fieldsets, RIGHTS)

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        return shown if request.user.is_superuser else tuple(f for f in shown if f not in RIGHTS)

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        return filters if request.user.is_superuser else tuple(f for f in filters if f not in RIGHTS)

    def lookup_allowed(self, lookup, value, request=None):
        # ?is_superuser__exact=1 would list the superusers even without the filter on the page.
        if request is not None and not request.user.is_superuser and lookup.split("__")[0] in RIGHTS:
            return False
        return super().lookup_allowed(lookup, value, request)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and (obj is None or may_manage(request.user, obj))

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and (obj is None or may_manage(request.user, obj))

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        refuse_posted(request, RIGHTS)
        return super().changeform_view(request, object_id, form_url, extra_context)


@admin.register(Group)
class GroupAdmin(auth_admin.GroupAdmin):
    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return fields if request.user.is_superuser else [f for f in fields if f != "permissions"]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        refuse_posted(request, ("permissions",))
        return super().changeform_view(request, object_id, form_url, extra_context)
