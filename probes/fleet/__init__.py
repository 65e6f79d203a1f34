"""The central side of region workers: their credentials, their heartbeats
and the runs nobody picked up. Region hosts never import this package (it
needs the database); they speak probes.worker.protocol."""
