"""A configuration of every kind the file holds, and the command run as a person runs it."""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from devtools.demo_seed import demo_regions, seed
from probes.models import (
    AlertRule,
    ModelGroup,
    NotificationChannel,
    Probe,
    Region,
    ServiceLevelObjective,
    StatusPage,
    Target,
)
from tests.factories import (
    AlertRuleFactory,
    ModelGroupFactory,
    NotificationChannelFactory,
    ProbeFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    StatusPageFactory,
    TargetFactory,
)

ONCALL_URL = "json://hooks.example.com/atlas/oncall-secret-token"


@dataclass(frozen=True)
class Run:
    out: str
    error: str  # the refusal, "" when the command succeeded


def atlas(*args: str) -> Run:
    out = StringIO()
    try:
        call_command("atlas", *args, stdout=out, stderr=StringIO())
    except CommandError as exc:
        return Run(out.getvalue(), str(exc))
    return Run(out.getvalue(), "")


def export_text(tmp_path: Path, name: str = "atlas.yaml") -> Path:
    path = tmp_path / name
    assert atlas("export", "--output", str(path)).error == ""
    return path


def counts() -> dict[str, int]:
    kinds = (Region, Target, NotificationChannel, Probe, AlertRule, ModelGroup, ServiceLevelObjective, StatusPage)
    return {model.__name__: model.objects.count() for model in kinds}


def empty_the_configuration() -> None:
    """What a freshly created database holds of the configuration: nothing (the seeded regions removed too)."""
    StatusPage.objects.all().delete()
    ServiceLevelObjective.objects.all().delete()
    ModelGroup.objects.all().delete()
    AlertRule.objects.all().delete()
    Probe.objects.all().delete()
    NotificationChannel.objects.all().delete()
    Target.objects.all().delete()
    Region.objects.all().delete()


STATUS_HOST = "status.example.org"


@pytest.fixture
def configured(db, monkeypatch, settings):
    """The demo's targets and probes from every seeded region, and beside them one of each thing the demo has
    not: a target with headers, a key variable, a CA bundle and HTTP/2; a Gemini target whose URL names the
    model; a probe from two new regions; a channel whose URL came from the environment; rules of both kinds;
    a model group of two targets and an empty one; an objective over targets from two regions with every
    threshold, and one over the group for a mix of users; a public status page on a domain of its own naming one
    of each, and a private one of defaults."""
    monkeypatch.setenv("ATLAS_ONCALL_URL", ONCALL_URL)
    # A page's hostname must be one the site answers (StatusPage.clean).
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, STATUS_HOST]
    seed("http://127.0.0.1:9", demo_regions())
    lagos, tokyo = RegionFactory(slug="zz-lagos-2", name="Lagos 2"), RegionFactory(slug="zz-tokyo-2", name="Tokyo 2")
    claude = TargetFactory(
        name="claude-eu",
        api_style="anthropic",
        url="https://api.anthropic.com/v1/messages",
        model="claude-3-5-haiku-latest",
        api_key_env="ANTHROPIC_API_KEY",
        headers={"anthropic-version": "2023-06-01", "x-api-key": "${ANTHROPIC_API_KEY}"},
        ca_bundle="corporate-ca.pem",
        http_version="2",
        location_name="GCP europe-west4",
        latitude=53.44,
        longitude=6.84,
    )
    gemini = TargetFactory(
        name="gemini-flash",
        api_style="gemini",
        url="https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent",
        model="gemini-2.0-flash",
        api_key_env="GEMINI_API_KEY",
    )
    ProbeFactory(
        target=claude, name="warm", connection="warm", regions=[lagos, tokyo], interval_seconds=30, timeout_seconds=10.0
    )
    ProbeFactory(target=gemini, name="cold", regions=[lagos], prompt="Count to three.", max_tokens=16)
    oncall = NotificationChannelFactory(name="oncall", url=ONCALL_URL, url_env="ATLAS_ONCALL_URL")
    AlertRuleFactory(name="claude slow", target=claude, regions=[lagos, tokyo], channels=[oncall], min_regions=2)
    AlertRuleFactory(
        name="errors anywhere",
        metric="error_rate",
        percentile="",
        threshold_ms=None,
        threshold_percent=20.0,
        min_regions_percent=50.0,
        channels=[oncall],
    )
    fast = ModelGroupFactory(name="fast models", targets=[gemini, claude])
    ModelGroupFactory(name="nothing yet", targets=[])
    ServiceLevelObjectiveFactory(
        name="claude chat",
        targets=[claude, gemini],
        regions=[lagos, tokyo],
        ttft_threshold_ms=800.0,
        tpot_threshold_ms=40.0,
        total_threshold_ms=5000.0,
        degraded_ttft_threshold_ms=500.5,
        objective_percent="99.95",
        window="calendar_month",
        exclude_silences=False,
        exclude_rate_limited=True,
        channels=[oncall],
    )
    fast_for_users = ServiceLevelObjectiveFactory(
        name="fast models for our users",
        model_group=fast,
        mix={"zz-lagos-2": 60, "zz-tokyo-2": 40},
        enabled=False,
    )
    # No claude-eu nor zz-tokyo-2: the prune tests delete those, and a page naming them would refuse their files.
    StatusPageFactory(
        slug="acme",
        title="Acme APIs",
        description="Our models, as our users see them.",
        language="zh-hans",
        targets=[gemini],
        model_groups=[fast],
        regions=[lagos],
        slos=[fast_for_users],
        show_latency=False,
        public=True,
        hostname=STATUS_HOST,
    )
    StatusPageFactory(slug="internal", title="Internal", public=False)
