"""The header the form's "key sent twice" rule looks for (probes.presets.key_header) is the one the engine
really writes the key in, for every style and every preset: the two cannot drift apart."""

import pytest

from probes.engine.providers import PROVIDER_LIST
from probes.engine.result import STYLES, ProbeSpec
from probes.engine.styles import STYLES as STYLE_PLANS
from probes.presets import key_header

KEY = "k-0123456789"


def written_in(spec: ProbeSpec) -> set[str]:
    plan = STYLE_PLANS[spec.style].plan(spec, KEY)
    return {name for name, value in plan.headers.items() if KEY in value}


@pytest.mark.parametrize("style", STYLES)
def test_each_style_sends_its_key_where_the_form_looks_for_it(style):
    spec = ProbeSpec(url="https://api.example.com/v1", style=style, model="m")
    assert written_in(spec) == {key_header(style, None)}


@pytest.mark.parametrize("provider", PROVIDER_LIST, ids=lambda p: p.key)
def test_each_preset_sends_its_key_where_the_form_looks_for_it(provider):
    spec = ProbeSpec(url="https://api.example.com/v1", style=provider.style, model="m", provider=provider.key)
    assert written_in(spec) == {key_header(provider.style, provider)}
