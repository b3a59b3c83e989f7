"""Markdown for the API reference, from the app's own OpenAPI schema (so the pages cannot drift).

Two pages: the operations grouped by tag (`operations_markdown`) and the request and response records
(`schemas_markdown`). Every operation shares most error statuses; they are said once at the top of the
operations page and only an operation's own wording of a status is repeated beside it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

Schema = dict[str, Any]
SCHEMAS_PAGE = "schemas.md"
LONG_PATTERN = 40  # longer patterns are unreadable in a table; the field's description says the rule
BOUNDS = (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<"))
LENGTHS = (
    ("minLength", "min length"),
    ("maxLength", "max length"),
    ("minItems", "min items"),
    ("maxItems", "max items"),
    ("maxProperties", "max keys"),
)


def anchor(name: str) -> str:
    """The anchor of a record on the schemas page."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def operation_anchor(method: str, path: str) -> str:
    """The anchor of an operation on the operations page, e.g. `post-v1-corpora-name-rank`."""
    return anchor(f"{method} {path}")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _link(name: str, page: str) -> str:
    return f"[{name}]({page}#{anchor(name)})"


def type_text(schema: Schema, page: str = "") -> str:
    """A schema's type in words, records linked (`page` is the schemas page's path from the reader)."""
    if "$ref" in schema:
        return _link(_ref_name(schema["$ref"]), page)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [option for option in schema[key] if option.get("type") != "null"]
            text = " or ".join(dict.fromkeys(type_text(option, page) for option in options))
            nullable = len(options) < len(schema[key])
            return f"{text} or null" if nullable else text
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"array of {type_text(schema.get('items', {}), page)}"
    if kind == "object" or "properties" in schema or "patternProperties" in schema:
        return "object"
    return str(kind) if kind else "any"


def constraints(schema: Schema) -> list[str]:
    """Bounds, lengths and short patterns of a schema (and of the options of a nullable one)."""
    found: list[str] = []
    setting = schema.get("x-pairank-limit")
    if setting:  # the limit is a setting: name it (its value here is the default)
        value = next((schema[key] for key in ("maxLength", "maxItems") if key in schema), None)
        found.append(f"at most `PAIRANK_{setting.upper()}`" + (f", default {value}" if value else ""))
    for option in [schema, *schema.get("anyOf", [])]:
        for key, sign in BOUNDS:
            # 64-bit integer bounds are the JSON rule for every integer, not a limit worth a word.
            if key in option and abs(float(option[key])) < 1e15:
                found.append(f"{sign} {_number(option[key])}")
        for key, words in LENGTHS:
            if key in option and not (setting and option is schema and key in ("maxLength", "maxItems")):
                found.append(f"{words} {option[key]}")
        pattern = option.get("pattern")
        if pattern and len(pattern) <= LONG_PATTERN:
            found.append(f"pattern `{pattern}`")
    return list(dict.fromkeys(found))


def _number(value: Any) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def field_rows(schema: Schema, page: str) -> list[str]:
    """Table rows `| field | type | required | default | description |` of an object schema."""
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        limits = constraints(prop)
        description = prop.get("description", "")
        if limits:
            description = f"{description} ({'; '.join(limits)})".strip()
        yes = "yes" if name in required else ""
        rows.append(
            f"| `{name}` | {_cell(type_text(prop, page))} | {yes} | {default} | {_cell(description)} |"
        )
    return rows


def schemas_markdown(spec: Schema) -> str:
    """Every record of the schema, alphabetically: description, fields, an example when declared."""
    lines: list[str] = []
    for name, schema in sorted(spec["components"]["schemas"].items()):
        lines += [f"## {name} {{ #{anchor(name)} }}", ""]
        if schema.get("description"):
            lines += [schema["description"].strip(), ""]
        if schema.get("properties"):
            lines += [
                "| field | type | required | default | description |",
                "| --- | --- | --- | --- | --- |",
            ]
            lines += [*field_rows(schema, ""), ""]
        else:
            lines += [f"Type: {type_text(schema)}.", ""]
        for example in schema.get("examples", [])[:1]:
            lines += ["Example:", "", "```json", json.dumps(example, indent=2), "```", ""]
    return "\n".join(lines)


