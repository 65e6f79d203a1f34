"""A missing page and a server error answer with the site's own styled pages, each with a way home,
as a production server (DEBUG off) serves them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.template import loader
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import path

from latency.urls import urlpatterns as site_urls


def broken_view(request):
    raise RuntimeError("something in the view failed")


# The site's URLs plus one view that fails, for the server-error page.
urlpatterns = [*site_urls, path("broken/", broken_view)]


@pytest.fixture
def production(settings):
    settings.DEBUG = False
    settings.LATENCY_PUBLIC_DASHBOARD = True


@pytest.mark.django_db
def test_an_unknown_region_answers_the_styled_not_found_page(client, production):
    response = client.get("/regions/nowhere/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "/static/css/atlas.css" in html
    assert 'class="site-header"' in html
    assert "Page not found" in html
    assert "<code>/regions/nowhere/</code>" in html
    assert '<a href="/">Go to the overview</a>' in html


@pytest.mark.django_db
def test_an_unknown_address_answers_the_same_page(client, production):
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.urls(__name__)
def test_a_failing_view_answers_the_styled_server_error_page(production, caplog):
    client = Client(raise_request_exception=False)
    response = client.get("/broken/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "/static/css/atlas.css" in html
    assert "Something went wrong on our side" in html
    assert '<a href="/">Go to the overview</a>' in html
    # Nothing of the failure is shown to the visitor; it is in the log.
    assert "something in the view failed" not in html
    assert any("something in the view failed" in str(r.exc_info) for r in caplog.records if r.exc_info)


@pytest.mark.django_db
def test_the_server_error_page_renders_from_an_empty_context_without_the_database():
    # As django.views.defaults.server_error does: no request, no context (the database may be what failed).
    with CaptureQueriesContext(connection) as queries:
        html = loader.get_template("500.html").render()
    assert len(queries) == 0
    assert "Something went wrong on our side" in html and "/static/css/atlas.css" in html
