"""A page on another origin embeds static/atlas-rum.js from the site (a real uvicorn) with its browser key and a
target's name, and streams an answer from the mock LLM server (relayed by the page's own server, as an app's
backend would). In headless Chromium a click starts the call, the first chunk painted calls firstToken(), the
end of the stream calls end(): one observation of kind beacon is stored against the target, with the first-token
and total times the page measured itself (performance.now() around the same moments), and no text. The same page
served from an origin the source does not allow sends its beacon too, and it is refused and stores nothing."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import httpx
import pytest

from devtools.harness import outside_browser_loop, wait_until
from probes.models import Observation
from tests.factories import IngestSourceFactory, TargetFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

# The mock's first token comes this long after the request; the stream then takes tokens x gap.
TTFT_MS, TOKENS, GAP_MS = 400, 12, 20
PROMPT = "What is the capital of Nigeria? (never sent to the site)"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Shop assistant</title>
<script src="{site}/static/atlas-rum.js" data-key="{key}" data-target="{target}"></script>
<script src="/page.js" defer></script></head>
<body><textarea id="prompt">{prompt}</textarea><button id="ask">Ask</button><p id="answer"></p></body></html>
"""

PAGE_JS = """
document.getElementById("ask").addEventListener("click", async () => {
  const call = AtlasRUM.start("chat");
  const t0 = performance.now();
  const response = await fetch("/chat", {method: "POST", body: document.getElementById("prompt").value});
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const answer = document.getElementById("answer");
  let first = null, tokens = 0;
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    const text = decoder.decode(value, {stream: true});
    tokens += (text.match(/"content":"[^"]/g) || []).length;
    answer.textContent += text;
    if (first === null && tokens > 0) {
      // The next frame draws the chunk: that is when the person sees the first token.
      await new Promise((resolve) => requestAnimationFrame(resolve));
      first = performance.now();
      call.firstToken();
    }
  }
  const t1 = performance.now();
  call.end({tokens});
  window.measured = {ttft: first - t0, total: t1 - t0, tokens};
});
"""


def page_handler(render: Callable[[], str], upstream: str):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            pass

        def do_GET(self):
            body, kind = (render(), "text/html") if self.path == "/" else (PAGE_JS, "text/javascript")
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            # The app's backend: the prompt goes to the LLM (the mock), the stream comes back chunk by chunk.
            prompt = self.rfile.read(int(self.headers["Content-Length"])).decode()
            url = urlsplit(upstream)
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
            request = {"model": "mock-model", "stream": True, "messages": [{"role": "user", "content": prompt}]}
            conn.request("POST", f"{url.path}?{url.query}", json.dumps(request), {"Content-Type": "application/json"})
            upstream_response = conn.getresponse()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := upstream_response.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            conn.close()

    return Handler


@contextmanager
def page_server(render, upstream: str) -> Iterator[str]:
    """A site of someone else's on a loopback port of its own: its origin differs from the Atlas site's."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), page_handler(render, upstream))
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield origin
    finally:
        server.shutdown()
        server.server_close()


def test_one_beacon_per_call_with_the_first_token_the_page_measured(asgi_server, browser_page, mockllm):
    page = browser_page
    # The ORM runs outside Playwright's event loop (devtools.harness.outside_browser_loop).
    target = outside_browser_loop(
        TargetFactory, name="Chat prod", url=mockllm.base_url + "/v1/chat/completions", model="mock-model"
    )
    upstream = f"{mockllm.base_url}/v1/chat/completions?ttft_ms={TTFT_MS}&tokens={TOKENS}&gap_ms={GAP_MS}"
    keys: dict[str, str] = {}

    def render() -> str:
        return PAGE.format(site=asgi_server.origin, key=keys["key"], target=target.name, prompt=PROMPT)

    script = httpx.get(f"{asgi_server.origin}/static/atlas-rum.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]

    with page_server(render, upstream) as allowed, page_server(render, upstream) as foreign:
        source = outside_browser_loop(
            IngestSourceFactory, allowed_origins=[allowed], default_country="NG", default_city="Lagos"
        )
        keys["key"] = source.browser_key

        # The foreign page first: its beacon is answered (refused) before the allowed one is sent.
        page.goto(foreign + "/")
        with page.expect_response(lambda r: r.url.endswith("/rum/v1/beacon"), timeout=20_000) as refused:
            page.click("#ask")
        assert refused.value.status == 403
        assert page.evaluate("window.measured.tokens") == TOKENS

        complaints = len(page.recorder.console_errors)

        page.goto(allowed + "/")
        with page.expect_response(lambda r: r.url.endswith("/rum/v1/beacon"), timeout=20_000) as taken:
            page.click("#ask")
        assert taken.value.status == 204
        # Sent by navigator.sendBeacon, and the browser finds nothing wrong with the answer (CORS included).
        assert taken.value.request.resource_type == "ping", taken.value.request.resource_type
        assert page.recorder.console_errors[complaints:] == []
        wait_until(page, lambda: outside_browser_loop(Observation.objects.exists), 15, "the beacon's observation")
        measured = page.evaluate("window.measured")

    rows = outside_browser_loop(lambda: list(Observation.objects.values()))
    [row] = [Observation(**values) for values in rows]
    assert (row.kind, row.source_id, row.target_id) == ("beacon", source.id, target.id)
    assert (row.model, row.service, row.output_tokens, row.error_type) == ("mock-model", "chat", measured["tokens"], "")
    # The script reads performance.now() a statement away from the page's own readings, and sends 0.1 ms.
    assert row.ttft_ms == pytest.approx(measured["ttft"], abs=2.0)
    assert row.total_ms == pytest.approx(measured["total"], abs=2.0)
    # The mock held the first token back: the person waited at least that long.
    assert row.ttft_ms >= TTFT_MS
    assert (row.country, row.city, row.place_from) == ("NG", "Lagos", "default")
    stored = json.dumps(rows, default=str)
    assert "Nigeria" not in stored and "capital" not in stored
    print(f"beacon: page measured ttft {measured['ttft']:.1f} ms, stored {row.ttft_ms:.1f} ms")
