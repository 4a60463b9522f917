"""Maps a scenario's 802.11 last hop (``links[].wireless``) onto a real ns-3 Wifi link.

Two Wifi nodes in ad-hoc mode, 1 m apart, a fixed received power of -30 dBm (so the SNR
is far above what any mode needs and frames fail only by the scenario's error model,
attached as each PHY's ``PostReceptionErrorModel``), a constant-rate station manager whose
data mode has exactly the link's ``rate_bps`` (802.11b DSSS/CCK, or 802.11a/g OFDM),
RTS/CTS off, the MAC frame retry limit ``retry_limit + 1`` (ns-3 counts attempts) and the
basic rate set {1 Mbit/s} (802.11a: {6 Mbit/s}), so that the MAC ACK goes at that rate as
in ns-2 and the net (``MAC_ACK_S``, ``tcpn::UseBasicRate``). A data frame's MPDU is its IP
packet + 36 bytes (MAC header, LLC/SNAP, FCS), what the net sends at the data rate
(``MAC_FRAMING_BYTES`` of :mod:`tcpn.models.components.wireless`), but for the TCP-L
option (``TCP_L_OPTION_BYTES``, a tag here) and the ACK-less hop's QoS control field (2).
``link_retransmissions: false`` sends every QoS data frame with the No Ack policy
(``tcpn::NoAckManager`` in ``cpp/wifi.h``): no MAC ACK, no retry; its best-effort queue
waits DIFS (AIFSN 2, ``tcpn::UseDifs``) as the DCF does, not EDCA's AIFS; its error model
(installed even without bit errors) also counts as arrived and lost each IPv4 frame the
receiving PHY dropped because it was transmitting (a collision: ``OnRxDrop``), as the net
counts every frame that did not get through, so TCP-L's report sees collisions. The hop's
``delay_s`` is the radio's propagation delay, as in the net lens: the nodes are
``delay_s`` x c apart (at least 1 m, 3.3 ns), and a delay above 1 us (802.11's
aAirPropagationTime, which the slot and the ACK timeout allow for) is refused: as a
propagation delay, 1 ms breaks the MAC, every MAC ACK missing its timeout (SIFS + slot +
ACK preamble) and carrier sense lagging by 1 ms, so the two stations' frames collide
(measured on S3 without MAC ACKs: 114 of the station's 166 frames lost). The scenario's
DCF timing (``medium_access: dcf``, ``slot_s``, ``sifs_s``, ``plcp_s``, ``cw_min``,
``cw_max``, ``eifs_s``: SIFS + the ACK at the lowest basic rate + DIFS, ns-3's
``ChannelAccessManager``'s EIFS) is ns-3's PHY's; a value set to another is refused, as
is ``medium_access: none`` (ns-3's MAC always contends).

Nothing here imports ns-3 until :func:`install` runs (inside the worker).

>>> wifi_mode(11e6)
('80211b', 'DsssRate11Mbps')
"""

from __future__ import annotations

import functools
import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BASIC_MODES", "DCF", "MAC_ACK_S", "MAX_PROPAGATION_S", "MODES",
           "TCP_L_OPTION_BYTES", "Ipv4Pcap", "WifiPlan", "energy_report", "error_model",
           "install", "is_wifi", "mac_counters", "plan", "problems", "radio_counters",
           "station_radios", "wifi_mode"]

MODES: dict[float, tuple[str, str]] = {
    1e6: ("80211b", "DsssRate1Mbps"), 2e6: ("80211b", "DsssRate2Mbps"),
    5.5e6: ("80211b", "DsssRate5_5Mbps"), 11e6: ("80211b", "DsssRate11Mbps"),
    **{r * 1e6: ("80211a", f"OfdmRate{r}Mbps") for r in (6, 9, 12, 18, 24, 36, 48, 54)},
}
"""802.11 data rate (bit/s) -> (standard, ns-3 WifiMode name) the lens can run."""

MAC_ACK_S = {"80211b": 10e-6 + 192e-6 + 14 * 8e-6,
             "80211a": 16e-6 + 20e-6 + 6 * 4e-6}
