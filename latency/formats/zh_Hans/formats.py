"""Simplified Chinese formats: Django's own for dates (年月日), with the
seconds a monitor needs and a 24-hour clock."""

DATETIME_FORMAT = "Y年n月j日 H:i:s"
SHORT_DATETIME_FORMAT = "Y/m/d H:i"
DATE_FORMAT = "Y年n月j日"
DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
