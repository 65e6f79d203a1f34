"""A public status page answers anyone; another answers signed-in users, and anyone else 404 (not a login page, not
403: its slug is not confirmed to exist), as an unknown slug does."""

from __future__ import annotations

from probes.models import StatusPage


def test_anyone_reads_a_public_page(scene, client):
    response = client.get(f"/status/{scene.page.slug}/")
    assert response.status_code == 200
    assert "Acme APIs" in response.content.decode()


def test_a_page_that_is_not_public_is_404_to_anyone_signed_out_and_read_signed_in(scene, client, django_user_model):
    StatusPage.objects.filter(id=scene.page.id).update(public=False)
    assert client.get(f"/status/{scene.page.slug}/").status_code == 404
    client.force_login(django_user_model.objects.create_user(username="reader", password="x-long-password-271"))
    assert client.get(f"/status/{scene.page.slug}/").status_code == 200


def test_an_unknown_page_is_404(db, client):
    assert client.get("/status/no-such-page/").status_code == 404
