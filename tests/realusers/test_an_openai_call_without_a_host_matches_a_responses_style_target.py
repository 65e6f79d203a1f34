"""OpenAI serves both chat completions and the Responses API: a real user's
call from the openai provider with no host matches the one target of its
model whether that target's style is openai or responses; an anthropic call
of the same model does not."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from probes.models import Observation
from probes.realusers import matching
from probes.realusers.store import record
from probes.realusers.types import Observed
from tests.factories import IngestSourceFactory, TargetFactory

pytestmark = pytest.mark.django_db

T = datetime(2026, 11, 20, 12, 10, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fresh_targets():
    matching.forget()
    yield
    matching.forget()


def test_openai_provider_matches_a_responses_target():
    responses = TargetFactory(model="gpt-5-mini", api_style="responses", url="https://api.openai.com/v1/responses")
    source = IngestSourceFactory()
    calls = [
        Observed("span", T, provider="openai", model="gpt-5-mini", total_ms=1.0),
        Observed("span", T, provider="anthropic", model="gpt-5-mini", total_ms=1.0),  # not a style anthropic speaks
    ]
    record(source.id, calls)
    assert list(Observation.objects.order_by("id").values_list("target_id", flat=True)) == [responses.id, None]
