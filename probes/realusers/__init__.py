"""Real users' latency (issue 14): what applications and browsers report of their own LLM calls, received
over OTLP/HTTP (probes.realusers.otlp) and from the browser beacon (static/atlas-rum.js), placed by where the
user is (probes.realusers.location), stored (probes.realusers.store) and read through probes.readings.realusers.

Plain data in, rows out: the views in latency/ are thin shells around these modules."""
