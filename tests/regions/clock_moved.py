"""Run `latency-atlas` on a host whose clock is an hour ahead: the clock is
moved (time_machine, ticking) and the console script's main() called, as the
script itself would. Used by test_a_clock_far_off_is_refused.py; run with
the venv's python."""

import sys
from datetime import UTC, datetime, timedelta

import time_machine

from probes.worker.cli import main

if __name__ == "__main__":
    with time_machine.travel(datetime.now(UTC) + timedelta(hours=1), tick=True):
        main(sys.argv[1:])
