"""Component nets: links, queues, token buckets, TCP senders and receivers, as sub-nets.

Each builder returns a :class:`~tcpn.petrinets.PetriNet` module with port places; the
topology composer (:mod:`tcpn.models.topology`) instantiates and fuses them.
"""

# ml_forms is imported for its effect: the CPN ML forms of the helpers
from tcpn.models.components import ml_forms  # noqa: F401
from tcpn.models.components.link import (
    ByteErrors,
    ListErrors,
    PacketErrors,
    Transmitter,
    interface_net,
)
from tcpn.models.components.packets import PACKET, Pkt
from tcpn.models.components.queues import (
    Dequeue,
    DropTailQueue,
    QueueDiscipline,
    RedQueue,
    ThresholdEcnQueue,
)
from tcpn.models.components.receiver import ReceiverConfig, receiver_net
from tcpn.models.components.sender import LOSS_BASED, SenderConfig, sender_net

__all__ = [
    "LOSS_BASED", "PACKET", "ByteErrors", "Dequeue", "DropTailQueue", "ListErrors",
    "PacketErrors", "Pkt", "QueueDiscipline", "ReceiverConfig", "RedQueue", "SenderConfig",
    "ThresholdEcnQueue", "Transmitter", "interface_net", "receiver_net", "sender_net",
]
