"""Pure mathematics of TCP: fluid (DDE/ODE) models, closed forms, RED stability.

Lives here: the bottleneck fluid model and its delay-differential solver
(:mod:`tcpn.solvers.fluid`), closed forms derived with SymPy
(:mod:`tcpn.solvers.closed_forms`), the Hollot-Misra-Towsley-Gong stability analysis
(:mod:`tcpn.solvers.stability`). Nothing here knows scenarios, nets or lenses: the fluid
lens (:mod:`tcpn.lenses.fluid`) maps a scenario onto these models.

A new fluid model or closed form goes here; the lens that runs it on a scenario goes in
:mod:`tcpn.lenses`.

May import: the ground floor only (tcpn.errors).
"""
