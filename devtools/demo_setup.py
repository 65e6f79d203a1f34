"""`python -m devtools.demo_setup`: the demo's data, for the compose file's demo profile (deploy/compose.yaml).

What `make demo` (devtools/demo.py) does between migrating and starting its processes, for processes that run in
containers of their own: the demo targets and probes pointing at the mock LLM server's service (--mock-url), the
objectives, the real users, the admin user, a week of history with its incidents, the live incident, and one
credential per demo region written to a file in --keys (named by the region's slug) for the demo's region worker.
Run on every `docker compose --profile demo up`: the targets are brought back to these values, the history is
topped up, a credential the site still accepts is kept (manage.py region_key --keep), and an existing admin user's
password is left alone.

The demo's regions all probe from one machine, so the site must say its geography is emulated: without
LATENCY_EMULATED_GEOGRAPHY it refuses, naming the command that sets it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from datetime import UTC, datetime
from pathlib import Path

ADMIN = "admin"


class SetupError(Exception):
    """A refusal, printed as one line (exit status 1)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.demo_setup",
        description="Seed the demo (targets on the mock LLM server, history, admin user, region credentials).",
    )
    parser.add_argument("--mock-url", required=True, help="the mock LLM server as the region worker reaches it")
    parser.add_argument("--keys", required=True, type=Path, help="folder for one credential file per demo region")
    return parser.parse_args(argv)


def say(text: str) -> None:
    print(f"demo: {text}", flush=True)


def admin_user() -> str:
    """Made once with a new password, shown once (this is a demo); later runs leave it as the operator left it."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    if User.objects.filter(**{User.USERNAME_FIELD: ADMIN}).exists():
        return f"{ADMIN} (password unchanged: manage.py changepassword {ADMIN} sets another)"
    password = secrets.token_urlsafe(12)
    user = User(**{User.USERNAME_FIELD: ADMIN}, is_staff=True, is_superuser=True)
    user.set_password(password)
    user.save()
    return f"{ADMIN} / {password}"


def region_keys(regions, folder: Path) -> None:
    from django.core.management import call_command

    for region in regions:
        call_command("region_key", region.slug, output=str(folder / region.slug), keep=True, note="compose demo")


def run(opts: argparse.Namespace) -> None:
    from django.conf import settings

    if not settings.LATENCY_EMULATED_GEOGRAPHY:
        raise SetupError(
            "every demo region probes from this one machine, and the pages must say so: start the demo with "
            "LATENCY_EMULATED_GEOGRAPHY=true docker compose --profile demo up"
        )
    if not opts.keys.is_dir():
        raise SetupError(f"--keys {opts.keys}: no such folder (the region-keys volume)")
    from devtools.demo_history import load_history
    from devtools.demo_seed import demo_regions, live_incident, seed, seed_objectives, seed_real_users

    regions = demo_regions()
    if not regions:
        raise SetupError("no active regions in the database")
    probes = seed(opts.mock_url, regions)
    say(f"{len({p.target_id for p in probes})} targets on {opts.mock_url}, probed from {len(regions)} regions")
    say(f"{len(seed_objectives(regions))} objectives; {seed_real_users()} real users' calls added")
    say(f"login: {admin_user()}")
    loaded = load_history(datetime.now(UTC))
    say(f"history: {loaded.rows} calls added, {len(loaded.incidents)} past incidents staged")
    incident = live_incident(datetime.now(UTC), regions)
    seed(opts.mock_url, regions, incident)
    if incident is not None:
        when = f"{incident.starts:%H:%M}-{incident.ends:%H:%M} UTC"
        say(f"live incident: {incident.target} answers slowly for {incident.region} {when}")
    region_keys(regions, opts.keys)
    say(f"credentials of {len(regions)} regions in {opts.keys}")


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")
    import django

    django.setup()
    try:
        run(opts)
    except SetupError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
