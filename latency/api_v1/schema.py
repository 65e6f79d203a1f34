"""Additions to the generated OpenAPI schema: the error answers every operation can give, so clients (and the
schema-driven tests) know them. Every error body is a JSON object: {"detail": "..."} for 401, 403, 404 and
409, and {"<field or parameter>": ["<message>", ...]} for a 400, naming what was refused."""

from __future__ import annotations

ERROR = {
    "type": "object",
    "description": '{"detail": message}, or for a 400 {field or parameter: [messages]}',
    "additionalProperties": True,
}
ERRORS = {
    "400": "A body field or query parameter was refused; the body names it.",
    "401": "No valid credentials: send Authorization: Bearer <token>.",
    "403": "The user lacks the permission.",
    "404": "No such object.",
    "409": "Rows still refer to the object (delete them first).",
}


def _applies(status: str, method: str, path: str, operation: dict) -> bool:
    if status == "400":
        return bool(operation.get("parameters")) or "requestBody" in operation
    if status == "404":
        return "{" in path or bool(operation.get("parameters"))
    if status == "409":
        return method == "delete"
    return True


def add_error_responses(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR
    for path, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
            responses = operation.setdefault("responses", {})
            for status, description in ERRORS.items():
                if status not in responses and _applies(status, method, path, operation):
                    responses[status] = {
                        "description": description,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                    }
    return result
