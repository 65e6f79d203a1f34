"""Status pages (issue 49): what some targets' users may read of their status, latency by region, daily uptime
and incidents, without an account when the page is public. Models here; reads in probes.readings.status."""
