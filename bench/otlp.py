#!/usr/bin/env python
"""How many GenAI spans per second does one web process take from an OTLP exporter into Postgres?

The site runs as one uvicorn process (`uvicorn latency.asgi:application`, one worker, no access log) on the
bench's own database (latency_otlpbench, created and migrated, reused when present). The official exporter
(opentelemetry-exporter-otlp-proto-http's OTLPSpanExporter, protobuf, with an ingest source's token) exports
--batches batches of 512 pre-built GenAI spans (SDK ReadableSpans: the exporter encodes them, as a
BatchSpanProcessor's export would), one after the other. The spans look like what instrumented applications
send: chat calls of 4 models at 3 hosts (two of them configured targets), half with
gen_ai.response.time_to_first_chunk, 2% failed, from 8 resources (service instances) placed by geo.* or
cloud.* attributes or not at all, plus the usual request attributes (content is not captured).

Measured per run (--runs, median reported), after truncating the observations and rollups:
  - spans/s = spans stored / (first export's start -> last export's answer); every export must succeed and
    the Observation table must hold exactly the spans sent;
  - the web process's peak resident memory over the whole bench (VmHWM of /proc/<pid>/status).
Reference, in this process: the same rows (the stored observations, read back) loaded into probes_observation
with one psycopg `COPY ... FROM STDIN` and a commit, after truncating it; the receiver's rate is printed as a
fraction of that rate.

Goal: at least 5,000 spans/s for the one web process.

    .venv/bin/python -m devtools.embedded run -- .venv/bin/python bench/otlp.py [--runs 5] [--batches 40]
        [--profile] [--json]

(or with DATABASE_URL / REDIS_URL naming servers: the bench uses its own database on that server.)
--profile adds an in-process cProfile of one batch through parse + export_traces (no HTTP).

Exit status: 0 when the benchmark ran (see PASS/MISS), 1 when it could not run or stored the wrong rows.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from devtools import harness  # noqa: E402
from devtools.harness import BenchError, UvicornServer, machine_context, manage  # noqa: E402

GOAL_SPANS_PER_S = 5000.0
BATCH = 512
BENCH_DB = "latency_otlpbench"
CHANNEL_PREFIX = "latency-otlpbench"
SOURCE_NAME = "otlp-bench"

MODELS = [("api.openai.com", "gpt-4o-mini", "openai"), ("api.openai.com", "gpt-4o", "openai"),
          ("api.anthropic.com", "claude-sonnet-4", "anthropic"), ("llm.internal", "llama-3-70b", "vllm")]  # fmt: skip
RESOURCES = [
    {"geo.country.iso_code": "NG", "geo.locality.name": "Lagos", "geo.location.lat": 6.45, "geo.location.lon": 3.39},
    {"geo.country.iso_code": "GB", "geo.locality.name": "London"},
    {"cloud.provider": "aws", "cloud.region": "eu-west-1"},
    {"cloud.provider": "gcp", "cloud.region": "asia-southeast1"},
    {"geo.country.iso_code": "BR", "geo.locality.name": "São Paulo"},
    {"cloud.provider": "azure", "cloud.region": "westeurope"},
    {},  # no place of its own: the sender's address (loopback: none)
    {"geo.country.iso_code": "IN", "geo.locality.name": "Mumbai", "geo.location.lat": 19.08, "geo.location.lon": 72.88},
]


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def build_batches(batches: int, seed: int) -> list[list]:
    """Pre-built SDK spans, BATCH per batch, as instrumented applications make them."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode

    rng = random.Random(seed)
    resources = [
        Resource.create({"service.name": f"chat-app-{i}", "service.instance.id": f"pod-{i}", **attrs})
        for i, attrs in enumerate(RESOURCES)
    ]
    scope = InstrumentationScope("opentelemetry.instrumentation.openai_v2", "2.4b0")
    now = time.time_ns()
    out = []
    for b in range(batches):
        spans = []
        for i in range(BATCH):
            host, model, provider = MODELS[rng.randrange(len(MODELS))]
            start = now - rng.randrange(1, 3_000) * 1_000_000_000
            total = rng.uniform(0.3, 8.0)
            attributes: dict = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
                "gen_ai.response.model": f"{model}-2025-01-01",
                "gen_ai.response.id": f"chatcmpl-{b}-{i}",
                "gen_ai.response.finish_reasons": ("stop",),
                "gen_ai.request.temperature": 0.7,
                "gen_ai.request.max_tokens": 1024,
                "gen_ai.usage.input_tokens": rng.randrange(20, 4000),
                "gen_ai.usage.output_tokens": rng.randrange(1, 1200),
                "server.address": host,
                "server.port": 443,
            }
            if rng.random() < 0.5:
                attributes["gen_ai.response.time_to_first_chunk"] = total * rng.uniform(0.05, 0.4)
            status = Status(StatusCode.UNSET)
            if rng.random() < 0.02:
                attributes["error.type"] = "RateLimitError"
                status = Status(StatusCode.ERROR, "rate limited")
            context = SpanContext(rng.getrandbits(128), rng.getrandbits(64), is_remote=False)
            spans.append(
                ReadableSpan(
                    name=f"chat {model}",
                    context=context,
                    resource=resources[rng.randrange(len(resources))],
                    attributes=attributes,
                    kind=SpanKind.CLIENT,
                    status=status,
                    start_time=start,
                    end_time=start + int(total * 1e9),
                    instrumentation_scope=scope,
                )
            )
        out.append(spans)
    return out


