"""Every /api/v1/ operation, driven by schemathesis from the schema the site serves (a real uvicorn), with an
editor's token: no answer is a 5xx, and every answer's status, content type and body are what the schema says.

Valid requests (the schema's own shapes) and invalid ones (each part broken in turn) are both sent; a few dozen
of each per operation keeps the run well under two minutes on a busy machine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.factories import (
    IncidentFactory,
    MeasurementFactory,
    ModelGroupFactory,
    ProbeFactory,
    ServiceLevelObjectiveFactory,
    SLOHourCountFactory,
    StatusPageFactory,
    WorkerFactory,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = {GenerationMode.POSITIVE: 12, GenerationMode.NEGATIVE: 8}


@pytest.fixture
def data(transactional_db):
    probe = ProbeFactory()
    region = probe.regions.get()
    now = datetime.now(UTC)
    for minutes in range(5):
        MeasurementFactory(
            probe=probe, region=region, scheduled_for=now - timedelta(minutes=minutes), ttfat_ms=None, dns_ms=None
        )
    WorkerFactory(region=region)
    IncidentFactory(target=probe.target)
    # The model groups' list, detail and leaderboard answer with rows, not only with empty lists and 404s.
    ModelGroupFactory(targets=[probe.target])
    # And the objectives' list and detail; counted, with an hour of counts, so its status and report have rows.
    objective = ServiceLevelObjectiveFactory(
        targets=[probe.target], mix={region.slug: 1.0}, degraded_ttft_threshold_ms=400.0
    )
    objective.counted_condition = objective.condition_fingerprint()
    objective.exact_since = now - timedelta(days=1)
    objective.save(update_fields=["counted_condition", "exact_since"])
    hour = now.replace(minute=0, second=0, microsecond=0)
    SLOHourCountFactory(objective=objective, target=probe.target, region=region, hour=hour - timedelta(hours=1))
    # And the status pages', a page naming one object of each kind.
    StatusPageFactory(targets=[probe.target], regions=[region], slos=[objective])


def test_every_operation_answers_as_its_schema_says(site, roles, data):
    auth = {"Authorization": f"Bearer {roles.editor.token}"}
    schema = schemathesis.openapi.from_url(f"{site.origin}/api/v1/schema/", headers=auth, timeout=30)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20, [op.label for op in operations]
    session = requests.Session()
    for operation in operations:
        for mode, examples in EXAMPLES.items():

            @settings(
                max_examples=examples,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def call(case):
                case.call_and_validate(base_url=site.origin, session=session, headers=auth, checks=CHECKS, timeout=30)

            call()
