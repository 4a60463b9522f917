"""tcpn: timed coloured Petri nets, fluid models and ns-3 cross-validation for TCP.

Layers, with dependencies pointing one way only (``tests/test_layers.py`` reads the real
imports; ``docs/layout.md`` is the map)::

    errors limits outputs source workers          ground floor, imported by all
    solvers                                       pure mathematics, imports no other layer
    petrinets  <-  models  <-  lenses  <-  experiments  <-  reports  <-  cli.py
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tcpn.models.variant_registry import register_variant

__all__ = ["__version__", "register_variant"]

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``tcpn.register_variant``: imported when first asked, so ``import tcpn`` stays light
    (:mod:`tcpn.models.variant_registry`)."""
    if name == "register_variant":
        from tcpn.models.variant_registry import register_variant

        return register_variant
    raise AttributeError(f"module 'tcpn' has no attribute {name!r}")