def peak_rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def pg_connect():
    import psycopg
    from django.conf import settings

    db = settings.DATABASES["default"]
    params = {"dbname": db["NAME"], "user": db["USER"] or None, "password": db["PASSWORD"] or None,
              "host": db["HOST"] or None, "port": db["PORT"] or None, **db.get("OPTIONS", {})}  # fmt: skip
    return psycopg.connect(**{k: v for k, v in params.items() if v is not None}, autocommit=True)


def truncate(conn) -> None:
    conn.execute("TRUNCATE probes_observation, probes_observationrollup, probes_spanresource RESTART IDENTITY")


def export_run(exporter, batches: list[list], conn) -> dict:
    from opentelemetry.sdk.trace.export import SpanExportResult

    truncate(conn)
    sent = 0
    t0 = time.perf_counter()
    for spans in batches:
        if exporter.export(spans) is not SpanExportResult.SUCCESS:
            raise BenchError("an export failed (see the uvicorn log)")
        sent += len(spans)
    elapsed = time.perf_counter() - t0
    stored = conn.execute("SELECT count(*) FROM probes_observation").fetchone()[0]
    if stored != sent:
        raise BenchError(f"sent {sent} GenAI spans but {stored} observations are stored")
    return {"spans": sent, "seconds": round(elapsed, 3), "spans_per_s": round(sent / elapsed, 1)}


COPY_COLUMNS = (
    "source_id", "kind", "observed_at", "received_at", "target_id", "provider", "host", "model", "operation",
    "service", "country", "city", "latitude", "longitude", "place_from", "ttft_ms", "ttft_from", "total_ms",
    "output_tokens", "error_type",
)  # fmt: skip


def copy_reference(conn) -> dict:
    """The rows the receiver stored, read back, then loaded again by COPY into the emptied table."""
    rows = conn.execute(f"SELECT {', '.join(COPY_COLUMNS)} FROM probes_observation").fetchall()
    truncate(conn)
    conn.autocommit = False
    try:
        t0 = time.perf_counter()
        with conn.cursor() as cur, cur.copy(f"COPY probes_observation ({', '.join(COPY_COLUMNS)}) FROM STDIN") as cp:
            for row in rows:
                cp.write_row(row)
        conn.commit()
        elapsed = time.perf_counter() - t0
    finally:
        conn.autocommit = True
    return {"rows": len(rows), "seconds": round(elapsed, 3), "rows_per_s": round(len(rows) / elapsed, 1)}


