"""An objective's burn-rate alert channels in the file are channel names, as an alert rule's: exported sorted,
applied by name (planned as a change of channels), refused naming the field when no channel has the name, and a
channel --prune deletes is refused while the file's objective still names it."""

from __future__ import annotations

from probes.models import ServiceLevelObjective
from tests.config_as_code.test_objectives_are_applied_by_name_and_refused_naming_their_field import (
    apply_changed,
    objective,
)


def test_channels_are_named_and_applied_by_name(configured, tmp_path):
    def give(document):
        objective(document, "fast models for our users")["channels"] = ["oncall"]

    run = apply_changed(tmp_path, give)

    assert run.error == ""
    assert '~ update objective "fast models for our users": channels +oncall' in run.out
    names = ServiceLevelObjective.objects.get(name="fast models for our users").channels.values_list("name", flat=True)
    assert list(names) == ["oncall"]


def test_an_unknown_channel_is_refused_naming_the_field(configured, tmp_path):
    def unknown(document):
        objective(document, "claude chat")["channels"] = ["pager"]

    run = apply_changed(tmp_path, unknown)

    assert 'objective "claude chat": channels: no channel "pager" in the file or the database' in run.error
    channels = ServiceLevelObjective.objects.get(name="claude chat").channels.values_list("name", flat=True)
    assert list(channels) == ["oncall"]
