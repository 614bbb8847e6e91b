"""YAML for the platform files (machine descriptions, queue configurations).

The text is parsed once, keeping the node tree so readers can name the line of each key, and every
problem (bad syntax, a control character, a date that does not exist, an integer too long to
convert, nesting too deep) becomes one :class:`WorkloadError` naming the file and the line.
"""

from __future__ import annotations

from typing import Any

import yaml

from engine.workload.errors import WorkloadError, shown

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml when installed: ~10x faster


class _NodeError(yaml.MarkedYAMLError):
    """A value that YAML accepts but Python cannot build (30 February, a 5,000-digit integer)."""


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError, TypeError) as exc:
            raise _NodeError(problem=f"cannot read {shown(node.value)}: {exc}", problem_mark=node.start_mark) from None


def load_yaml(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """The document's data and its root node (None for an empty document)."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise WorkloadError(f"not valid YAML: {_problem(exc)}", file=source, line=_line(exc, text)) from None
    except RecursionError:
        raise WorkloadError("not valid YAML: nested too deeply", file=source) from None
    finally:
        loader.dispose()
    return data, node


def key_lines(node: yaml.Node | None) -> dict[str, int]:
    """For a mapping node: each key (as text) -> the 1-based line it is on."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(key.value): key.start_mark.line + 1 for key, _ in node.value}


def sequence_items(node: yaml.Node | None, key: str | None = None) -> list[yaml.Node]:
    """The item nodes of a sequence: ``node`` itself, or the value of ``key`` in mapping ``node``
    (an empty list where the tree does not have that shape, e.g. behind a merge key)."""
    if key is not None:
        node = next((v for k, v in node.value if k.value == key), None) if isinstance(node, yaml.MappingNode) else None
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def key_name(key: Any) -> str:
    """A mapping key as a field name in a message (keys may be numbers, or empty)."""
    return str(key) if str(key).strip() else repr(key)


def _problem(exc: yaml.YAMLError) -> str:
    text = getattr(exc, "problem", None) or str(exc)
    return " ".join(str(text).split())


def _line(exc: yaml.YAMLError, text: str) -> int | None:
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return mark.line + 1
    position = getattr(exc, "position", None)        # a ReaderError (a control character) has no mark
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None
