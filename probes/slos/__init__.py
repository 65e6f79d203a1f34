"""Service level objectives per region (issue 48): what a good call is, the exact counts of good, degraded and
bad calls per objective, target, region and hour, and what is read from them (attainment, error budgets, burn)."""
