"""`python -m devtools.mockllm`: run the mock LLM server until SIGINT or SIGTERM.

A command line of its own rather than a `manage.py` command: the server is development tooling and
the app must not import it. It needs no Django, so it starts fast and without a database.
"""

from __future__ import annotations

import argparse
import errno
import sys

from devtools.mockllm.knobs import KNOBS, KnobError
from devtools.mockllm.server import serve

# The knobs common enough in demos and benchmarks to deserve their own option; --knob reaches the rest.
KNOB_OPTIONS = ("ttft_ms", "tokens", "gap_ms", "headers_delay_ms", "reasoning_tokens", "jitter_ms")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.mockllm",
        description=(
            "Serve mock OpenAI (chat completions and Responses), Anthropic and Gemini APIs "
            "with configurable timing and faults. Chat completions speak an OpenAI-compatible "
            "provider's dialect with the provider knob (--knob provider=groq, ?provider=, or the "
            "x-mock-provider header; Azure's /openai/deployments/NAME/chat/completions path chooses Azure's). "
            "Input tokens are counted from the prompt; prefill_ms_per_1k makes long prompts slow, cache=1 keeps a "
            "prompt cache (cache_ttl_s, cache_min_tokens, cache_hit_ms), ratelimit_requests and ratelimit_tokens per "
            "ratelimit_window_s answer 429 beyond them (docs/development/mock-llm.md)."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: any free port, shown at start)")
    parser.add_argument("--tls", action="store_true", help="serve HTTPS with a freshly generated local CA")
    parser.add_argument(
        "--http2", action="store_true", help="with --tls, also offer h2 by ALPN and speak HTTP/2 to clients picking it"
    )
    parser.add_argument("--ca-out", metavar="FILE", help="with --tls, also write the CA certificate (PEM) here")
    for name in KNOB_OPTIONS:
        parser.add_argument("--" + name.replace("_", "-"), dest=name, metavar="N", help=f"default {name}")
    parser.add_argument(
        "--knob",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"default for any knob ({', '.join(KNOBS)}); repeatable",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = vars(parse_args(argv))

    def fail(message: str) -> int:
        print(f"mockllm: {message}", file=sys.stderr)
        return 1

    if options["ca_out"] and not options["tls"]:
        return fail("--ca-out needs --tls")
    if options["http2"] and not options["tls"]:
        return fail("--http2 needs --tls (HTTP/2 is negotiated by ALPN)")
    defaults = {name: options[name] for name in KNOB_OPTIONS if options[name] is not None}
    for item in options["knob"]:
        name, sep, value = item.partition("=")
        if not sep:
            return fail(f"--knob expects NAME=VALUE (got {item!r})")
        defaults[name.strip()] = value.strip()

    host, port = options["host"], options["port"]
    try:
        # on_ready's default prints the "mockllm serving URL" line, flushed: launchers read it through a pipe.
        serve(host, port, options["tls"], options["ca_out"], defaults, http2=options["http2"])
    except KnobError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:  # a Ctrl-C that lands before the signal handlers are installed
        pass
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return fail(f"port {port} on {host} is already in use")
        return fail(f"cannot serve on {host}:{port}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
