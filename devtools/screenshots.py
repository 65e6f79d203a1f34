"""`python -m devtools.screenshots BASE_URL USERNAME PASSWORD PREFIX`: full-page pictures of the overview.

Development tooling for before/after comparisons (issue 11): signs in to a running site (for example
`make demo`), opens the overview at 1440 px and at 390 px wide, waits until every chart on the page is
drawn, and saves PREFIX-overview-1440.png and PREFIX-overview-390.png. Debian's Chromium, headless, as
the browser tests use it (devtools/harness.py); nothing is downloaded.

    .venv/bin/python -m devtools.screenshots http://127.0.0.1:8000 admin PASSWORD test-artifacts/after
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from devtools.harness import launch_chromium, login

WIDTHS = (1440, 390)
PAGE_HEIGHT = 900  # only the first view; the picture is full-page whatever the height
DRAW_TIMEOUT_MS = 60_000

# Every chart container (.plot) holds a drawn Plotly figure, and the table has left "Loading…".
CHARTS_DRAWN = """() => {
  const plots = [...document.querySelectorAll('.plot')];
  const table = document.querySelector('#region-target-table tbody');
  return plots.length > 0 && plots.every(p => p.querySelector('.main-svg'))
    && (!table || !table.textContent.includes('Loading'));
}"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m devtools.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("base_url", help="the running site, e.g. http://127.0.0.1:8000")
    parser.add_argument("username")
    parser.add_argument("password")
    parser.add_argument("prefix", help="output path prefix, e.g. test-artifacts/before")
    parser.add_argument("--path", default="/", help="page to picture (default the overview, /)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    origin = opts.base_url.rstrip("/")
    prefix = Path(opts.prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with launch_chromium() as context:
        page = context.pages[0] if context.pages else context.new_page()
        login(page, origin, opts.username, opts.password)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": PAGE_HEIGHT})
            page.goto(f"{origin}{opts.path}")
            page.wait_for_function(CHARTS_DRAWN, timeout=DRAW_TIMEOUT_MS)
            # Plotly redraws on resize in an animation frame: let two frames pass before the picture.
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            out = prefix.parent / f"{prefix.name}-overview-{width}.png"
            page.screenshot(path=str(out), full_page=True)
            width_seen = page.evaluate("() => document.documentElement.scrollWidth")
            print(f"{out}: viewport {width} px, page {width_seen} px wide")
    return 0


if __name__ == "__main__":
    sys.exit(main())
