"""Health you can see: region status, region workers, missed runs."""
