"""A fixture for tests that load policy plugins: the registry as it was afterwards (other tests list
and run every preset, and a plugin broken on purpose must not be among them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.policies import plugins, registry


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    registry.load_families()
    saved = [(table, dict(table)) for table in (registry.PRESETS, registry.ORDERINGS, registry.ALGORITHMS)]
    files = set(plugins.PLUGIN_FILES)
    yield
    for table, content in saved:
        table.clear()
        table.update(content)
    plugins.PLUGIN_FILES.clear()
    plugins.PLUGIN_FILES.update(files)
