"""A readable waterfall of one measurement, for the `probe` command."""

from __future__ import annotations

from probes.engine.result import Measurement, ProbeSpec

WIDTH = 40


def _rows(m: Measurement) -> list[tuple[str, float | None, float | None]]:
    """(label, start ms, end ms) of each phase on the call's timeline."""
    rows: list[tuple[str, float | None, float | None]] = []
    t = 0.0
    for label, dur in (("DNS", m.dns_ms), ("TCP connect", m.connect_ms), ("TLS handshake", m.tls_ms)):
        if dur is not None:
            rows.append((label, t, t + dur))
            t += dur
        else:
            rows.append((label, None, None))
    rows.append(("server wait (TTFB)", t if m.ttfb_ms is not None else None, m.ttfb_ms))
    if m.ttft_ms is not None or m.first_event_ms is not None:
        rows.append(("first event", m.ttfb_ms, m.first_event_ms))
        rows.append(("first token (TTFT)", m.ttfb_ms, m.ttft_ms))
        rows.append(("first answer token", m.ttfb_ms, m.ttfat_ms))
        rows.append(("streaming", m.ttft_ms, m.total_ms))
    rows.append(("total", 0.0, m.total_ms))
    return rows


def _bar(start: float, end: float, scale: float) -> str:
    """The phase's span on a WIDTH-wide line: nothing for a phase that took no time (it printed as
    0.000 ms yet drew a full block), at least one block for any phase that took some."""
    if round(end - start, 3) <= 0:
        return ""
    a = min(WIDTH - 1, round(start / scale * WIDTH))
    b = max(a + 1, round(end / scale * WIDTH))
    return " " * a + "█" * (b - a)


def render_waterfall(spec: ProbeSpec, m: Measurement, *, color: bool = False) -> str:
    scale = (m.total_ms or 0.0) or 1.0
    head = f"{spec.style} {spec.url}"
    if spec.model:
        head += f"  model={spec.model}"
    lines = [head]
    status = f"{m.http_version or ''} {m.http_status}".strip() if m.http_status else "no response"
    verdict = m.outcome.upper() if m.outcome != "ok" else "ok"
    if color:
        verdict = ("\x1b[32m" if m.outcome == "ok" else "\x1b[31m") + verdict + "\x1b[0m"
    lines.append(f"outcome {verdict}   {status}   {m.remote_addr or '-'}   connection {m.connection}")
    if m.error:
        # A good call's error column holds a note (HTTP/2 asked for, HTTP/1.1 measured, and why).
        lines.append(f"{'note ' if m.outcome == 'ok' else 'error'}   {m.error}")
    lines.append("")
    for label, start, end in _rows(m):
        if start is None or end is None:
            lines.append(f"  {label:<20} {'-':>10}")
            continue
        lines.append(f"  {label:<20} {end - start:>9.3f} ms |{_bar(start, end, scale):<{WIDTH}}| at {end:.3f}")
    lines.append("")
    if m.output_tokens is not None:
        est = " (estimated)" if m.tokens_estimated else ""
        speed = f"{m.tokens_per_s:.1f} tok/s" if m.tokens_per_s is not None else "- tok/s"
        lines.append(f"  tokens {m.output_tokens}{est}   {speed}")
    if m.itl_p50_ms is not None:
        lines.append(f"  inter-token p50 {m.itl_p50_ms:.3f} ms  p95 {m.itl_p95_ms:.3f} ms  max {m.itl_max_ms:.3f} ms")
    if m.retry_after_s is not None:
        lines.append(f"  retry after {m.retry_after_s:g} s")
    if m.error_type:
        lines.append(f"  provider error type {m.error_type}")
    return "\n".join(lines)