"""SIFS + the MAC ACK as the lens has ns-3.44 send it, by standard: at the basic rate
(``BASIC_MODES``), as ns-2's ``Mac802_11::sendACK`` does (``basicRate_``, 1 Mbit/s by
default) and as 802.11-2016 §10.6.6.5 reads with the basic rate set holding that rate
alone. 802.11b 314 us (192 us long PLCP preamble and header + 14 bytes at 1 Mbit/s, the
net's default ``mac_ack_s``), 802.11a 60 us (6 Mbit/s: 20 us preamble and SIGNAL, six 4 us
symbols for 16 + 112 + 6 bits). Left to itself ns-3.44 sends the 802.11b ACK at the 11
Mbit/s data rate (213 us with SIFS): its ad-hoc MAC puts every mandatory PHY mode (all
four DSSS/HR-DSSS rates) in the basic rate set on a peer's first frame;
``tcpn::UseBasicRate`` in ``cpp/wifi.h`` registers the peer beforehand so that the set
keeps the basic rate only (measured from ``PhyTxPsduBegin``'s TxVector:
``tcpn::StationRadio::ack_bps``). A scenario may not set another ``mac_ack_s``."""
#: The basic rate set of each standard (one mode, ns-2's ``basicRate_``): control
#: responses (MAC ACKs) and the EIFS's ACK go at this rate.
BASIC_MODES = {"80211b": "DsssRate1Mbps", "80211a": "OfdmRate6Mbps"}

DCF: dict[str, dict[str, float]] = {
    "80211b": {"slot_s": 20e-6, "sifs_s": 10e-6, "plcp_s": 192e-6, "cw_min": 31,
               "cw_max": 1023, "eifs_s": 10e-6 + 304e-6 + 50e-6},
    "80211a": {"slot_s": 9e-6, "sifs_s": 16e-6, "plcp_s": 20e-6, "cw_min": 15,
               "cw_max": 1023, "eifs_s": 16e-6 + 44e-6 + 34e-6}}
"""The DCF timing of ns-3's PHY by standard: 802.11b DSSS with the long preamble
(§16.4.4), 802.11a OFDM (§17.4.4; the 20 us preamble and SIGNAL field)."""
#: The longest radio propagation delay the lens places its nodes for (802.11's
#: aAirPropagationTime, 1 us, which the slot time and the ACK timeout allow for).
MAX_PROPAGATION_S = 1e-6
_LIGHT_M_PER_S = 299_792_458.0

_STANDARDS = {"80211b": "WIFI_STANDARD_80211b", "80211a": "WIFI_STANDARD_80211a"}
_LIBRARIES = ("stats", "antenna", "propagation", "mobility", "energy", "spectrum", "wifi")
_DISTANCE_M = 1.0


@dataclass(frozen=True)
class WifiPlan:
    """The 802.11 settings of a link: ``station`` is the mobile end, ``mode`` an ns-3
    WifiMode name of ``standard``; ``retry_limit`` retries (``ack`` false: none, no MAC
    ACK); ``extra_bytes`` are added to the IP size when drawing the byte-model PER; the
    nodes are ``distance_m`` apart."""

    station: str
    standard: str
    mode: str
    ack: bool
    retry_limit: int
    extra_bytes: int
    distance_m: float = 1.0


def wifi_mode(rate_bps: float) -> tuple[str, str]:
    """The (standard, mode) whose data rate is ``rate_bps``; ``KeyError`` if none."""
    return MODES[float(rate_bps)]


