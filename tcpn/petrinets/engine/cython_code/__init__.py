"""The Python code the native engine hands Cython, made ready for it.

* :mod:`.shapes`: a transition's generated code as a module of its own, with its
  constants taken out (its *shape*, shared by the transitions that have it);
* :mod:`.groups`: one enumeration for transitions that differ only in their guards;
* :mod:`.twins`: the functions a net's inscriptions call, compiled beside it;
* :mod:`.plain_code`: a function's definition without what Cython need not read.

:mod:`~tcpn.petrinets.engine.native` builds, caches and loads what these write.
"""
