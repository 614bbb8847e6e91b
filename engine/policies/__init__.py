"""Policies = ordering x algorithm; the registry names the presets."""

from engine.policies.base import Param, PolicyError, PolicySpec

__all__ = ["Param", "PolicyError", "PolicySpec"]
