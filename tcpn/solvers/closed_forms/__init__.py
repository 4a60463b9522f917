"""Closed-form TCP models, derived once in SymPy and evaluated through NumPy, one topic per module.

- :mod:`~tcpn.solvers.closed_forms.loss_throughput`: Mathis, PFTK, AIMD, Westwood+, TFRC;
- :mod:`~tcpn.solvers.closed_forms.vegas`: Vegas equilibria, Reno sharing a buffer with Vegas;
- :mod:`~tcpn.solvers.closed_forms.ecn`: ECN thresholds, DCTCP, RED guidelines, buffer sizing;
- :mod:`~tcpn.solvers.closed_forms.token_bucket`: TCP through a policer, marker or shaper;
- :mod:`~tcpn.solvers.closed_forms.cubic`: CUBIC's response function (RFC 9438);
- :mod:`~tcpn.solvers.closed_forms.random_loss`: packet error rates, throughput under random loss.

Every model function carries its SymPy expression (``pftk_full_pps.symbolic()``) and
numeric inverses (``solve_for``); see :mod:`~tcpn.solvers.closed_forms.formula`.
"""
