"""Host names: which cluster a node belongs to, from its name. Imports nothing of the engine, so the
readers (recorded hosts) and the simulator (node placement) can both use it."""

from __future__ import annotations

import re

#: a host name: cluster name, node number, optional domain (``zewura19.cerit-sc.cz``)
HOST_NAME = re.compile(r"^([A-Za-z][A-Za-z_-]*?)(\d+)(\..*)?$")


def host_cluster(host: str) -> str:
    """The cluster a host belongs to: ``zewura19`` -> ``zewura`` (a name of another shape is its own cluster)."""
    match = HOST_NAME.match(host)
    return match.group(1) if match else host
