"""Provider presets: who speaks which API style, and how they differ from it.

One list, used by the admin's "Provider preset" select (it fills style, URL
shape, key variable and HTTP version), by `probe --provider`, by the engine
(request shape: which header carries the key, whether `stream_options` may be
sent) and by the docs' table of what each preset was checked against (docs/guides/targets.md).

Plain data, no Django: region workers read it too. A target with no provider
("" = custom) is sent exactly as its style defines.

What each stream does differently (the response side) is read by the style
itself for every provider, since nothing in a chunk says who sent it and a
custom target may sit behind any of these servers: Azure's empty-choices
first chunk, reasoning in `delta.reasoning_content` or `delta.reasoning`,
Groq's `x_groq.usage`, keep-alive comments, errors in a `data:` line of an
HTTP 200 stream. `stream_quirks` names them per provider, for the docs and
the mock server's scenarios (devtools/mockllm), which reproduce each one.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

# Where the key goes. Most providers take the OpenAI convention.
BEARER = "authorization"
AZURE_KEY = "api-key"


@dataclass(frozen=True)
class Provider:
    key: str
    label: str
    style: str
    # The URL to fill in; {placeholders} are the parts only the user knows
    # (an Azure resource and deployment, the host of a self-hosted server).
    url_template: str
    # The environment variable a worker usually holds the key in; "" for
    # servers that take no key.
    api_key_env: str = ""
    # The header the key is sent in (for the openai style; the other styles
    # have their own provider's header).
    auth_header: str = BEARER
    # False for providers that refuse `stream_options` (Mistral answers 422
    # "Extra inputs are not permitted") and send usage unasked.
    stream_options: bool = True
    # The HTTP version the preset sets: 1.1, as the official Python SDKs use.
    http_version: str = "1.1"
    # A model name to start from (the admin shows it as an example only).
    model_example: str = ""
    # Documented differences in the stream, each reproduced by the mock
    # server's scenario of the same provider key.
    stream_quirks: tuple[str, ...] = ()
    # What the preset was checked against: the mock scenario only, here.
    checked_against: str = "mock"

    @property
    def placeholders(self) -> list[str]:
        return [name for _, name, _, _ in string.Formatter().parse(self.url_template) if name]


PROVIDER_LIST: tuple[Provider, ...] = (
    Provider(
        "openai",
        "OpenAI (Chat Completions)",
        "openai",
        "https://api.openai.com/v1/chat/completions",
        api_key_env="OPENAI_API_KEY",
        model_example="gpt-4o-mini",
    ),
    Provider(
        "openai-responses",
        "OpenAI (Responses)",
        "responses",
        "https://api.openai.com/v1/responses",
        api_key_env="OPENAI_API_KEY",
        model_example="gpt-5-mini",
    ),
    Provider(
        "anthropic",
        "Anthropic",
        "anthropic",
        "https://api.anthropic.com/v1/messages",
        api_key_env="ANTHROPIC_API_KEY",
        auth_header="x-api-key",
        model_example="claude-sonnet-4-5",
    ),
    Provider(
        "gemini",
        "Google Gemini",
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta",
        api_key_env="GEMINI_API_KEY",
        auth_header="x-goog-api-key",
        model_example="gemini-2.5-flash",
    ),
    Provider(
        "azure-openai",
        "Azure OpenAI",
        "openai",
        "https://{resource}.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21",
        api_key_env="AZURE_OPENAI_API_KEY",
        auth_header=AZURE_KEY,
        model_example="gpt-4o-mini",
        stream_quirks=(
            "the key in an api-key header, the deployment in the path and api-version in the query",
            "a first chunk with no choices, holding only prompt_filter_results",
            "content_filter_results in every chunk",
        ),
    ),
    Provider(
        "deepseek",
        "DeepSeek",
        "openai",
        "https://api.deepseek.com/chat/completions",
        api_key_env="DEEPSEEK_API_KEY",
        model_example="deepseek-reasoner",
        stream_quirks=(
            "reasoning in delta.reasoning_content before the answer",
            "': keep-alive' comments while the request waits",
        ),
    ),
    Provider(
        "mistral",
        "Mistral",
        "openai",
        "https://api.mistral.ai/v1/chat/completions",
        api_key_env="MISTRAL_API_KEY",
        stream_options=False,
        model_example="mistral-small-latest",
        stream_quirks=(
            "refuses stream_options with 422 (extra inputs are not permitted)",
            "usage on the last chunk without being asked",
        ),
    ),
    Provider(
        "groq",
        "Groq",
        "openai",
        "https://api.groq.com/openai/v1/chat/completions",
        api_key_env="GROQ_API_KEY",
        model_example="llama-3.3-70b-versatile",
        stream_quirks=(
            "usage in x_groq.usage on the last chunk",
            "an empty first chunk (role only, empty content)",
        ),
    ),
    Provider(
        "together",
        "Together AI",
        "openai",
        "https://api.together.xyz/v1/chat/completions",
        api_key_env="TOGETHER_API_KEY",
        model_example="meta-llama/Llama-3.3-70B-Instruct-Turbo",
        stream_quirks=("usage on the last content chunk, with its finish_reason",),
    ),
    Provider(
        "openrouter",
        "OpenRouter",
        "openai",
        "https://openrouter.ai/api/v1/chat/completions",
        api_key_env="OPENROUTER_API_KEY",
        model_example="openai/gpt-4o-mini",
        stream_quirks=(
            "': OPENROUTER PROCESSING' comments before the first chunk",
            "reasoning in delta.reasoning",
            "an upstream failure as an error object in a data: line of an HTTP 200 stream",
        ),
    ),
    Provider(
        "fireworks",
        "Fireworks AI",
        "openai",
        "https://api.fireworks.ai/inference/v1/chat/completions",
        api_key_env="FIREWORKS_API_KEY",
        model_example="accounts/fireworks/models/llama-v3p3-70b-instruct",
        stream_quirks=("usage on the last chunk, with its finish_reason",),
    ),
    Provider(
        "vllm",
        "vLLM (self-hosted)",
        "openai",
        "http://{host}:8000/v1/chat/completions",
        api_key_env="VLLM_API_KEY",
        model_example="Qwen/Qwen3-8B",
        stream_quirks=(
            "usage only when asked with stream_options.include_usage, in a chunk with no choices",
            "reasoning in delta.reasoning_content (older) or delta.reasoning (newer)",
        ),
    ),
    Provider(
        "llamacpp",
        "llama.cpp server",
        "openai",
        "http://{host}:8080/v1/chat/completions",
        model_example="local-model",
        stream_quirks=(
            "a first chunk with the role and null content",
            "timings on the last chunk",
        ),
    ),
    Provider(
        "ollama",
        "Ollama (OpenAI endpoint)",
        "openai",
        "http://{host}:11434/v1/chat/completions",
        model_example="llama3.2",
        stream_quirks=(
            "usage only when asked with stream_options.include_usage",
            "reasoning in delta.reasoning",
        ),
    ),
)

PROVIDERS: dict[str, Provider] = {provider.key: provider for provider in PROVIDER_LIST}
PROVIDER_KEYS = tuple(PROVIDERS)


def provider_for(key: str) -> Provider | None:
    """The preset a spec names, or None for a custom target ("")."""
    return PROVIDERS.get(key) if key else None
