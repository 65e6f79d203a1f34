"""The status page's map of a target's TTFT by region, drawn on the server as inline SVG: the page runs no script
(it reads the same without JavaScript), so the dashboard's Plotly map is not an option here.

The land comes from the world outline the dashboard's map already ships (static/vendor/topojson/world_110m.json,
Natural Earth 1:110m via Plotly), projected equirectangular (x = longitude + 180, y = 90 - latitude; below 60° S
cut off), points closer than SIMPLIFY degrees to the last one kept dropped: one path, built once per process and
written once per page (a <symbol> each map <use>s)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from probes.readings.status import RegionLatency

WORLD = settings.BASE_DIR / "static" / "vendor" / "topojson" / "world_110m.json"
# The map's box in degrees: every longitude, latitudes from 90° N to 60° S (no region probes from Antarctica).
WIDTH, HEIGHT = 360, 150
SIMPLIFY = 1.5

# TTFT p95 bands the dots are coloured by, in ms: fixed, so that a colour means the same on every page and day.
BANDS = (
    (500.0, "fast", _("up to 0.5 s")),
    (1000.0, "fair", _("0.5 to 1 s")),
    (2000.0, "slow", _("1 to 2 s")),
    (float("inf"), "slowest", _("over 2 s")),
)


def project(latitude: float, longitude: float) -> tuple[float, float]:
    return round(longitude + 180.0, 1), round(90.0 - max(latitude, -60.0), 1)


def _grid(latitude: float, longitude: float) -> tuple[int, int]:
    # The land to the degree: at the page's widths a degree is two or three pixels.
    x, y = project(latitude, longitude)
    return round(x), round(y)


def _rings(topology: dict, geometry: dict) -> list[list[tuple[float, float]]]:
    (sx, sy), (tx, ty) = topology["transform"]["scale"], topology["transform"]["translate"]

    def arc(index: int) -> list[tuple[float, float]]:
        x = y = 0
        points = []
        for dx, dy in topology["arcs"][index if index >= 0 else ~index]:
            x, y = x + dx, y + dy
            points.append((x * sx + tx, y * sy + ty))
        return points if index >= 0 else points[::-1]

    polygons = geometry["arcs"] if geometry["type"] == "MultiPolygon" else [geometry["arcs"]]
    rings = []
    for polygon in polygons:
        for ring in polygon:
            points: list[tuple[float, float]] = []
            for index in ring:
                part = arc(index)
                points.extend(part[1:] if points else part)
            rings.append(points)
    return rings


@lru_cache(maxsize=1)
def land_path() -> str:
    """The land as one SVG path's d, in the map's box (whole degrees, each point relative to the one before)."""
    topology = json.loads(WORLD.read_text())
    parts = []
    for geometry in topology["objects"]["land"]["geometries"]:
        for ring in _rings(topology, geometry):
            kept: list[tuple[int, int]] = []
            for lon, lat in ring:
                x, y = _grid(lat, lon)
                if not kept or abs(x - kept[-1][0]) + abs(y - kept[-1][1]) >= SIMPLIFY:
                    kept.append((x, y))
            for piece in _one_side_each(kept):
                if len(piece) >= 3:
                    steps = "".join(f"l{x - px} {y - py}" for (px, py), (x, y) in itertools.pairwise(piece))
                    parts.append(f"M{piece[0][0]} {piece[0][1]}{steps}z")
    return "".join(parts)


def _one_side_each(ring: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """A ring that crosses the antimeridian (Chukotka, Fiji) cut into pieces on either side of the map: drawn
    whole, its jumps from one edge to the other would fill a strip across the world."""
    jumps = [i for i in range(1, len(ring)) if abs(ring[i][0] - ring[i - 1][0]) > WIDTH / 2]
    if not jumps:
        return [ring]
    # From just after a jump, so the pieces end at jumps (the ring's end joins its start).
    ring = ring[jumps[0] :] + ring[: jumps[0]]
    pieces: list[list[tuple[int, int]]] = [[ring[0]]]
    for before, point in itertools.pairwise(ring):
        if abs(point[0] - before[0]) > WIDTH / 2:
            pieces.append([])
        pieces[-1].append(point)
    return pieces


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    band: str
    region_name: str
    p50: float | None
    p95: float | None


def band(p95: float | None) -> str:
    if p95 is None:
        return "none"
    return next(name for limit, name, _label in BANDS if p95 <= limit)


def dots(latency: list[RegionLatency]) -> list[Dot]:
    """A dot per region, the slowest drawn last (on top), regions without a figure first (underneath)."""
    out = []
    for row in latency:
        x, y = project(row.latitude, row.longitude)
        out.append(Dot(x, y, band(row.p95), row.region_name, row.p50, row.p95))
    return sorted(out, key=lambda d: (d.p95 is not None, d.p95 or 0.0))


def legend() -> list[tuple[str, str]]:
    return [(name, str(label)) for _limit, name, label in BANDS]
