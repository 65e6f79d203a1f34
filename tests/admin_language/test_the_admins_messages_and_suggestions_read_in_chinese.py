"""In Chinese, the admin's own steps speak Chinese too: saving a new target offers, in Chinese, to add a probe for
it (the link to the probe form with the target chosen); a target refused says why in Chinese; the model groups'
suggestions above the list, and the message after one is created, are Chinese."""

from __future__ import annotations

import html

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from probes.modelgroups.suggest import model_key
from probes.models import Target
from tests.admin.test_admin_validation import target_data
from tests.factories import TargetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def chinese_admin(admin_client):
    admin_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    # The locale middleware activates the request's language in this thread and leaves it there.
    with translation.override(settings.LANGUAGE_CODE):
        yield admin_client


def messages_of(response) -> list[str]:
    return [html.unescape(str(message)) for message in response.context["messages"]]


def test_saving_a_target_offers_its_probe_in_chinese(chinese_admin):
    response = chinese_admin.post(reverse("admin:probes_target_add"), target_data(), follow=True)

    target = Target.objects.get()
    link = f"{reverse('admin:probes_probe_add')}?target={target.pk}"
    assert f'“OpenAI mini” 要有探针运行才会被测量：<a href="{link}">为它添加一个探针</a>。' in messages_of(response)
    assert "add a probe" not in response.content.decode()


def test_model_group_suggestions_and_their_message_are_in_chinese(chinese_admin):
    TargetFactory(name="Groq 70B", model="llama-3.1-70b-versatile")
    TargetFactory(name="Together 70B", model="meta-llama/Meta-Llama-3.1-70B-Instruct")
    changelist = reverse("admin:probes_modelgroup_changelist")

    text = chinese_admin.get(changelist).content.decode()
    assert "建议的分组" in text and "创建此分组" in text
    assert "Suggested groups" not in text and "Create this group" not in text

    created = chinese_admin.post(
        reverse("admin:probes_modelgroup_create_suggested"), {"key": model_key("llama-3.1-70b-versatile")}, follow=True
    )
    assert "已创建模型组 llama-3.1-70b-versatile。" in messages_of(created)


def test_a_refused_target_says_why_in_chinese(chinese_admin):
    response = chinese_admin.post(reverse("admin:probes_target_add"), target_data(model="", latitude=""))

    errors = response.context["adminform"].form.errors
    assert errors["model"] == ["OpenAI 兼容的聊天补全（chat completions）风格需要填写模型。"]
    assert errors["latitude"] == ["请同时填写纬度和经度，或都不填。"]
    assert not Target.objects.exists()
