"""Python policy plugins on the server: those of the folder named by the ``SCHEDLAB_POLICY_DIR``
setting and of installed packages (entry-point group ``schedlab.policies``), loaded once per process
(web server and workers alike) so that the picker offers them and a worker can run them.

The server's admin installs them; visitors never upload Python (docs/policies.md). A plugin that
cannot be loaded is logged as one line and left out, the server starts regardless.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points

from django.conf import settings

from engine.api import POLICY_ENTRY_POINT_GROUP

logger = logging.getLogger(__name__)

def load_installed_policies() -> list[str]:
    """Load the configured plugins; the preset names they add. Nothing is imported of the engine's
    policies when no folder is set and no package declares plugins (start-up stays light)."""
    folder = settings.SCHEDLAB_POLICY_DIR or None
    if folder is None and not entry_points(group=POLICY_ENTRY_POINT_GROUP):
        return []
    from engine.api import load_policy_plugins

    loaded = load_policy_plugins(directory=folder, entry_points=True)
    for problem in loaded.problems:
        logger.error("policy plugin left out: %s", problem)
    return loaded.names
