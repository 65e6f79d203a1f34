"""latency.W006: rollups pruned before the raw rows they summarise contradict the retention of those rows."""

from tests.settings_checks.support import latency_ids


def test_rollups_kept_shorter_than_raw_rows_are_warning_w006(settings):
    settings.LATENCY_RETENTION_DAYS = 30
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 7
    assert "latency.W006" in latency_ids()
    settings.LATENCY_ROLLUP_RETENTION_DAYS = 0  # forever
    assert "latency.W006" not in latency_ids()
