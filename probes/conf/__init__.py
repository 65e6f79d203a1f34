"""The configuration of every process, declared once (probes.conf.catalog) and rendered into the reference page
and the deploy examples (probes.conf.render). Plain Python: a region worker reads it without Django."""
