"""The admin's objective form has the channels its burn-rate alerts go to (the same list of fields as the API and
the file: probes.slos.rules.EDITABLE_FIELDS); choosing them changes no count, the good call being the same."""

from __future__ import annotations

import pytest

from probes.models import SLOHourCount
from tests.factories import NotificationChannelFactory
from tests.slos_config.test_saving_empties_the_counts_only_when_the_good_call_or_coverage_changes import (  # noqa: F401
    counted,
    post_change,
)

pytestmark = pytest.mark.django_db


def test_channels_are_chosen_in_the_form_and_keep_the_counts(admin_client, counted, django_capture_on_commit_callbacks):  # noqa: F811
    ops, pager = NotificationChannelFactory(name="ops"), NotificationChannelFactory(name="pager")
    form = admin_client.get(f"/admin/probes/servicelevelobjective/{counted.pk}/change/").content.decode()
    assert 'name="channels"' in form and "Burn-rate alerts" in form

    post_change(admin_client, counted, django_capture_on_commit_callbacks, channels=[ops.pk, pager.pk])

    assert sorted(counted.channels.values_list("name", flat=True)) == ["ops", "pager"]
    assert SLOHourCount.objects.filter(objective=counted).count() == 3
