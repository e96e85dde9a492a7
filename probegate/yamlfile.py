"""Reading YAML that a user or a download wrote, within bounds (pure).

PyYAML's ``safe_load`` builds what the text says, however deep or however often it
repeats itself: 1,000 nested ``[`` end in a ``RecursionError``, and a few lines of
anchors and aliases (the "billion laughs") describe a structure that JSON Schema
validation or ``json.dumps`` then walk for hours. :func:`load_yaml` composes the
document first, refuses one deeper than :data:`MAX_DEPTH` or that would expand to
more than :data:`MAX_NODES` nodes with its aliases followed, then constructs it.
"""

from __future__ import annotations

from typing import Any

import yaml

#: deepest nesting of collections accepted
MAX_DEPTH = 64
#: most nodes a document may have once every alias is expanded
MAX_NODES = 200_000


class YAMLTooLarge(yaml.YAMLError):
    """The document is nested too deep or expands to too many nodes."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise YAMLTooLarge(f"nested deeper than {MAX_DEPTH} levels (line {mark.line + 1}, "
                                   f"column {mark.column + 1})")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Nodes under ``node`` with aliases expanded (an alias reuses its anchor's node
    object); a recursive alias counts as too many."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = MAX_NODES + 1  # a node met again while inside itself: a cycle, endless
    total = 1
    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            total += _expanded_size(child, memo)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            total += _expanded_size(key, memo) + _expanded_size(value, memo)
    memo[id(node)] = total = min(total, MAX_NODES + 1)
    return total


def load_yaml(text: str) -> Any:
    """The one YAML document in ``text``, as plain Python data.

    Raises:
        yaml.YAMLError: not YAML, more than one document, or (:class:`YAMLTooLarge`)
            nested deeper than :data:`MAX_DEPTH` or expanding to more than
            :data:`MAX_NODES` nodes.
    """
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, {}) > MAX_NODES:
            raise YAMLTooLarge(f"expands to more than {MAX_NODES} nodes (aliases followed)")
        return loader.construct_document(node)
    finally:
        loader.dispose()
