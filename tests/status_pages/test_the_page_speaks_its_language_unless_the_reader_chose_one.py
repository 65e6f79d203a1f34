"""A page set to Chinese is in Chinese for a reader who chose no language, and in the reader's choice otherwise."""

from __future__ import annotations

from django.conf import settings

from probes.models import StatusPage


def test_the_pages_language_then_the_readers_choice(scene, client):
    StatusPage.objects.filter(id=scene.page.id).update(language="zh-hans")
    response = client.get(f"/status/{scene.page.slug}/", HTTP_ACCEPT_LANGUAGE="en")
    assert response["Content-Language"] == "zh-hans"
    assert '<html lang="zh-hans">' in response.content.decode()
    assert "所有系统运行正常" in response.content.decode()

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    response = client.get(f"/status/{scene.page.slug}/")
    assert response["Content-Language"] == "en"
    assert "All systems operational" in response.content.decode()
