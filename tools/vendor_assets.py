#!/usr/bin/env python
"""Regenerate static/vendor/: the browser assets the dashboard serves itself, so no page reaches a CDN.

Usage: `.venv/bin/python tools/vendor_assets.py` (needs node and npm with access to the npm registry) rewrites
static/vendor/plotly/plotly.min.js, static/vendor/plotly/LICENSE, static/vendor/plotly/plotly-locale-zh-cn.js and
static/vendor/topojson/world_110m.json.

What it does:
  - plotly.min.js is copied from the installed `plotly` Python wheel (plotly/package_data/plotly.min.js), the same
    plotly.js the pinned wheel was built against; its version banner must match PLOTLY_JS_VERSION;
  - `npm pack plotly.js@PLOTLY_JS_VERSION` runs in a temporary folder, and from that tarball only
    package/dist/plotly-geo-assets.js, package/dist/plotly-locale-zh-cn.js (month and day names, modebar text
    for the Chinese pages; it calls Plotly.register when loaded after plotly.min.js) and package/LICENSE are
    extracted. The geo-assets script is a UMD bundle
    that sets `window.Plotly = {topojson: {world_110m: ..., ...}, version}`; node evaluates it in a `vm` sandbox
    that provides `window` and prints the requested topojson objects as compact JSON;
  - plotly requests `${topojsonURL}${scope}_${resolution}m.json` (src/lib/topojson_utils.js), so a map with
    scope "world" and the default resolution 110 fetches world_110m.json. The page must pass
    `{topojsonURL: "/static/vendor/topojson/"}` in the plot config, or plotly fetches from its CDN.
    world_50m.json (resolution 50) is 1.7 MB and is written only with --resolutions 110,50.

Options: --resolutions 110[,50]  --scopes world[,europe,...]  --check (compare with the files in place, write
nothing; exit 1 when they differ).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PLOTLY_JS_VERSION = "4.1.1"
ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "vendor"

# Evaluates dist/plotly-geo-assets.js and prints {name: topojson} for the names in argv.
NODE_EXTRACT = r"""
const vm = require("vm"), fs = require("fs");
const [file, version, ...names] = process.argv.slice(1);
const sandbox = { window: {} };
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(file, "utf8"), sandbox, { filename: file });
const assets = sandbox.window.Plotly;
if (!assets || !assets.topojson) throw new Error("plotly-geo-assets.js did not define window.Plotly.topojson");
if (assets.version !== version) throw new Error(`geo assets are version ${assets.version}, expected ${version}`);
const out = {};
for (const name of names) {
  if (!assets.topojson[name]) throw new Error(`no topojson named ${name}; have ${Object.keys(assets.topojson)}`);
  out[name] = assets.topojson[name];
}
process.stdout.write(JSON.stringify(out));
"""


def wheel_plotly_js() -> Path:
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the plotly Python package is not installed (pip install -e .)")
    path = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    if not path.is_file():
        sys.exit(f"{path} is missing from the plotly wheel")
    return path


def banner_version(data: bytes) -> str:
    match = re.search(rb"plotly\.js v(\d+\.\d+\.\d+)", data[:400])
    return match.group(1).decode() if match else "unknown"


LOCALES = ("zh-cn",)


def npm_files(tmp: Path) -> tuple[Path, Path]:
    """npm pack plotly.js into tmp; extract only the geo assets, the locales and the licence."""
    for tool in ("npm", "node"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is required (apt-get install nodejs npm)")
    result = subprocess.run(
        ["npm", "pack", f"plotly.js@{PLOTLY_JS_VERSION}", "--silent", "--pack-destination", str(tmp)],
        cwd=tmp,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        sys.exit(f"npm pack failed:\n{result.stderr}")
    tarball = tmp / result.stdout.strip().splitlines()[-1]
    wanted = {"package/dist/plotly-geo-assets.js", "package/LICENSE"}
    wanted |= {f"package/dist/plotly-locale-{name}.js" for name in LOCALES}
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name in wanted and m.isfile()]
        if len(members) != len(wanted):
            sys.exit(f"{tarball.name} lacks {wanted - {m.name for m in members}}")
        # The "data" filter (Python 3.11.4+) refuses links and paths outside tmp.
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp, members=members, **safe)
    return tmp / "package/dist/plotly-geo-assets.js", tmp / "package/LICENSE"


def build(scopes: list[str], resolutions: list[str]) -> dict[Path, bytes]:
    source = wheel_plotly_js()
    plotly_js = source.read_bytes()
    found = banner_version(plotly_js)
    if found != PLOTLY_JS_VERSION:
        sys.exit(f"the plotly wheel ships plotly.js {found}, expected {PLOTLY_JS_VERSION}: update PLOTLY_JS_VERSION")
    names = [f"{scope.replace(' ', '-')}_{res}m" for scope in scopes for res in resolutions]
    with tempfile.TemporaryDirectory(prefix="vendor-assets-") as tmp_name:
        geo_js, licence = npm_files(Path(tmp_name))
        result = subprocess.run(
            ["node", "-e", NODE_EXTRACT, str(geo_js), PLOTLY_JS_VERSION, *names],
            capture_output=True,
            check=False,
        )
        if result.returncode != 0:
            sys.exit(f"node could not read the geo assets:\n{result.stderr.decode(errors='replace')}")
        licence_text = licence.read_bytes()
        locales = {name: (geo_js.parent / f"plotly-locale-{name}.js").read_bytes() for name in LOCALES}
    topo = json.loads(result.stdout)
    files = {
        VENDOR / "plotly" / "plotly.min.js": plotly_js,
        VENDOR / "plotly" / "LICENSE": licence_text,
    }
    for name, data in locales.items():
        files[VENDOR / "plotly" / f"plotly-locale-{name}.js"] = data
    for name in names:
        obj = topo[name]
        if obj.get("type") != "Topology" or "countries" not in obj.get("objects", {}):
            sys.exit(f"{name} is not a topojson Topology with countries")
        files[VENDOR / "topojson" / f"{name}.json"] = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scopes", default="world", help="comma separated plotly geo scopes (default world)")
    parser.add_argument("--resolutions", default="110", help="comma separated: 110 and/or 50 (default 110)")
    parser.add_argument("--check", action="store_true", help="compare with the files in place; write nothing")
    args = parser.parse_args()
    resolutions = [r.strip() for r in args.resolutions.split(",") if r.strip()]
    if not resolutions or set(resolutions) - {"110", "50"}:
        parser.error("--resolutions takes 110 and/or 50")
    scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
    files = build(scopes, resolutions)
    stale = 0
    for path, data in files.items():
        rel = path.relative_to(ROOT)
        if args.check:
            same = path.is_file() and path.read_bytes() == data
            stale += not same
            print(f"{'ok   ' if same else 'STALE'} {rel}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {rel} ({len(data):,} bytes)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
