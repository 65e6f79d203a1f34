"""API tokens: one user's key to /api/v1/, shown once and kept only as its SHA-256 (tokens.py holds the rules)."""
