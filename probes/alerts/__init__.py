"""Alerts (issue 13): rules, their evaluation, incidents and notifications.

    models.py     AlertRule, AlertState, Incident, IncidentEvent, Delivery, NotificationChannel, Silence
                  (imported by probes.models, app label "probes")
    rules.py      what a rule means: its metric's kind, and why a rule can never or always fire (refusals)
    evaluate.py   one evaluation pass: conditions per region, quorum, scope, hysteresis (compare-and-swap
                  on AlertState), incidents and their timeline, deliveries queued after commit
    attribution.py which phase moved, and the reading of it
    notify.py     delivery through Apprise: retries, timeline, channel health
    addresses.py  channels reach public addresses only: each address checked as it is connected to
    secrets.py    channel URLs encrypted at rest, never shown back

The figures come from probes.readings.alerts (the read package), like every page's.
"""
