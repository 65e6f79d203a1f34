"""Configuration as code: regions, targets, probes, alert rules, notification channels, model groups, service
level objectives and status pages as a YAML file (`manage.py atlas export` / `atlas apply`), named by stable keys,
never database ids, and never holding a secret. rows: what the file holds; schema: reading a file; export: the
database as a file; apply: the database made to match a file, with its plan."""

from probes.config_as_code.apply import Outcome, Step, apply_document
from probes.config_as_code.export import export_yaml
from probes.config_as_code.schema import Document, Problem, parse

__all__ = ["Document", "Outcome", "Problem", "Step", "apply_document", "export_yaml", "parse"]
