"""The config reference (docs/config.md), generated from config.schema.yaml's descriptions.

The schema is the one place where keys, types, defaults and their meaning are written;
this module renders it as a Markdown table per section, and tests/test_config_reference.py
fails when docs/config.md differs from what it renders (regenerate with
`python -m boolbench.config_reference`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from boolbench.config import schema

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "config.md"
HEADER = """# Config reference

Generated from `boolbench/config.schema.yaml` by `python -m boolbench.config_reference`; do not
edit by hand (a test fails when the two differ). `config.yaml` is validated against the schema
when the workflow is parsed; an invalid key stops the run with one message naming it. The
sections `extraction`, `encoder`, `clustering`, `document_grouping` and `candidates` are
defaults for every corpus; a corpus entry may override any of their keys under the same
section name. `<name>` stands for a key you choose (a corpus or a model name).
"""


def _resolve(node: dict, schema: dict) -> dict:
    """The node with its $ref (if any) merged in; the node's own keys win."""
    ref = node.get("$ref")
    if not ref:
        return node
    target = schema["$defs"][ref.rsplit("/", 1)[-1]]
    return {**_resolve(target, schema), **{k: v for k, v in node.items() if k != "$ref"}}


def _type(node: dict) -> str:
    if "enum" in node:
        return " | ".join(_value(v) for v in node["enum"])
    kind = node.get("type", "")
    return " or ".join(kind) if isinstance(kind, list) else kind


def _value(value) -> str:
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def rows(node: dict, schema: dict, path: str) -> list[tuple[str, str, str, str]]:
    """(key, type, default, description) of `node` and, depth first, of its sub-keys."""
    node = _resolve(node, schema)
    out = []
    properties = node.get("properties")
    entries = node.get("additionalProperties")
    if path and (not properties or node.get("description")):
        default = _value(node["default"]) if "default" in node else ""
        if properties and default == "`{}`":
            default = ""  # a section's {} only means "its keys' defaults"
        out.append((path, _cell(_type(node)), default, _cell(node.get("description", ""))))
    for key, child in (properties or {}).items():
        out += rows(child, schema, f"{path}.{key}" if path else key)
    if isinstance(entries, dict) and ("$ref" in entries or "properties" in entries):
        out += rows(entries, schema, f"{path}.<name>")
    return out


def render(schema: dict) -> str:
    sections: dict[str, list] = {}
    for row in rows(schema, schema, ""):
        sections.setdefault(row[0].split(".")[0], []).append(row)
    parts = [HEADER]
    for section, section_rows in sections.items():
        parts.append(f"\n## `{section}`\n\n| key | type | default | meaning |\n|---|---|---|---|")
        parts += [
            f"| `{key}` | {kind} | {default} | {text} |"
            for key, kind, default, text in section_rows
        ]
    return "\n".join(parts) + "\n"


def main() -> None:
    text = render(schema())
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REFERENCE
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
