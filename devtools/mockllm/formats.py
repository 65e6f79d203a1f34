"""The mock server's wire formats: what an OpenAI (chat or Responses), Anthropic or Gemini answer
(streamed or whole) and error look like, item by item. Kept apart from the
HTTP side (devtools/mockllm/server.py), which serves them."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

SERVER_ERROR = "The server had an error while processing your request."

# Kinds of stream items. META, TOKEN and ANSWER are written and decide which
# timestamps a write sets; WAIT and HALF only tell the writer where the first
# token delay goes and where mid-stream faults strike. COMMENT is an SSE
# comment (a keep-alive): written, but no event, so it sets no stamp.
META, TOKEN, ANSWER, WAIT, HALF, COMMENT = range(6)

ANSWER_WORDS = ["Hello", " from", " the", " mock", " server", ":", " tokens", " arrive", " one", " at", " a", " time"]
REASONING_WORDS = ["Let", " me", " think", " about", " this", " step", " by", " step", "."]
# With split=1 the words carry 2-, 3- and 4-byte UTF-8 characters so that a
# split write can land inside one of them.
SPLIT_ANSWER_WORDS = ["héllo", " 日本", " naïve", " café", " 🚀", " from", " the", " mock", "."]
SPLIT_REASONING_WORDS = ["Hmm", " ça", " 思考", " déjà", " vu", " 🤔", "."]


def _dumps(obj: Any, indent: int | None = None) -> str:
    # Raw UTF-8 rather than \u escapes, so that split writes really cut characters.
    return json.dumps(obj, ensure_ascii=False, indent=indent, separators=None if indent else (",", ":"))


class _Format:
    """What one answer consists of, and the SSE framing shared by the providers."""

    # Anthropic's ping is an event (a client's first event); the others' keep-alives are SSE comments.
    ping_is_event = False

    def __init__(self, model: str, body: dict[str, Any], knobs: dict[str, Any], max_tokens: Any) -> None:
        self.model, self.knobs = model, knobs
        self.id, self.created = uuid.uuid4().hex[:24], int(time.time())
        # The server counts the prompt and asks the prompt cache (workloads.py) before the answer is written;
        # prompt_tokens includes the cached ones and the ones written to the cache, as OpenAI and Gemini count.
        self.prompt_tokens = self.cached_tokens = self.cache_write_tokens = 0
        self.capped = type(max_tokens) is int and 0 <= max_tokens < knobs["tokens"]
        self.answer = max_tokens if self.capped else knobs["tokens"]
        self.reasoning = knobs["reasoning_tokens"]
        words = SPLIT_ANSWER_WORDS if knobs["split"] else ANSWER_WORDS
        thoughts = SPLIT_REASONING_WORDS if knobs["split"] else REASONING_WORDS
        self.answer_words = [words[i % len(words)] for i in range(self.answer)]
        self.reasoning_words = [thoughts[i % len(thoughts)] for i in range(self.reasoning)]
        options = body.get("stream_options")
        self.include_usage = knobs["usage"] and isinstance(options, dict) and options.get("include_usage") is True
        self.eol = "\r\n" if knobs["crlf"] else "\n"
        self.echo = ""  # the credential, as echo_key shows it, for error messages
        self.pings = knobs["pings"]  # keep-alives while the first token is awaited

    @property
    def completion_tokens(self) -> int:
        return self.answer + self.reasoning

    def sse(self, data: Any = None, event: str | None = None, comment: str | None = None) -> bytes:
        lines = [":" + comment] if comment is not None else []
        if event:
            lines.append("event: " + event)
        if data is not None:
            text = data if isinstance(data, str) else _dumps(data, indent=2 if self.knobs["multiline"] else None)
            lines += ["data: " + part for part in text.split("\n")]
        return (self.eol.join(lines) + self.eol * 2).encode()

    def ping(self) -> bytes:
        return self.sse(comment=" keep-alive")

    def malformed(self) -> bytes:
        return self.sse(("Invalid request." + self.echo) if self.echo else '{"choices": [tru')

    def answers(self, make: Callable[[str, bool], bytes]) -> Iterator[tuple[int, bytes]]:
        for i, word in enumerate(self.answer_words):
            if i == self.answer // 2:
                yield HALF, b""
            yield ANSWER, make(word, i == self.answer - 1)
        if not self.answer:
            yield HALF, b""


class _OpenAI(_Format):
    def chunk(self, delta: dict[str, Any] | None, finish: str | None = None) -> bytes:
        obj: dict[str, Any] = {
            "id": "chatcmpl-mock" + self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if self.include_usage:
            obj["usage"] = self.usage() if delta is None else None
        return self.sse(obj)

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning},
        }

    def stream(self) -> Iterator[tuple[int, bytes]]:
        yield META, self.chunk({"role": "assistant", "content": ""})
        yield WAIT, self.chunk({"content": ""})  # sent after pings, as a token look-alike that is not one
        for word in self.reasoning_words:
            yield TOKEN, self.chunk({"reasoning_content": word})
        yield from self.answers(lambda word, last: self.chunk({"content": word}))
        yield META, self.chunk({}, "length" if self.capped else "stop")
        if self.include_usage:
            yield META, self.chunk(None)
        yield META, self.sse("[DONE]")

    def error(self) -> bytes:
        return self.sse({"error": {"message": SERVER_ERROR + self.echo, "type": "server_error", "code": None}})

    def complete(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.answer_words), "refusal": None}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning_words)
        obj = {
            "id": "chatcmpl-mock" + self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": "length" if self.capped else "stop"}
            ],
        }
        return {**obj, "usage": self.usage()} if self.knobs["usage"] else obj


class _Anthropic(_Format):
    def ev(self, data: dict[str, Any]) -> bytes:
        return self.sse(data, event=data["type"])

    def message(self, content: list[dict[str, Any]], stop: str | None, output_tokens: int) -> dict[str, Any]:
        return {
            "id": "msg_mock" + self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {**self.input_usage(), "output_tokens": output_tokens},
        }

    def input_usage(self) -> dict[str, int]:
        """Anthropic's input_tokens leave out the cached tokens and the ones written to the cache."""
        return {
            "input_tokens": self.prompt_tokens - self.cached_tokens - self.cache_write_tokens,
            "cache_creation_input_tokens": self.cache_write_tokens,
            "cache_read_input_tokens": self.cached_tokens,
        }

    ping_is_event = True

    def ping(self) -> bytes:
        return self.ev({"type": "ping"})

    def stream(self) -> Iterator[tuple[int, bytes]]:
        yield META, self.ev({"type": "message_start", "message": self.message([], None, 1)})
        yield WAIT, b""
        if self.reasoning:
            yield (
                META,
                self.ev(
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    }
                ),
            )
            for word in self.reasoning_words:
                yield (
                    TOKEN,
                    self.ev(
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "thinking_delta", "thinking": word},
                        }
                    ),
                )
            yield (
                META,
                self.ev(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "signature_delta", "signature": "mocksig-" + self.id},
                    }
                ),
            )
            yield META, self.ev({"type": "content_block_stop", "index": 0})
        index = 1 if self.reasoning else 0
        yield (
            META,
            self.ev({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        )
        yield from self.answers(
            lambda word, last: self.ev(
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": word}}
            )
        )
        yield META, self.ev({"type": "content_block_stop", "index": index})
        # Anthropic always reports usage, so the usage knob does not apply here.
        stop = "max_tokens" if self.capped else "end_turn"
        yield (
            META,
            self.ev(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    # Cumulative, the input side included, as the API sends it now.
                    "usage": {**self.input_usage(), "output_tokens": self.completion_tokens},
                }
            ),
        )
        yield META, self.ev({"type": "message_stop"})

    def error(self) -> bytes:
        return self.ev({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded" + self.echo}})

    def malformed(self) -> bytes:
        data = ("Invalid request." + self.echo) if self.echo else '{"choices": [tru'
        return self.sse(data, event="content_block_delta")

    def complete(self) -> dict[str, Any]:
        content = [{"type": "text", "text": "".join(self.answer_words)}]
        if self.reasoning:
            content.insert(
                0, {"type": "thinking", "thinking": "".join(self.reasoning_words), "signature": "mocksig-" + self.id}
            )
        return self.message(content, "max_tokens" if self.capped else "end_turn", self.completion_tokens)


class _Gemini(_Format):
    def response(self, parts: list[dict[str, Any]], final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        obj: dict[str, Any] = {"candidates": [candidate], "modelVersion": self.model, "responseId": self.id}
        if final:
            candidate["finishReason"] = "MAX_TOKENS" if self.capped else "STOP"
            if self.knobs["usage"]:
                usage = obj["usageMetadata"] = {"promptTokenCount": self.prompt_tokens}
                if self.cached_tokens:  # Gemini leaves out a count that is zero
                    usage["cachedContentTokenCount"] = self.cached_tokens
                usage["candidatesTokenCount"] = self.answer
                usage["thoughtsTokenCount"] = self.reasoning
                usage["totalTokenCount"] = self.prompt_tokens + self.completion_tokens
        return obj

    def stream(self) -> Iterator[tuple[int, bytes]]:
        yield WAIT, b""
        for word in self.reasoning_words:
            yield TOKEN, self.sse(self.response([{"text": word, "thought": True}], False))
        # Like the real API, the last text chunk itself carries finishReason and usage.
        yield from self.answers(lambda word, last: self.sse(self.response([{"text": word}], last)))
        if not self.answer:
            yield META, self.sse(self.response([{"text": ""}], True))

    def error(self) -> bytes:
        message = "The model is overloaded. Please try again later." + self.echo
        return self.sse({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})

    def complete(self) -> dict[str, Any]:
        parts = [{"text": "".join(self.answer_words)}]
        if self.reasoning:
            parts.insert(0, {"text": "".join(self.reasoning_words), "thought": True})
        return self.response(parts, True)


class _Responses(_Format):
    """OpenAI's Responses API: typed events, each with its sequence number."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.seq = 0
        self.msg_id, self.rs_id = "msg_mock" + self.id, "rs_mock" + self.id

    def ev(self, data: dict[str, Any]) -> bytes:
        data = {"type": data["type"], "sequence_number": self.seq, **data}
        self.seq += 1
        return self.sse(data, event=data["type"])

    def usage(self) -> dict[str, Any] | None:
        if not self.knobs["usage"]:
            return None
        return {
            "input_tokens": self.prompt_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens},
            "output_tokens": self.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning},
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    def response(self, status: str, output: list[dict[str, Any]], error: Any = None) -> dict[str, Any]:
        final = status in ("completed", "incomplete")
        return {
            "id": "resp_mock" + self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": self.model,
            "output": output,
            "error": error,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": None,
            "max_output_tokens": None,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "temperature": 1.0,
            "top_p": 1.0,
            "text": {"format": {"type": "text"}},
            "usage": self.usage() if final else None,
            "metadata": {},
        }

    def reasoning_item(self, done: bool) -> dict[str, Any]:
        summary = [{"type": "summary_text", "text": "".join(self.reasoning_words)}] if done else []
        return {"id": self.rs_id, "type": "reasoning", "summary": summary}

    def text_part(self, done: bool) -> dict[str, Any]:
        return {"type": "output_text", "text": "".join(self.answer_words) if done else "", "annotations": []}

    def message_item(self, done: bool) -> dict[str, Any]:
        status = ("incomplete" if self.capped else "completed") if done else "in_progress"
        content = [self.text_part(True)] if done else []
        return {"id": self.msg_id, "type": "message", "role": "assistant", "status": status, "content": content}

    def output(self) -> list[dict[str, Any]]:
        return ([self.reasoning_item(True)] if self.reasoning else []) + [self.message_item(True)]

    def stream(self) -> Iterator[tuple[int, bytes]]:
        yield META, self.ev({"type": "response.created", "response": self.response("in_progress", [])})
        yield META, self.ev({"type": "response.in_progress", "response": self.response("in_progress", [])})
        index = 1 if self.reasoning else 0
        where = {"item_id": self.msg_id, "output_index": index, "content_index": 0}
        rs_where = {"item_id": self.rs_id, "output_index": 0, "summary_index": 0}
        if self.reasoning:
            yield (
                META,
                self.ev({"type": "response.output_item.added", "output_index": 0, "item": self.reasoning_item(False)}),
            )
            part = {"type": "summary_text", "text": ""}
            yield META, self.ev({"type": "response.reasoning_summary_part.added", **rs_where, "part": part})
        else:
            yield (
                META,
                self.ev({"type": "response.output_item.added", "output_index": 0, "item": self.message_item(False)}),
            )
            yield META, self.ev({"type": "response.content_part.added", **where, "part": self.text_part(False)})
        yield WAIT, b""
        if self.reasoning:
            for word in self.reasoning_words:
                yield TOKEN, self.ev({"type": "response.reasoning_summary_text.delta", **rs_where, "delta": word})
            text = "".join(self.reasoning_words)
            yield META, self.ev({"type": "response.reasoning_summary_text.done", **rs_where, "text": text})
            part = {"type": "summary_text", "text": text}
            yield META, self.ev({"type": "response.reasoning_summary_part.done", **rs_where, "part": part})
            item = self.reasoning_item(True)
            yield META, self.ev({"type": "response.output_item.done", "output_index": 0, "item": item})
            yield (
                META,
                self.ev({"type": "response.output_item.added", "output_index": 1, "item": self.message_item(False)}),
            )
            yield META, self.ev({"type": "response.content_part.added", **where, "part": self.text_part(False)})
        yield from self.answers(
            lambda word, last: self.ev({"type": "response.output_text.delta", **where, "delta": word, "logprobs": []})
        )
        text = "".join(self.answer_words)
        yield META, self.ev({"type": "response.output_text.done", **where, "text": text, "logprobs": []})
        yield META, self.ev({"type": "response.content_part.done", **where, "part": self.text_part(True)})
        yield (
            META,
            self.ev({"type": "response.output_item.done", "output_index": index, "item": self.message_item(True)}),
        )
        # Capped by max_output_tokens: the API ends with response.incomplete instead.
        status = "incomplete" if self.capped else "completed"
        yield META, self.ev({"type": "response." + status, "response": self.response(status, self.output())})

    def error(self) -> bytes:
        error = {"code": "server_error", "message": SERVER_ERROR + self.echo}
        return self.ev({"type": "response.failed", "response": self.response("failed", [], error)})

    def malformed(self) -> bytes:
        data = ("Invalid request." + self.echo) if self.echo else '{"choices": [tru'
        return self.sse(data, event="response.output_text.delta")

    def complete(self) -> dict[str, Any]:
        return self.response("incomplete" if self.capped else "completed", self.output())


FORMATS: dict[str, type[_OpenAI | _Responses | _Anthropic | _Gemini]] = {
    "openai": _OpenAI,
    "responses": _Responses,
    "anthropic": _Anthropic,
    "gemini": _Gemini,
}
_GEMINI_STATUS = {400: "INVALID_ARGUMENT", 405: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}


def error_body(style: str, status: int, message: str, **extra: Any) -> dict[str, Any]:
    """Each provider's error JSON, so that clients classify errors as they would in production."""
    if style in ("openai", "responses"):
        kind, code = {429: ("requests", "rate_limit_exceeded"), 500: ("server_error", None)}.get(
            status, ("invalid_request_error", None)
        )
        return {"error": {"message": message, "type": kind, "param": None, "code": code, **extra}}
    if style == "anthropic":
        kind = {429: "rate_limit_error", 500: "api_error"}.get(status, "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message, **extra}}
    return {"error": {"code": status, "message": message, "status": _GEMINI_STATUS.get(status, "UNKNOWN"), **extra}}