def _operations(spec: Schema) -> list[tuple[str, str, Schema]]:
    return [(method, path, op) for path, ops in spec["paths"].items() for method, op in ops.items()]


def common_errors(spec: Schema) -> dict[str, str]:
    """Each error status's most frequent description over all operations."""
    seen: dict[str, Counter[str]] = {}
    for _, _, op in _operations(spec):
        for status, response in op.get("responses", {}).items():
            if status >= "400":
                seen.setdefault(status, Counter())[response.get("description", "")] += 1
    return {status: counts.most_common(1)[0][0] for status, counts in sorted(seen.items())}


def _body_text(content: Schema) -> str:
    parts = []
    for media_type, body in content.items():
        schema = body.get("schema", {})
        shown = type_text(schema, SCHEMAS_PAGE) if schema else ""
        parts.append(f"{shown} (`{media_type}`)".strip())
    return "; ".join(parts)


def operation_markdown(method: str, path: str, op: Schema, errors: dict[str, str], spec: Schema) -> list[str]:
    """One operation: what it does, its scope, parameters, body (with an example) and responses."""
    summary = (op.get("description") or op.get("summary") or "").split("\n\nNeeds a key with scope")[0]
    lines = [
        f"### `{method.upper()} {path}` {{ #{operation_anchor(method, path)} }}",
        "",
        summary.strip(),
        "",
    ]
    scope = op.get("x-pairank-scope")
    lines += [f"**Scope:** `{scope}`" if scope else "**Scope:** none (no key needed)", ""]
    if op.get("parameters"):
        lines += [
            "| parameter | in | type | required | default | description |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for parameter in op["parameters"]:
            schema = parameter.get("schema", {})
            default = f"`{json.dumps(schema['default'])}`" if "default" in schema else ""
            limits = constraints(schema)
            description = parameter.get("description", "") + (f" ({'; '.join(limits)})" if limits else "")
            lines.append(
                f"| `{parameter['name']}` | {parameter['in']} | {_cell(type_text(schema, SCHEMAS_PAGE))} | "
                f"{'yes' if parameter.get('required') else ''} | {default} | {_cell(description)} |"
            )
        lines.append("")
    body = op.get("requestBody")
    if body:
        lines += [f"**Body:** {_body_text(body.get('content', {}))}", ""]
        first: Schema = next(iter(body.get("content", {}).values()), {})
        ref = first.get("schema", {}).get("$ref")
        examples = spec["components"]["schemas"].get(_ref_name(ref), {}).get("examples", []) if ref else []
        for example in examples[:1]:
            lines += ["```json", json.dumps(example), "```", ""]
    lines += ["| status | meaning | body |", "| --- | --- | --- |"]
    shared = []
    for status, response in op.get("responses", {}).items():
        description = response.get("description", "")
        if status >= "400" and description == errors.get(status):
            shared.append(status)
            continue
        content = _body_text(response.get("content", {}))
        lines.append(f"| {status} | {_cell(description)} | {_cell(content)} |")
    lines.append("")
    if shared:
        lines += [f"Also: {', '.join(sorted(shared))} (see [error statuses](#error-statuses)).", ""]
    return lines


def operations_markdown(spec: Schema) -> str:
    """The operations grouped by tag, in the schema's order, after the shared error statuses."""
    errors = common_errors(spec)
    lines = ["## Error statuses { #error-statuses }", ""]
    lines += ["Every error body is an [ErrorResponse](schemas.md#errorresponse).", ""]
    lines += ["| status | meaning |", "| --- | --- |"]
    lines += [f"| {status} | {_cell(text)} |" for status, text in errors.items()]
    lines.append("")
    tags: dict[str, list[tuple[str, str, Schema]]] = {}
    for method, path, op in _operations(spec):
        tags.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    for tag, operations in tags.items():
        lines += [f"## {tag.capitalize()}", ""]
        for method, path, op in operations:
            lines += operation_markdown(method, path, op, errors, spec)
    return "\n".join(lines)
