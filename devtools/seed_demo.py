"""The demo's data on a database another process serves, for the compose file's demo profile (the `demo` stage of
Containerfile): what `make demo` (devtools/demo.py) seeds, without the processes it supervises.

    python -m devtools.seed_demo --mock-url http://mockllm:9100 --keys-dir /keys [--regions N] [--history]

Idempotent, as devtools/demo_seed.py is: run again, it brings the demo targets back to the mock server's URL. With
--keys-dir, a new credential for each demo region is written there, in a file named after the region's slug (mode
0600, for the region worker's LATENCY_REGION_KEY_<SLUG>_FILE); earlier ones end at once, as `make demo`'s do. The
slugs are printed, comma separated, on the last line (the worker's LATENCY_REGION).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mock-url", required=True, help="the mock LLM server as the region worker reaches it")
    parser.add_argument("--keys-dir", type=Path, help="write a credential per demo region here")
    parser.add_argument("--regions", type=int, default=0, help="how many regions to probe from (default all)")
    parser.add_argument("--history", action="store_true", help="also load a week of history (minutes)")
    args = parser.parse_args(argv)
    if not args.mock_url.startswith(("http://", "https://")):
        parser.error("--mock-url must start with http:// or https://")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")
    import django

    django.setup()
    from devtools.demo_seed import demo_regions, live_incident, seed, seed_objectives, seed_real_users
    from probes.fleet.keys import issue_key

    regions = demo_regions(args.regions or None)
    if not regions:
        print("seed_demo: no active regions in the database: run migrate first", file=sys.stderr)
        return 1
    mock_url = args.mock_url.rstrip("/")
    probes = seed(mock_url, regions)
    print(f"{len({p.target_id for p in probes})} targets probed from {len(regions)} regions at {mock_url}")
    print(f"{len(seed_objectives(regions))} objectives; {seed_real_users()} real users' calls")
    if args.history:
        from devtools.demo_history import load_history

        print(f"history: {load_history(datetime.now(UTC)).rows} calls")
        incident = live_incident(datetime.now(UTC), regions)
        seed(mock_url, regions, incident)
    if args.keys_dir is not None:
        args.keys_dir.mkdir(parents=True, exist_ok=True)
        for region in regions:
            credential = issue_key(region, overlap=timedelta(0), note="compose demo").credential
            path = args.keys_dir / region.slug
            path.unlink(missing_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(credential + "\n")
        print(f"credentials in {args.keys_dir}")
    print(",".join(region.slug for region in regions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