def problems(scenario: Any) -> list[str]:
    """What the ns3 lens cannot express about the scenario's wireless links, by field.

    >>> problems(type("S", (), {"links": []})())
    []
    """
    found = []
    for i, link in enumerate(scenario.links):
        wireless = link.wireless
        if wireless is None:
            continue
        where = f"links[{i}]"
        if float(link.rate_bps) not in MODES:
            rates = ", ".join(f"{r:g}" for r in sorted(MODES))
            found.append(f"{where}.rate_bps: no 802.11b/a mode runs at {link.rate_bps:g} "
                         f"bit/s (ns-3 has {rates})")
        elif "mac_ack_s" in wireless.model_fields_set and abs(
                wireless.mac_ack_s - MAC_ACK_S[wifi_mode(link.rate_bps)[0]]) > 1e-6:
            standard = wifi_mode(link.rate_bps)[0]
            found.append(f"{where}.wireless.mac_ack_s: ns-3's {standard} PHY spends "
                         f"{MAC_ACK_S[standard] * 1e6:.0f} us on SIFS + MAC ACK, not "
                         f"{wireless.mac_ack_s * 1e6:g} us")
        if float(link.rate_bps) in MODES:
            standard = wifi_mode(link.rate_bps)[0]
            for name, value in DCF[standard].items():
                mine = getattr(wireless, name)
                if name in wireless.model_fields_set and abs(mine - value) > 1e-9:
                    found.append(f"{where}.wireless.{name}: ns-3's {standard} PHY has "
                                 f"{name} {value:g}, not {mine:g}")
        if wireless.medium_access != "dcf":
            found.append(f"{where}.wireless.medium_access: ns-3's 802.11 MAC always "
                         "contends for the medium (DCF); 'none' is the net lens's only")
        if link.delay_s > MAX_PROPAGATION_S:
            found.append(f"{where}.delay_s: an 802.11 hop's delay is its radio propagation "
                         f"delay, at most {MAX_PROPAGATION_S * 1e6:g} us in ns-3's MAC (the "
                         f"slot and ACK timeout allow no more), not {link.delay_s:g} s")
        if wireless.station not in (link.a, link.b):
            found.append(f"{where}.wireless.station: {wireless.station} is not an end "
                         "of the link")
        for direction in (link.ab, link.ba):
            errors = direction.errors
            if errors is not None and getattr(errors, "unit", None) not in ("byte", "packet"):
                found.append(f"{where}.errors: the ns3 lens draws 802.11 frame errors "
                             "from a byte or packet rate, not a loss list")
                break
    return found


def plan(link: Any, tcp_option_bytes: int) -> WifiPlan | None:
    """The :class:`WifiPlan` of a scenario link (``None`` if it is wired)."""
    wireless = link.wireless
    if wireless is None:
        return None
    standard, mode = wifi_mode(link.rate_bps)
    return WifiPlan(station=wireless.station, standard=standard, mode=mode,
                    ack=wireless.link_retransmissions,
                    retry_limit=wireless.retry_limit if wireless.link_retransmissions else 0,
                    extra_bytes=link.l2_header_bytes + tcp_option_bytes,
                    distance_m=max(_DISTANCE_M, link.delay_s * _LIGHT_M_PER_S))


@functools.cache
def _load(cpp_dir: str) -> None:
    """Compile ns-3's Wifi modules and ``cpp/wifi.h`` into the running interpreter."""
    import cppyy
    import ns3 as wheel

    lib = Path(next(iter(wheel.__path__))) / "lib64"
    for module in ("wifi", "mobility", "propagation"):
        cppyy.include(f"ns3/{module}-module.h")
    for name in _LIBRARIES:
        (library,) = glob.glob(str(lib / f"libns3.*-{name}.so"))
        cppyy.load_library(library)
    cppyy.include(str(Path(cpp_dir) / "wifi.h"))


