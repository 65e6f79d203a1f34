"""`manage.py probe URL --style ...`: one timed call, like `curl -w` for LLM APIs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from probes.engine import Engine, ProbeSpec, WorkerEnv
from probes.engine.config import ConfigProblem
from probes.engine.providers import PROVIDER_KEYS, provider_for
from probes.engine.result import HTTP_VERSIONS, STYLES, Measurement
from probes.engine.workloads import SHORT, WORKLOADS
from probes.waterfall import render_waterfall


def _header(value: str) -> tuple[str, str]:
    name, sep, val = value.partition(":")
    if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
        raise CommandError(f"--header {value!r} is not of the form 'Name: value'", returncode=2)
    return name.strip(), val.strip()


class Command(BaseCommand):
    help = "Make one timed call to an LLM API (or plain HTTP URL) and show its phases."

    def add_arguments(self, parser):
        parser.add_argument("url")
        parser.add_argument("--style", choices=STYLES, help="the API style (default: the preset's, else openai)")
        parser.add_argument(
            "--provider",
            choices=PROVIDER_KEYS,
            default="",
            help="a provider preset: where it differs from its style (the key's header, stream_options)",
        )
        parser.add_argument("--model", default="")
        parser.add_argument("--prompt", default="Say hello in five words.")
        parser.add_argument(
            "--prompt-file",
            type=Path,
            help="read the prompt from this file (UTF-8), for one too long for a command line",
        )
        parser.add_argument(
            "--workload",
            choices=WORKLOADS,
            default=SHORT,
            help="short (the prompt alone), prompt_1k / prompt_10k / prompt_100k (the prompt after that many "
            "input tokens of text, opened by a fresh nonce), cached_pair (two calls sharing a 10k-token text, the "
            "second measured, the first's TTFT as warm_ttft_ms)",
        )
        parser.add_argument("--max-tokens", type=int, default=64)
        parser.add_argument("--timeout", type=float, default=30.0, help="seconds for the whole call")
        parser.add_argument("--header", action="append", default=[], help="'Name: value' (repeatable)")
        parser.add_argument("--api-key-env", default="", help="environment variable holding the API key")
        parser.add_argument(
            "--ca-bundle", default="", help="PEM file of CA certificates to trust as well, inside LATENCY_CA_DIR"
        )
        parser.add_argument("--method", default="", help="http style: request method (GET by default)")
        parser.add_argument(
            "--http-version",
            choices=HTTP_VERSIONS,
            default="1.1",
            help="2: offer HTTP/2 by ALPN, fall back to 1.1 if refused; 2-only: fail if refused",
        )
        parser.add_argument("--warm", action="store_true", help="measure over an already open connection")
        parser.add_argument("--json", action="store_true", help="print exactly one JSON object")

    def handle(self, *args, **opts):
        spec = self._spec(opts)
        from probes.runtime import run

        result = run(self._run(spec, warm=opts["warm"]))
        if opts["json"]:
            self.stdout.write(json.dumps(result.to_dict(), sort_keys=False))
        else:
            self.stdout.write(render_waterfall(spec, result, color=self.stdout.isatty()))
        if result.outcome != "ok":
            raise SystemExit(1)

    def _spec(self, opts) -> ProbeSpec:
        preset = provider_for(opts["provider"])
        if opts["style"] is None:
            opts["style"] = preset.style if preset else "openai"
        elif preset and opts["style"] != preset.style:
            raise CommandError(
                f"--style {opts['style']} contradicts --provider {preset.key}, which speaks the {preset.style} style",
                returncode=2,
            )
        if opts["style"] != "http" and not opts["model"] and opts["style"] != "gemini":
            raise CommandError(f"--model is required for the {opts['style']} style", returncode=2)
        env = opts["api_key_env"]
        worker_env: WorkerEnv = settings.LATENCY_WORKER_ENV
        # The rules of a region worker (probes.engine.envpolicy), said before the call rather than as its result.
        problem = worker_env.variable_problem(env) if env else None
        if problem:
            raise CommandError(f"--api-key-env: {problem}", returncode=2)
        if env and not os.environ.get(env):
            raise CommandError(f"--api-key-env: environment variable {env} is not set", returncode=2)
        if opts["ca_bundle"]:
            try:
                Engine(worker_env).ssl_context(opts["ca_bundle"])
            except ConfigProblem as exc:
                raise CommandError(f"--ca-bundle: {exc.reason}", returncode=2) from None
        headers = dict(_header(h) for h in opts["header"])
        try:
            return ProbeSpec(
                url=opts["url"],
                style=opts["style"],
                model=opts["model"],
                prompt=self._prompt(opts),
                max_tokens=opts["max_tokens"],
                headers=headers,
                api_key_env=env,
                timeout_s=opts["timeout"],
                connection="warm" if opts["warm"] else "cold",
                method=opts["method"],
                ca_bundle=opts["ca_bundle"],
                http_version=opts["http_version"],
                provider=opts["provider"],
                workload=opts["workload"],
            )
        except ValueError as exc:
            raise CommandError(str(exc), returncode=2) from None

    @staticmethod
    def _prompt(opts) -> str:
        path = opts["prompt_file"]
        if path is None:
            return opts["prompt"]
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"--prompt-file: cannot read {path}: {exc}", returncode=2) from None

    async def _run(self, spec: ProbeSpec, *, warm: bool) -> Measurement:
        engine = Engine(settings.LATENCY_WORKER_ENV)
        try:
            if warm:
                await engine.warm_up(spec)
            return await engine.measure(spec)
        finally:
            await engine.aclose()
