"""Development tooling for Latency Atlas: embedded PostgreSQL and Redis (embedded.py), the mock LLM
server (mockllm/), the `make demo` runner (demo.py) and the harness shared by tests and benchmarks
(harness.py).

Kept out of the app packages (latency/, probes/) so that nothing a deployment installs starts
servers, adds system users or serves fake APIs: the app never imports devtools (a test checks),
and pyproject.toml packages only latency* and probes*. It is imported from a checkout, where the
repository root is on sys.path (`python -m ...` from the root, pytest from the root, bench scripts
insert it).
"""
