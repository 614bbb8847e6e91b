"""The engine's version, recorded in every result (a module of its own at the bottom of the layers,
so the simulator can read it without importing the package's public face)."""

__version__ = "0.1.0"
