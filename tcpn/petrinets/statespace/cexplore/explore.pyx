# cython: language_level=3, boundscheck=False, wraparound=False
# The Python face of one net's C explorer (the C source is spliced in below).
from libc.stdint cimport int64_t, uint32_t, int32_t
from cpython.mem cimport PyMem_Free, PyMem_Malloc

cdef extern from *:
    """
@C_SOURCE@
    """
    ctypedef struct NetState:
        int err, err_where, err_nb
        int64_t err_b[1]
    ctypedef struct Contents:
        int64_t n, rn
        int64_t *start
        int64_t *rows
    ctypedef struct Explorer:
        NetState *s
        Contents contents[1]
        int64_t n_states, n_edges, n_seq, expanded, depth
        uint32_t *edge_dst
        int32_t *edge_label
        uint32_t *edge_start
        int32_t *seq
        int err_t
    Explorer *xs_new()
    void xs_free(Explorer *x)
    void xs_start(Explorer *x)
    int xs_run(Explorer *x, int64_t budget, int64_t state_cap, int64_t depth_cap)
    int64_t xs_bytes(const Explorer *x)
    void xs_numbers(const Explorer *x, int64_t first, int64_t count, uint32_t *out)
    int64_t xs_value_ids(const Explorer *x, int p, int32_t *ids, int64_t *values)
    int PLACE_WIDTH[1]
    void net_load(NetState *s, int p, const int64_t *v, int64_t count)
    int NET_PLACES


cdef bytes _raw(const void *data, Py_ssize_t size):
    return (<const char *> data)[:size] if size else b""


cdef class Exploration:
    """One breadth-first exploration in C: load the initial marking, start, run."""

    cdef Explorer *x

    def __cinit__(self):
        self.x = xs_new()

    def __dealloc__(self):
        if self.x is not NULL:
            xs_free(self.x)

    def load(self, int p, list rows):
        """Put tokens on place p: rows of (slots, count)."""
        cdef int64_t v[64]
        cdef int i
        for row, amount in rows:
            for i in range(len(row)):
                v[i] = row[i]
            net_load(self.x.s, p, v, amount)

    def start(self):
        """The loaded marking becomes state 0."""
        xs_start(self.x)

    def run(self, int64_t budget, int64_t state_cap, int64_t depth_cap):
        """Explore on (see xs_run): 0 complete, 1 paused, 2 max_states, 3 max_depth,
        -1 an error in the generated code."""
        return xs_run(self.x, budget, state_cap, depth_cap)

    @property
    def n_states(self):
        return self.x.n_states

    @property
    def expanded(self):
        return self.x.expanded

    @property
    def depth(self):
        return self.x.depth

    @property
    def bytes(self):
        return xs_bytes(self.x)

    @property
    def n_edges(self):
        return self.x.n_edges

    @property
    def n_contents(self):
        """Place contents numbered so far (all places)."""
        return self.x.n_seq

    def error(self):
        """(code, site, transition) of the error that stopped the exploration."""
        return self.x.s.err, self.x.s.err_where, self.x.err_t

    def numbers(self, int64_t first, int64_t count):
        """The content numbers of ``count`` states from ``first`` (uint32, NET_PLACES per
        state), as bytes."""
        cdef uint32_t *out = <uint32_t *> PyMem_Malloc((count * NET_PLACES + 1) * 4)
        if out is NULL:
            raise MemoryError()
        try:
            xs_numbers(self.x, first, count, out)
            return _raw(out, count * NET_PLACES * 4)
        finally:
            PyMem_Free(out)

    def edges(self):
        """Edge targets and the start of each expanded state's edges (uint32), and each
        edge's transition (int32), as bytes."""
        return (_raw(self.x.edge_dst, self.x.n_edges * 4),
                _raw(self.x.edge_start, (self.x.expanded + 1) * 4),
                _raw(self.x.edge_label, self.x.n_edges * 4))

    def sequence(self):
        """The place of every content numbered, in numbering order (int32), as bytes."""
        return _raw(self.x.seq, self.x.n_seq * 4)

    def contents(self, int p):
        """Place p's contents: the start of each one's rows (int64, in rows, one more than
        the contents), each row's value number (int32) and count (int64), and the
        distinct values' slots (int64, in value number order), as bytes."""
        cdef Contents *c = &self.x.contents[p]
        cdef int w = PLACE_WIDTH[p]
        cdef int64_t rows = c.rn // (w + 1), n, r
        cdef int32_t *ids = <int32_t *> PyMem_Malloc((rows + 1) * sizeof(int32_t))
        cdef int64_t *values = <int64_t *> PyMem_Malloc((rows * w + 1) * sizeof(int64_t))
        cdef int64_t *counts = <int64_t *> PyMem_Malloc((rows + 1) * sizeof(int64_t))
        cdef int64_t *starts = <int64_t *> PyMem_Malloc((c.n + 1) * sizeof(int64_t))
        if ids is NULL or values is NULL or counts is NULL or starts is NULL:
            raise MemoryError()
        try:
            n = xs_value_ids(self.x, p, ids, values)
            for r in range(rows):
                counts[r] = c.rows[r * (w + 1) + w]
            for r in range(c.n + 1):
                starts[r] = c.start[r] // (w + 1)
            return (_raw(starts, (c.n + 1) * 8), _raw(ids, rows * 4), _raw(counts, rows * 8),
                    _raw(values, n * w * 8))
        finally:
            PyMem_Free(ids)
            PyMem_Free(values)
            PyMem_Free(counts)
            PyMem_Free(starts)