def install(ns: Any, a: Any, b: Any, wifi: WifiPlan, stream: int) -> tuple[Any, Any]:
    """Install an ad-hoc 802.11 link between nodes ``a`` and ``b``; returns the two
    devices (a NetDeviceContainer) and the PHY helper (for pcap). The MAC's and PHY's
    random variables (backoff) draw from streams from ``stream`` on, so that a run does
    not depend on what the process simulated before."""
    from tcpn.lenses.ns3.loader import CPP_DIR

    _load(str(CPP_DIR))
    import cppyy

    tcpn = cppyy.gbl.tcpn
    channel = ns.YansWifiChannelHelper()
    channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel")
    channel.AddPropagationLoss("ns3::FixedRssLossModel", "Rss", ns.DoubleValue(-30.0))
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    helper = ns.WifiHelper()
    helper.SetStandard(getattr(ns, _STANDARDS[wifi.standard]))
    control = BASIC_MODES[wifi.standard]
    helper.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                   "DataMode", ns.StringValue(wifi.mode),
                                   "ControlMode", ns.StringValue(control),
                                   "RtsCtsThreshold", ns.UintegerValue(65535))
    mac = ns.WifiMacHelper()
    mac.SetType("ns3::AdhocWifiMac", "QosSupported", ns.BooleanValue(not wifi.ack),
                "FrameRetryLimit", ns.UintegerValue(wifi.retry_limit + 1))
    nodes = ns.NodeContainer()
    nodes.Add(a)
    nodes.Add(b)
    devices = helper.Install(phy, mac, nodes)
    helper.AssignStreams(devices, stream)
    for k in range(2):  # the MAC ACK at the basic rate (MAC_ACK_S)
        tcpn.UseBasicRate(devices.Get(k), devices.Get(1 - k), control)
    mobility = ns.MobilityHelper()
    positions = ns.CreateObject[ns.ListPositionAllocator]()
    positions.Add(ns.Vector(0.0, 0.0, 0.0))
    positions.Add(ns.Vector(wifi.distance_m, 0.0, 0.0))
    mobility.SetPositionAllocator(positions)
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.Install(nodes)
    if not wifi.ack:
        for k in range(2):
            tcpn.UseNoAck(devices.Get(k))
            tcpn.UseDifs(devices.Get(k))
    return devices, phy


def error_model(ns: Any, wifi: WifiPlan, rate: float, per_byte: bool, stream: int,
                port_base: int, n_flows: int) -> Any:
    """A ``tcpn::WifiLinkErrorModel`` drawing the scenario's frame errors (with MAC ACKs
    it records as lost only the frames the sender's MAC drops at its retry limit: connect
    it with ``tcpn.ConnectFinalDrops``; without, the frames lost to collisions too: connect
    it with ``tcpn.ConnectCollisions``)."""
    import cppyy

    tcpn = cppyy.gbl.tcpn
    model = ns.CreateObject[tcpn.WifiLinkErrorModel]()
    model.Configure(rate, per_byte, port_base, n_flows)
    model.SetExtraBytes(wifi.extra_bytes)  # (an attribute set on a Ptr proxy is lost)
    model.RecordAttempts(not wifi.ack)  # acknowledged: losses are the MAC's final drops
    model.Seed(stream)
    return model


class Ipv4Pcap:
    """Captures a Wifi device's traffic at the IPv4 layer (raw-IP pcap, which
    :mod:`tcpn.models.pcap` reads) instead of as 802.11 frames: received packets
    when IP takes them, sent ones when IP hands them down (before the queue disc)."""

    def __init__(self, snap_bytes: int):
        self.snap_bytes = snap_bytes
        self.captures: list[Any] = []

    def EnablePcap(self, path: str, device: Any, promiscuous: bool,
                   explicit: bool) -> None:
        """Write ``device``'s IPv4 traffic to ``path``."""
        import cppyy

        capture = cppyy.gbl.tcpn.Ipv4Capture()
        if not cppyy.gbl.tcpn.CaptureIpv4(device, path, self.snap_bytes, capture):
            raise RuntimeError(f"cannot capture IPv4 at {path}")
        self.captures.append(capture)


def is_wifi(device: Any) -> bool:
    """Whether an ns-3 NetDevice is a Wifi device."""
    return str(device.GetInstanceTypeId().GetName()) == "ns3::WifiNetDevice"


