"""TCP in nets and data: the scenario schema, the component library, the trace schema and
the metrics every lens's trace is measured by.

Lives here: the scenario schema (:mod:`~tcpn.models.scenario`), the component nets (TCP
senders and receivers, queues, links, token buckets: :mod:`~tcpn.models.components`), the
topology composer that turns a scenario into one timed coloured Petri net, the trace schema
and result (:mod:`~tcpn.models.traces`), the one metrics module
(:mod:`~tcpn.models.metrics`, :mod:`~tcpn.models.summary`), pcap captures read into flow
events (:mod:`~tcpn.models.pcap`), the TCP property library and the verification nets
(:mod:`~tcpn.models.verification`).

A new TCP variant is one file registered with :func:`register_variant` (here, or from an
installed package's entry point ``tcpn.variants``; docs/variants.md); a new queue or link
model goes in ``components``; a new metric in ``metrics``.

May import: tcpn.petrinets and the ground floor.
Must not import: tcpn.solvers, tcpn.lenses, tcpn.experiments, tcpn.reports, tcpn.cli.
"""

from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import FluidLaw, Ns3Congestion, register_variant

__all__ = ["FluidLaw", "Ns3Congestion", "VariantParams", "register_variant"]
