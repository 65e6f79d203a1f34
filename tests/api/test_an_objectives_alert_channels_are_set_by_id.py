"""/api/v1/slos/: where an objective's burn-rate alerts go is a list of notification channel ids, as a body gives
and an answer reads; a channel that does not exist is a 400 naming the field, and a partial update leaves the
channels as they were."""

from __future__ import annotations

import pytest

from probes.models import ServiceLevelObjective
from tests.api.test_objectives_are_created_read_changed_and_deleted_by_id import LIST, body, send
from tests.factories import NotificationChannelFactory, TargetFactory

pytestmark = pytest.mark.django_db


def test_channels_are_set_read_and_kept_by_id(client, roles):
    target = TargetFactory()
    ops, pager = NotificationChannelFactory(name="ops"), NotificationChannelFactory(name="pager")

    created = send(client, "post", roles.editor, LIST, body(targets=[target.pk], channels=[ops.pk, pager.pk]))

    assert created.status_code == 201, created.content
    assert sorted(created.json()["channels"]) == sorted([ops.pk, pager.pk])
    url = f"{LIST}{created.json()['id']}/"
    assert (
        send(client, "patch", roles.editor, url, {"name": "renamed"}).json()["channels"] == created.json()["channels"]
    )
    assert send(client, "patch", roles.editor, url, {"channels": [pager.pk]}).json()["channels"] == [pager.pk]
    assert list(ServiceLevelObjective.objects.get().channels.all()) == [pager]


def test_a_channel_that_does_not_exist_is_a_400_naming_the_field(client, roles):
    response = send(client, "post", roles.editor, LIST, body(targets=[TargetFactory().pk], channels=[987654]))

    assert response.status_code == 400 and list(response.json()) == ["channels"], response.json()
    assert not ServiceLevelObjective.objects.exists()