def profile_batch(spans: list, source) -> str:
    from datetime import UTC, datetime

    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from probes.realusers import otlp

    body = encode_spans(spans).SerializeToString()
    profiler = cProfile.Profile()
    profiler.enable()
    message = otlp.parse(otlp.TRACES, body, otlp.PROTOBUF)
    otlp.export_traces(source, message, "127.0.0.1", datetime.now(UTC))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=BENCH_DB)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", type=int, default=40, help=f"batches of {BATCH} spans per run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    server = None
    workdir = Path(tempfile.mkdtemp(prefix="otlp-bench-"))  # the web process's log
    try:
        env = harness.bench_env(args.db, channel_prefix=CHANNEL_PREFIX)
        os.environ.update(env)
        import django

        django.setup()
        manage(env, "ensuredb")
        manage(env, "migrate", "--noinput")

        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        from probes.models import IngestSource, Target
        from probes.realusers.sources import create_source

        IngestSource.objects.filter(name=SOURCE_NAME).delete()
        source, token = create_source(SOURCE_NAME, [])
        targets = (("api.openai.com", "gpt-4o-mini", "openai"), ("api.anthropic.com", "claude-sonnet-4", "anthropic"))
        for host, model, style in targets:
            Target.objects.get_or_create(
                name=f"otlpbench {model}",
                defaults={"url": f"https://{host}/v1/chat/completions", "model": model, "api_style": style},
            )
        log(f"otlp bench: building {args.batches} batches of {BATCH} spans")
        batches = build_batches(args.batches, args.seed)
        server = UvicornServer(
            {**env, "DEBUG": "false", "LATENCY_PRODUCTION": "false",
             # One source sends every batch: the rate limit must not be what is measured.
             "LATENCY_OTLP_SPANS_AND_POINTS_PER_MINUTE": "100000000"},
            workdir / "uvicorn.log", access_log=False, collect_static=False,
        )  # fmt: skip
        server.start()
        exporter = OTLPSpanExporter(
            endpoint=f"{server.origin}/otlp/v1/traces", headers={"Authorization": f"Bearer {token}"}, timeout=60
        )
        conn = pg_connect()
        export_run(exporter, batches[:2], conn)  # warm-up: imports, connections, the city database
        runs = []
        for i in range(args.runs):
            run = export_run(exporter, batches, conn)
            runs.append(run)
            log(f"  run {i + 1}: {run['spans']} spans in {run['seconds']} s: {run['spans_per_s']:,.0f} spans/s")
        peak_kb = peak_rss_kb(server.popen.pid) if server.popen else None
        copy = copy_reference(conn)
        prof = profile_batch(batches[0], source) if args.profile else None
        truncate(conn)
        conn.close()
        exporter.shutdown()
    except BenchError as exc:
        log(f"otlp bench: {exc}")
        if server is not None:
            log(server.log())
        return 1
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    median = statistics.median(r["spans_per_s"] for r in runs)
    summary = {
        "spans_per_s_median": median,
        "web_peak_rss_mb": round(peak_kb / 1024, 1) if peak_kb else None,
        "copy_rows_per_s": copy["rows_per_s"],
        "ratio_to_copy": round(median / copy["rows_per_s"], 3),
        "goal_spans_per_s": GOAL_SPANS_PER_S,
        "pass": median >= GOAL_SPANS_PER_S,
    }
    if args.json:
        print(json.dumps({"machine": machine_context(), "runs": runs, "copy": copy, "summary": summary}, indent=2))
    else:
        print(f"OTLP receiver, one web process, batches of {BATCH} GenAI spans ({args.runs} runs x {len(batches)})")
        each = ", ".join(f"{r['spans_per_s']:,.0f}" for r in runs)
        print(f"  median {median:,.0f} spans/s (runs: {each})")
        print(f"  web process peak RSS {summary['web_peak_rss_mb']} MB")
        print(f"  COPY of the same rows: {copy['rows_per_s']:,.0f} rows/s; receiver/COPY = {summary['ratio_to_copy']}")
        print(f"  {'PASS' if summary['pass'] else 'MISS'}  >= {GOAL_SPANS_PER_S:,.0f} spans/s per web process")
        if prof:
            print(prof)
    return 0


if __name__ == "__main__":
    sys.exit(main())
