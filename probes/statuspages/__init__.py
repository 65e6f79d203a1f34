"""Status pages (issue 49): what some targets' users may read of their status, latency by region, daily uptime
and incidents, without an account when the page is public. Models and the cache of their readings here (cache.py);
the reads in probes.readings.status."""
