"""The engines: a net compiled once, then run by the timed simulator, in Python or in C.

Lives here: the compiler (:mod:`~tcpn.petrinets.engine.compiler`, one enabling and one firing
function per transition), the simulator and its calendar
(:mod:`~tcpn.petrinets.engine.simulator`), the result of a run, monitors, forced draws for
replaying a run, the native engine built with Cython (:mod:`~tcpn.petrinets.engine.native`)
and the C engine of the typed subset (:mod:`~tcpn.petrinets.engine.cnet`), and the caches on
disk of generated and built code.

The engine contract: :func:`~tcpn.petrinets.engine.compiler.compile_net` gives a
:class:`~tcpn.petrinets.engine.compiler.CompiledNet`; an engine runs it behind
:class:`~tcpn.petrinets.engine.simulator.Simulator` (``step()``, ``run()``, ``peek()``), and
every engine fires the same sequence for the same seed (``tests/test_native.py``). A new
engine goes here, selected where the simulator selects the native one.

May import: the net language (tcpn.petrinets' own modules) and the ground floor.
Must not import: the state space, the checkers, exchange, drawing, or anything of TCP.
"""
