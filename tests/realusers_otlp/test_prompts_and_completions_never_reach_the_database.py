"""No prompt or completion content is ever stored: an instrumentation told to capture content puts the
messages in its spans (gen_ai.input.messages / gen_ai.output.messages), older ones in gen_ai.prompt.* /
gen_ai.completion.* attributes and message events; the receiver reads none of them. Proved by searching every
text and JSON column of every table of the database (observations, rollups, streams, dead letters, sessions,
everything) and the web server's log for the words sent."""

from __future__ import annotations

import time

from django.db import connection
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from probes.models import Observation
from tests.realusers_otlp.conftest import trace_request, wait_for_rows

PROMPT = "Zanzibar-marmalade-41977 is my secret"
SYSTEM = "You are Quetzalcoatl-88213"


def _tables_containing(needle: str) -> list[str]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' "
            "AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'bytea')"
        )
        columns = cur.fetchall()
        found = []
        for table, column in columns:
            cur.execute(
                f'SELECT count(*) FROM "{table}" WHERE position(%s IN "{column}"::text) > 0',
                [needle],
            )
            if cur.fetchone()[0]:
                found.append(f"{table}.{column}")
        return found


def test_content_captured_by_a_real_instrumentation_is_not_stored(site, source, mock_target, instrumented, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_AND_EVENT")
    app = instrumented(site, source)
    seen = InMemorySpanExporter()  # what the exporter to us was given too
    app.tracer_provider.add_span_processor(SimpleSpanProcessor(seen))
    answer, _ = app.chat(prompt=PROMPT, tokens=4)
    [call] = wait_for_rows(Observation, 1)
    assert call.model == "mock-model"
    # The instrumentation did capture both in the span it exported ...
    [span] = seen.get_finished_spans()
    assert PROMPT in span.attributes["gen_ai.input.messages"]
    assert answer and answer in span.attributes["gen_ai.output.messages"]
    # ... and neither the prompt nor the answer is anywhere.
    assert _tables_containing("Zanzibar-marmalade") == []
    assert _tables_containing(answer.strip()[:20]) == []
    assert "Zanzibar" not in site.log()


def test_older_content_attributes_and_message_events_are_dropped(site, source, post):
    t = time.time_ns() - 2_000_000_000
    request = trace_request(
        [
            {
                "start": t,
                "end": t + 800_000_000,
                "attributes": {
                    "gen_ai.system": "openai",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.prompt.0.role": "user",
                    "gen_ai.prompt.0.content": PROMPT,
                    "gen_ai.completion.0.content": PROMPT,
                    "gen_ai.system_instructions": SYSTEM,
                    "gen_ai.input.messages": PROMPT,
                },
                "events": [
                    ("gen_ai.user.message", t + 1, {"content": PROMPT}),
                    ("gen_ai.choice", t + 2, {"message": PROMPT}),
                ],
            }
        ]
    )
    assert post(site, "traces", request.SerializeToString(), token=source.token).status_code == 200
    assert Observation.objects.filter(model="gpt-4o").count() == 1
    assert _tables_containing("Zanzibar-marmalade") == []
    assert _tables_containing("Quetzalcoatl") == []
    assert "Zanzibar" not in site.log()
