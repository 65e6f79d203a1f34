"""The target list has a Provider preset column and filter: a preset's targets are found among custom ones."""

from django.urls import reverse

from tests.factories import TargetFactory

LIST = "admin:probes_target_changelist"


def test_the_target_list_shows_and_filters_by_provider(admin_client):
    TargetFactory(name="Sweden Azure", provider="azure-openai")
    TargetFactory(name="Our gateway")
    page = admin_client.get(reverse(LIST)).content.decode()
    assert "Provider preset" in page
    assert "Azure OpenAI" in page and "custom (none)" in page
    filtered = admin_client.get(reverse(LIST), {"provider__exact": "azure-openai"}).content.decode()
    assert "Sweden Azure" in filtered and "Our gateway" not in filtered
