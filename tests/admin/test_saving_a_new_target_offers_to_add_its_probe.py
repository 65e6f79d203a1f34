"""A target measures nothing until a probe runs it: saving a new one in the admin says so, with a link to the
probe form with that target already chosen; a user who may not add probes is not offered one."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from probes.models import Target
from tests.admin.test_admin_validation import target_data

pytestmark = pytest.mark.django_db


def offer_links(response) -> list[str]:
    """The links of the page's messages to the probe form (Django's own message links the new target)."""
    links = [
        html.unescape(m)
        for message in response.context["messages"]
        for m in re.findall(r'href="([^"]+)"', str(message))
    ]
    return [link for link in links if link.startswith(reverse("admin:probes_probe_add"))]


def test_the_message_links_to_a_probe_form_with_the_target_chosen(admin_client):
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(), follow=True)
    target = Target.objects.get()
    (link,) = offer_links(response)
    assert link == f"{reverse('admin:probes_probe_add')}?target={target.pk}"
    form = admin_client.get(link).context["adminform"].form
    assert form.initial["target"] == str(target.pk)


def test_no_offer_to_a_user_who_may_not_add_probes(client, django_user_model):
    user = django_user_model.objects.create_user("editor", password="a-long-test-password-5512", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["add_target", "view_target", "change_target"]))
    client.force_login(user)
    response = client.post(reverse("admin:probes_target_add"), target_data(), follow=True)
    assert Target.objects.exists()
    assert offer_links(response) == []
