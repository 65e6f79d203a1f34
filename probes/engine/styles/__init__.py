"""API styles. Adding one (OpenAI Responses, say) is one module and one line here."""

from probes.engine.styles.anthropic import AnthropicMessages
from probes.engine.styles.base import RequestPlan, StreamState, Style
from probes.engine.styles.gemini import GeminiStream
from probes.engine.styles.http import PlainHTTP
from probes.engine.styles.openai import OpenAIChat
from probes.engine.styles.responses import OpenAIResponses

STYLES: dict[str, Style] = {
    style.name: style for style in (OpenAIChat(), OpenAIResponses(), AnthropicMessages(), GeminiStream(), PlainHTTP())
}

__all__ = ["STYLES", "RequestPlan", "StreamState", "Style"]
