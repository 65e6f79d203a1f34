"""A token is a password: the site's log (uvicorn's and Django's, over a real server) never holds it, whether
the request it came with succeeded, was refused, named no object or carried a bad body."""

from __future__ import annotations

import pytest
import requests

from tests.factories import RegionFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def test_no_answer_and_no_log_line_holds_the_token(site, roles):
    RegionFactory()
    token = roles.editor.token
    wrong = token[:-4] + "AAAA"
    auth = {"Authorization": f"Bearer {token}"}
    answers = [
        requests.get(f"{site.origin}/api/v1/regions/", headers=auth, timeout=20),
        requests.get(f"{site.origin}/api/v1/regions/999999/", headers=auth, timeout=20),
        requests.post(f"{site.origin}/api/v1/regions/", json={"slug": "bad slug"}, headers=auth, timeout=20),
        requests.get(f"{site.origin}/api/v1/regions/", headers={"Authorization": f"Bearer {wrong}"}, timeout=20),
        requests.get(f"{site.origin}/api/v1/measurements/?since=nonsense", headers=auth, timeout=20),
    ]
    assert [a.status_code for a in answers] == [200, 404, 400, 401, 400]
    for answer in answers:
        assert token not in answer.text and wrong not in answer.text
    log = site.log()
    assert "/api/v1/regions/999999/" in log  # the requests were logged
    assert token not in log and wrong not in log
    assert token[5:25] not in log