def mac_counters(tcpn: Any, devices: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """Connect a ``tcpn::MacCounters`` to every Wifi device's sending side, keyed by the
    queue id ``"here->there"``."""
    counters = {}
    for (here, there), device in devices.items():
        if is_wifi(device):
            counters[f"{here}->{there}"] = tcpn.MacCounters()
            if not tcpn.ConnectMacCounters(device, counters[f"{here}->{there}"]):
                raise RuntimeError(f"cannot trace the Wifi MAC of {here}->{there}")
    return counters

def station_radios(tcpn: Any, links: Any, devices: dict[tuple[str, str], Any]
                   ) -> dict[str, Any]:
    """Connect a ``tcpn::StationRadio`` to the station's PHY of every 802.11 link plan,
    keyed ``"a-b"`` (the net lens's key)."""
    radios = {}
    for link in links:
        if link.wifi is None:
            continue
        other = link.b if link.wifi.station == link.a else link.a
        radio = radios[f"{link.a}-{link.b}"] = tcpn.StationRadio()
        radio.extra_bytes = link.wifi.extra_bytes
        if not tcpn.ConnectStationRadio(devices[(link.wifi.station, other)], radio):
            raise RuntimeError(f"cannot trace the Wifi PHY of {link.wifi.station}")
    return radios


_RADIO_FIELDS = ("tx_frames", "tx_bytes", "tx_acks", "tx_psdu_bytes", "rx_frames",
                 "rx_bytes", "rx_acks", "rx_psdu_bytes", "tx_s", "rx_s", "ack_bps")


def radio_counters(radio: Any) -> dict[str, float]:
    """The counters of a ``tcpn::StationRadio`` as plain numbers."""
    return {name: (float if name.endswith("_s") else int)(getattr(radio, name))
            for name in _RADIO_FIELDS}


def energy_report(scenario: Any, flows: Any, radios: dict[str, dict[str, float]],
                  sink_bytes: dict[str, int]) -> dict[str, Any]:
    """Per 802.11 link, the station's energy and bytes per joule from its PHY counters
    (``radios``: :func:`radio_counters` by ``"a-b"``), with the net lens's formula
    (:func:`~tcpn.models.components.wireless.station_energy`) and report fields
    (:func:`~tcpn.models.components.variants.wireless_report`); ``sink_bytes`` are the
    in-order bytes at the receivers of ``flows`` (objects with ``id``, ``src``, ``dst``).

    >>> from tcpn.models.scenario import validate_scenario
    >>> s = validate_scenario({"name": "w", "horizon_s": 1.0, "flows": [
    ...     {"id": "f", "src": "A", "dst": "B", "variant": "newreno"}], "links": [
    ...     {"a": "A", "b": "B", "rate_bps": 11e6, "delay_s": 0.0,
    ...      "wireless": {"station": "B"}}]})
    >>> r = {"tx_frames": 10, "tx_bytes": 600, "tx_acks": 10, "tx_s": 0.001,
    ...      "rx_frames": 10, "rx_bytes": 15000, "rx_acks": 10, "rx_s": 0.011}
    >>> e = energy_report(s, s.flows, {"A-B": r}, {"f": 14480})["A-B"]
    >>> round(e["energy_j"], 6), e["frames_to_station"], round(e["bytes_per_joule"])
    (0.813165, 10, 17807)
    """
    from tcpn.models.components.variants import radio_of
    from tcpn.models.components.wireless import station_energy

    report: dict[str, Any] = {}
    for link in scenario.links:
        key = f"{link.a}-{link.b}"
        if link.wireless is None or key not in radios:
            continue
        r = radios[key]
        station = link.wireless.station
        # station_energy's airtime tuples: (frames, bytes, MAC ACKs the other side of the
        # exchange sends, busy seconds); here the ACKs are counted where they are on air
        down = (int(r["rx_frames"]), int(r["rx_bytes"]), int(r["tx_acks"]), r["rx_s"])
        up = (int(r["tx_frames"]), int(r["tx_bytes"]), int(r["rx_acks"]), r["tx_s"])
        energy = station_energy(down, up, scenario.horizon_s, radio_of(link.wireless)[1])
        delivered = sum(int(sink_bytes[f.id]) for f in flows
                        if station in (f.src, f.dst) and f.id in sink_bytes)
        report[key] = {"station": station, **energy, "delivered_bytes": delivered,
                       "bytes_per_joule": delivered / energy["energy_j"]
                       if energy["energy_j"] else None,
                       "frames_to_station": r["rx_frames"],
                       "frames_from_station": r["tx_frames"],
                       "acks_to_station": r["rx_acks"], "acks_from_station": r["tx_acks"]}
    return report


TCP_L_OPTION_BYTES = 8
"""The TCP-L report option S3 adds to every TCP header (``tcp_header_bytes`` 28). The ns3
lens carries the report as a packet tag, so its segments are 8 bytes shorter on every
link; the 802.11 error model adds the bytes back when it draws a frame's PER."""
