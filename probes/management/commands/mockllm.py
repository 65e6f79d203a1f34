"""`manage.py mockllm`: run the mock LLM server (probes/mockllm.py) until SIGINT or SIGTERM."""

from __future__ import annotations

import errno
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from probes import mockllm

# The knobs common enough in demos and benchmarks to deserve their own option; --knob reaches the rest.
KNOB_OPTIONS = ("ttft_ms", "tokens", "gap_ms", "headers_delay_ms", "reasoning_tokens", "jitter_ms")


class Command(BaseCommand):
    help = "Serve mock OpenAI, Anthropic and Gemini APIs with configurable timing and faults."
    # Touches neither the database nor anything the system checks cover; start fast and DB-free.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=0, help="port (default 0: any free port, shown at start)")
        parser.add_argument("--tls", action="store_true", help="serve HTTPS with a freshly generated local CA")
        parser.add_argument("--ca-out", metavar="FILE", help="with --tls, also write the CA certificate (PEM) here")
        for name in KNOB_OPTIONS:
            parser.add_argument("--" + name.replace("_", "-"), dest=name, metavar="N", help=f"default {name}")
        parser.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE",
                            help=f"default for any knob ({', '.join(mockllm.KNOBS)}); repeatable")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["ca_out"] and not options["tls"]:
            raise CommandError("--ca-out needs --tls")
        defaults = {name: options[name] for name in KNOB_OPTIONS if options[name] is not None}
        for item in options["knob"]:
            name, sep, value = item.partition("=")
            if not sep:
                raise CommandError(f"--knob expects NAME=VALUE (got {item!r})")
            defaults[name.strip()] = value.strip()

        def ready(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()  # whoever started us is probably reading this line through a pipe

        host, port = options["host"], options["port"]
        try:
            mockllm.serve(host, port, options["tls"], options["ca_out"], defaults, ready)
        except mockllm.KnobError as exc:
            raise CommandError(str(exc)) from None
        except KeyboardInterrupt:  # a Ctrl-C that lands before the signal handlers are installed
            pass
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CommandError(f"port {port} on {host} is already in use") from None
            raise CommandError(f"cannot serve on {host}:{port}: {exc}") from None
