"""The REST API, /api/v1/: Django REST framework views over the same rules and readers as the rest of the site.

- config.py: regions, targets and probes (list, create, update, delete), validated by the models' own
  full_clean(), the admin's rules;
- reads.py: measurements (cursor-paginated), the dashboard's aggregates, incidents and workers, each read
  through probes.readings with the parameters parsed by a form;
- authentication.py, permissions.py: a user's token or session, and the admin's model permissions;
- urls.py: the routes, the OpenAPI 3 schema (/api/v1/schema/) and its docs page (/api/v1/docs/).
"""
