# cython: language_level=3, boundscheck=False, wraparound=False
# The Python face of one net's C engine (the C source is spliced in below).
from libc.stdint cimport int64_t
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pycapsule cimport PyCapsule_GetPointer

cdef extern from *:
    """
@C_SOURCE@
    """
    ctypedef struct bitgen_t:
        pass
    ctypedef struct NetState:
        int64_t total, firings, buffer_n, buffer_next
        int64_t counts[1]
        double now, last_at
        int fired, pending_t, last_t, refilled, err, err_where, err_t, err_nb
        int64_t pending_b[1]
        int64_t last_b[1]
        int64_t err_b[1]
        int64_t err_tok[1]
        double buffer[1024]
        bitgen_t *rng
    NetState *net_new()
    void net_free(NetState *s)
    void net_refresh_all(NetState *s)
    int net_run(NetState *s, double horizon, double limit, int flags, int via_set)
    void net_load(NetState *s, int p, const int64_t *v, int64_t count)
    void net_load_time(NetState *s, int p, const int64_t *v, double t)
    int64_t net_entries(NetState *s, int p)
    const int64_t *net_value(NetState *s, int p, int64_t i)
    int64_t net_have(NetState *s, int p, int64_t i)
    double net_time(NetState *s, int p, int64_t i, int64_t j)
    int net_width(int p)
    int net_nvars(int t)
    void net_settle(NetState *s)
    void net_outside(NetState *s, int t)
    void net_clear_place(NetState *s, int p)
    void net_set_count(NetState *s, int t, int64_t n)
    int64_t net_set_order(const int64_t *ops, int64_t n, int64_t *out)
    int NET_PLACES, NET_TRANSITIONS, NET_WIDTH, NET_VARS


def set_order(list ops):
    """The iteration order after ``ops`` on the C engine's copy of CPython's set (ops as
    ``net_set_order`` in runtime.c reads them): what tests compare with ``set``."""
    cdef Py_ssize_t n = len(ops), i
    cdef int64_t *buffer = <int64_t *> PyMem_Malloc((n + 1) * sizeof(int64_t))
    cdef int64_t *out = <int64_t *> PyMem_Malloc((n + 1) * sizeof(int64_t))
    if buffer is NULL or out is NULL:
        raise MemoryError()
    try:
        for i in range(n):
            buffer[i] = ops[i]
        k = net_set_order(buffer, n, out)
        return [out[i] for i in range(k)]
    finally:
        PyMem_Free(buffer)
        PyMem_Free(out)


cdef class State:
    """One simulator's marking, binding lists, live set and clock, in C."""

    cdef NetState *s
    cdef object generator  # keeps the bit generator alive while C draws from it

    def __cinit__(self):
        self.s = net_new()

    def __dealloc__(self):
        if self.s is not NULL:
            net_free(self.s)

    def load(self, int p, list rows, bint timed):
        """Put tokens on place p: rows of (slots, count) or (slots, timestamps)."""
        cdef int64_t v[64]
        cdef int i
        for row, amount in rows:
            for i in range(len(row)):
                v[i] = row[i]
            if timed:
                for stamp in amount:
                    net_load_time(self.s, p, v, stamp)
            else:
                net_load(self.s, p, v, amount)

    def dump(self, int p, bint timed):
        """The tokens of place p, as ``load`` takes them, in the order they appeared."""
        cdef int64_t i, j, n
        cdef int k, w = net_width(p)
        cdef const int64_t *v
        out = []
        for i in range(net_entries(self.s, p)):
            n = net_have(self.s, p, i)
            if n == 0:  # a value gone from the place
                continue
            v = net_value(self.s, p, i)
            row = tuple([v[k] for k in range(w)])
            if timed:
                out.append((row, [net_time(self.s, p, i, j) for j in range(n)]))
            else:
                out.append((row, n))
        return out

    def start(self, double now, int64_t firings, generator):
        """Set the clock and the counters, take the random stream, and enumerate all."""
        self.generator = generator
        self.s.rng = <bitgen_t *> PyCapsule_GetPointer(
            generator.bit_generator.capsule, "BitGenerator")
        self.s.now = now
        self.s.firings = firings
        net_refresh_all(self.s)

    def replay(self, int t, list places, list timed, list counts, int64_t firings):
        """Take a firing of ``t`` made outside (``Simulator.fire``): the pending
        after-effects first, then the marking after it (rows per place, as ``load``)
        and its own after-effects, as the Python engine's next refresh does them."""
        cdef int p
        net_settle(self.s)
        for p in range(len(places)):
            net_clear_place(self.s, p)
            self.load(p, places[p], timed[p])
        net_outside(self.s, t)
        for p in range(len(counts)):
            net_set_count(self.s, p, counts[p])
        self.s.firings = firings

    def set_buffer(self, list values, Py_ssize_t next_index):
        cdef Py_ssize_t i
        for i in range(len(values)):
            self.s.buffer[i] = values[i]
        self.s.buffer_n = len(values)
        self.s.buffer_next = next_index
        self.s.refilled = 0

    def buffer(self):
        """The choice buffer if C refilled it (else None), and the next index."""
        values = [self.s.buffer[i] for i in range(self.s.buffer_n)] if self.s.refilled else None
        return values, self.s.buffer_next

    def run(self, double horizon, double limit, int flags, bint via_set):
        return net_run(self.s, horizon, limit, flags, via_set)

    @property
    def now(self):
        return self.s.now

    @now.setter
    def now(self, double value):
        self.s.now = value

    @property
    def firings(self):
        return self.s.firings

    def counts(self):
        return [self.s.counts[i] for i in range(NET_TRANSITIONS)]

    def last(self):
        """The last firing: (transition, time, binding slots); transition -1 if none."""
        cdef int t = self.s.last_t
        if t < 0:
            return -1, 0.0, ()
        return t, self.s.last_at, tuple([self.s.last_b[i] for i in range(net_nvars(t))])

    def pending(self):
        """The binding chosen but not fired yet: (transition, slots)."""
        cdef int t = self.s.pending_t
        return t, tuple([self.s.pending_b[i] for i in range(net_nvars(t))])

    def error(self):
        """(code, site, transition, bound slots, token slots) of the last error."""
        cdef int t = self.s.err_t
        return (self.s.err, self.s.err_where, t,
                tuple([self.s.err_b[i] for i in range(self.s.err_nb)]),
                tuple([self.s.err_tok[i] for i in range(NET_WIDTH)]))
