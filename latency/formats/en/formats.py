"""English formats for a monitor: dates sort and compare at a glance (ISO
order, 24-hour clock, seconds shown), unlike Django's "Nov. 30, 2026, 10 p.m."."""

DATETIME_FORMAT = "Y-m-d H:i:s"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
DATE_FORMAT = "Y-m-d"
DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
