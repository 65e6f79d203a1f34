"""The mock LLM server (tests, benchmarks, the demo): `python -m devtools.mockllm` runs it.

server.py serves HTTP on h11, formats.py holds the providers' wire formats, dialects.py the
OpenAI-compatible providers' variants of chat completions (the provider knob), knobs.py the knobs a
request sets (timing, faults), workloads.py what a prompt costs (input tokens, the prompt cache, rate
limits). Development tooling: the app packages never import it.
"""

from devtools.mockllm.knobs import KNOBS, KnobError, parse_knob, resolve_knobs
from devtools.mockllm.server import MockLLMServer, running_server, serve

__all__ = ["KNOBS", "KnobError", "MockLLMServer", "parse_knob", "resolve_knobs", "running_server", "serve"]
