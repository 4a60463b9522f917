/* The state-space explorer in C, for untimed nets of the C engine's subset: a port of the
   untimed path of tcpn.petrinets.statespace.space.explore (breadth-first, successors by
   priority group, transitions in the explorer's order, bindings in the order the
   compiled Python enumerates them).

   A state is one content number per place. A place's content is interned per place as
   its rows (slots then count) sorted as the Python store sorts values
   (statespace_store._sorted_items: by value, enumeration members by their Python
   value through RANKS), so that the marking a state loads into the places lists its
   values in the order the Python explorer's dicts do, and the bindings come out in the
   same order. Contents are numbered as they are first met, firing after firing, as the
   Python store numbers them; SEQ records the place of each new content in that order so
   the Python side can rebuild the store and its field widths exactly.

   The generated part (tc_enumerate, tc_fire, tc_gate, NET_* and the tables
   X_ORDER, X_GROUP_START, X_WRITES_*, X_SLOT_RANK, X_RANKS) comes before this file. */

typedef struct {
    int64_t n, cap;          /* contents 0..n-1 (0: the empty place) */
    int64_t *start;          /* content c's rows are rows[start[c] .. start[c + 1]) */
    int64_t *rows;
    int64_t rn, rcap;
    uint64_t *hashes;
    int64_t hcap;
    int64_t *table;          /* open addressing: content number, or -1 */
    int64_t tmask;
} Contents;

/* per transition: the content numbers of the places it reads or writes -> the numbers
   its firings leave in the places it writes, binding by binding (a firing depends on
   nothing else), so that a state whose combination was met before needs no firing */
#define MEMO_MAX_ENTRIES (1 << 20)
#define MEMO_FIRST_CHECK 1024
typedef struct {
    int off;                 /* dropped: most look-ups missed (every state was new) */
    int64_t lookups, next_check;
    int64_t n, kcap, ocap;
    uint32_t *keys;          /* X_RW of the transition: n entries of that many numbers */
    int64_t *offset;         /* entry -> its results in res: count, then the numbers */
    uint32_t *res;
    int64_t rn, rcap;
    int64_t *table;
    int64_t tmask;
} Memo;

typedef struct {
    NetState *s;
    Memo memos[NET_TRANSITIONS];
    Contents contents[NET_PLACES];
    /* a state is its content numbers packed in `words` 64-bit words, place p's in bits
       shift[p] .. shift[p] + width[p] of word word[p] (fields widen as contents come) */
    int word[NET_PLACES], shift[NET_PLACES], width[NET_PLACES];
    int words;
    uint64_t *states;        /* `words` words per state, in BFS order */
    int64_t n_states, states_cap;
    uint64_t *hashes;        /* per state: the sum of its places' number hashes */
    int64_t hashes_cap;
    uint32_t *table;         /* open addressing: state number, or EMPTY */
    int64_t tmask;
    uint32_t *edge_dst;
    int64_t n_edges, edge_cap;
    int32_t *edge_label;     /* the transition of each edge */
    int64_t label_cap;
    uint32_t *edge_start;    /* expanded + 1 entries */
    int64_t start_cap;
    int32_t *seq;            /* the place of every content numbered, in order */
    int64_t n_seq, seq_cap;
    int64_t expanded, depth, level_end;
    uint32_t loaded[NET_PLACES];  /* the content each place of s holds */
    int64_t *scratch;        /* a place's rows being made canonical */
    int64_t scap;
    uint32_t *results;       /* one transition's firings, as its memo keeps them */
    int64_t res_cap;
    int err_t;
} Explorer;

enum { XS_COMPLETE = 0, XS_PAUSED = 1, XS_MAX_STATES = 2, XS_MAX_DEPTH = 3, XS_ERROR = -1 };

/* -- canonical contents ------------------------------------------------------------------ */
static int cmp_width;
static const int *cmp_rank;   /* per slot: offset of its rank table in X_RANKS, or -1 */

static inline int64_t slot_order(int k, int64_t v) {
    return cmp_rank[k] >= 0 ? X_RANKS[cmp_rank[k] + v] : v;
}

static int row_cmp(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    for (int k = 0; k < cmp_width; k++) {
        int64_t u = slot_order(k, x[k]), v = slot_order(k, y[k]);
        if (u != v) return u < v ? -1 : 1;
    }
    return 0;
}

static inline uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

static void ct_init(Contents *c) {
    c->start = malloc(2 * sizeof(int64_t));
    c->hashes = malloc(sizeof(uint64_t));
    c->table = malloc(16 * sizeof(int64_t));
    if (c->start == NULL || c->hashes == NULL || c->table == NULL) abort();
    c->cap = 2; c->hcap = 1;
    c->n = 1;                 /* content 0: the empty place, no rows */
    c->start[0] = c->start[1] = 0;
    c->hashes[0] = mix(0x9E3779B97F4A7C15ULL, 0);
    for (int i = 0; i < 16; i++) c->table[i] = -1;
    c->tmask = 15;
    c->table[c->hashes[0] & 15] = 0;
}

static void ct_rehash(Contents *c) {
    int64_t size = 2 * (c->tmask + 1);
    int64_t *table = malloc((size_t)size * sizeof(int64_t));
    if (table == NULL) abort();
    for (int64_t i = 0; i < size; i++) table[i] = -1;
    for (int64_t k = 0; k < c->n; k++) {
        uint64_t j = c->hashes[k] & (uint64_t)(size - 1);
        while (table[j] >= 0) j = (j + 1) & (uint64_t)(size - 1);
        table[j] = k;
    }
    free(c->table);
    c->table = table; c->tmask = size - 1;
}

/* the number of place p's content (its canonical rows, `len` int64s): found, or new */
static int64_t ct_intern(Explorer *x, int p, const int64_t *rows, int64_t len) {
    Contents *c = &x->contents[p];
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int64_t i = 0; i < len; i++) h = mix(h, (uint64_t)rows[i]);
    h = mix(h, (uint64_t)len);
    uint64_t j = h & (uint64_t)c->tmask;
    for (;;) {
        int64_t k = c->table[j];
        if (k < 0) break;
        if (c->hashes[k] == h && c->start[k + 1] - c->start[k] == len
                && memcmp(c->rows + c->start[k], rows, (size_t)len * sizeof(int64_t)) == 0)
            return k;
        j = (j + 1) & (uint64_t)c->tmask;
    }
    int64_t k = c->n;
    c->rows = grow(c->rows, &c->rcap, c->rn + len, sizeof(int64_t));
    if (len) memcpy(c->rows + c->rn, rows, (size_t)len * sizeof(int64_t));
    c->rn += len;
    int64_t cap = c->cap;
    c->start = grow(c->start, &cap, k + 2, sizeof(int64_t));
    c->cap = cap;
    c->hashes = grow(c->hashes, &c->hcap, k + 1, sizeof(uint64_t));
    c->start[k + 1] = c->rn;
    c->hashes[k] = h;
    c->n++;
    c->table[j] = k;
    if (2 * c->n > c->tmask + 1) ct_rehash(c);
    x->seq = grow(x->seq, &x->seq_cap, x->n_seq + 1, sizeof(int32_t));
    x->seq[x->n_seq++] = p;
    return k;
}

/* the number of the content place p holds in the net state */
static int64_t place_number(Explorer *x, int p) {
    const Place *pl = &x->s->places[p];
    const int w = pl->width, rw = w + 1;
    x->scratch = grow(x->scratch, &x->scap, (pl->live + 1) * rw, sizeof(int64_t));
    int64_t m = 0;
    for (int64_t i = 0; i < pl->n; i++) {
        if (pl->count[i] == 0) continue;
        memcpy(x->scratch + m * rw, pl->vals + i * w, (size_t)w * sizeof(int64_t));
        x->scratch[m * rw + w] = pl->count[i];
        m++;
    }
    if (m > 1) {
        cmp_width = w;
        cmp_rank = X_SLOT_RANK + p * NET_WIDTH;
        qsort(x->scratch, (size_t)m, (size_t)rw * sizeof(int64_t), row_cmp);
    }
    return ct_intern(x, p, x->scratch, m * rw);
}

/* put content `number` into place p of the net state, its values in canonical order */
static void place_load(Explorer *x, int p, uint32_t number) {
    Place *pl = &x->s->places[p];
    const Contents *c = &x->contents[p];
    const int rw = pl->width + 1;
    pl_clear(pl);
    for (int64_t i = c->start[number]; i < c->start[number + 1]; i += rw)
        pl_add(pl, c->rows + i, c->rows[i + rw - 1]);
    x->loaded[p] = number;
}

/* -- states ------------------------------------------------------------------------------ */
#define EMPTY UINT32_MAX

/* place p holding content n, as a term of a state's hash (a sum: a successor's hash
   follows from its state's by the places a firing writes) */
static inline uint64_t number_hash(int p, uint32_t n) {
    return mix(mix(0x9E3779B97F4A7C15ULL + (uint64_t)p, n), (uint64_t)p + 1);
}

static inline uint32_t get_field(const Explorer *x, const uint64_t *v, int p) {
    return (uint32_t)((v[x->word[p]] >> x->shift[p]) & ((UINT64_C(1) << x->width[p]) - 1));
}

static inline void set_field(const Explorer *x, uint64_t *v, int p, uint32_t n) {
    uint64_t mask = ((UINT64_C(1) << x->width[p]) - 1) << x->shift[p];
    v[x->word[p]] = (v[x->word[p]] & ~mask) | ((uint64_t)n << x->shift[p]);
}

static void layout(Explorer *x) {
    int w = 0, shift = 0;
    for (int p = 0; p < NET_PLACES; p++) {
        if (shift + x->width[p] > 64) { w++; shift = 0; }
        x->word[p] = w; x->shift[p] = shift;
        shift += x->width[p];
    }
    x->words = w + 1;
}

/* place p's numbers reach `number`: its field widens (to twice its width at least), and
   every state is re-packed (a place widens a handful of times at most) */
static void widen(Explorer *x, int p, uint32_t number) {
    uint32_t numbers[NET_PLACES];
    int old_word[NET_PLACES], old_shift[NET_PLACES], old_width[NET_PLACES], old_words = x->words;
    memcpy(old_word, x->word, sizeof(old_word));
    memcpy(old_shift, x->shift, sizeof(old_shift));
    memcpy(old_width, x->width, sizeof(old_width));
    int need = 1;
    while (need < 32 && ((uint64_t)number >> need)) need++;
    x->width[p] = need > 2 * x->width[p] ? need : 2 * x->width[p];
    if (x->width[p] > 32) x->width[p] = 32;
    layout(x);
    uint64_t *states = calloc((size_t)(x->n_states + 1) * (size_t)x->words, sizeof(uint64_t));
    if (states == NULL) abort();
    for (int64_t k = 0; k < x->n_states; k++) {
        const uint64_t *v = x->states + k * old_words;
        for (int q = 0; q < NET_PLACES; q++)
            numbers[q] = (uint32_t)((v[old_word[q]] >> old_shift[q]) & ((UINT64_C(1) << old_width[q]) - 1));
        for (int q = 0; q < NET_PLACES; q++) set_field(x, states + k * x->words, q, numbers[q]);
    }
    free(x->states);
    x->states = states;
    x->states_cap = (x->n_states + 1) * x->words;
}

static void st_rehash(Explorer *x) {
    int64_t size = 2 * (x->tmask + 1);
    uint32_t *table = malloc((size_t)size * sizeof(uint32_t));
    if (table == NULL) abort();
    for (int64_t i = 0; i < size; i++) table[i] = EMPTY;
    for (int64_t k = 0; k < x->n_states; k++) {
        uint64_t j = mix(x->hashes[k], 0) & (uint64_t)(size - 1);
        while (table[j] != EMPTY) j = (j + 1) & (uint64_t)(size - 1);
        table[j] = (uint32_t)k;
    }
    free(x->table);
    x->table = table; x->tmask = size - 1;
}

/* the number of the state packed in v (hash h): found, or appended (a new state of the
   breadth-first order) */
static int64_t st_intern(Explorer *x, const uint64_t *v, uint64_t h) {
    const int words = x->words;
    uint64_t j = mix(h, 0) & (uint64_t)x->tmask;
    for (;;) {
        uint32_t k = x->table[j];
        if (k == EMPTY) break;
        if (x->hashes[k] == h && memcmp(x->states + (int64_t)k * words, v,
                                        (size_t)words * sizeof(uint64_t)) == 0)
            return k;
        j = (j + 1) & (uint64_t)x->tmask;
    }
    int64_t k = x->n_states;
    x->states = grow(x->states, &x->states_cap, (k + 1) * words, sizeof(uint64_t));
    x->hashes = grow(x->hashes, &x->hashes_cap, k + 1, sizeof(uint64_t));
    memcpy(x->states + k * words, v, (size_t)words * sizeof(uint64_t));
    x->hashes[k] = h;
    x->n_states++;
    x->table[j] = (uint32_t)k;
    if (2 * x->n_states > x->tmask + 1) st_rehash(x);
    return k;
}

static void memo_reset(Memo *m, int64_t size) {
    free(m->table);
    m->table = malloc((size_t)size * sizeof(int64_t));
    if (m->table == NULL) abort();
    for (int64_t i = 0; i < size; i++) m->table[i] = -1;
    m->tmask = size - 1;
    m->n = m->rn = 0;
}

static inline uint64_t memo_hash(const uint32_t *key, int n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int k = 0; k < n; k++) h = mix(h, key[k]);
    return h;
}

/* the results of transition t's combination `key` (nk numbers), or NULL; *slot: where a
   new entry goes */
static const uint32_t *memo_find(const Memo *m, const uint32_t *key, int nk, uint64_t *slot) {
    uint64_t j = memo_hash(key, nk) & (uint64_t)m->tmask;
    for (;;) {
        int64_t e = m->table[j];
        if (e < 0) { *slot = j; return NULL; }
        if (memcmp(m->keys + e * nk, key, (size_t)nk * sizeof(uint32_t)) == 0)
            return m->res + m->offset[e];
        j = (j + 1) & (uint64_t)m->tmask;
    }
}

static void memo_grow(Memo *m, int nk) {
    int64_t size = 2 * (m->tmask + 1);
    int64_t *table = malloc((size_t)size * sizeof(int64_t));
    if (table == NULL) abort();
    for (int64_t i = 0; i < size; i++) table[i] = -1;
    for (int64_t e = 0; e < m->n; e++) {
        uint64_t j = memo_hash(m->keys + e * nk, nk) & (uint64_t)(size - 1);
        while (table[j] >= 0) j = (j + 1) & (uint64_t)(size - 1);
        table[j] = e;
    }
    free(m->table);
    m->table = table; m->tmask = size - 1;
}

/* remember `results` (count, then the numbers) for `key` at `slot` (from memo_find) */
static void memo_add(Memo *m, const uint32_t *key, int nk, uint64_t slot,
                     const uint32_t *results, int64_t len) {
    if (m->n >= m->next_check) {  /* as the Python explorer's memos: judged as they grow */
        m->next_check *= 4;
        if (2 * m->n > m->lookups) {
            m->off = 1;
            free(m->keys); free(m->offset); free(m->res);
            m->keys = NULL; m->offset = NULL; m->res = NULL;
            m->kcap = m->ocap = m->rcap = 0;
            memo_reset(m, 1);
            return;
        }
    }
    if (m->n >= MEMO_MAX_ENTRIES) {  /* bounded: emptied, refilled from here on */
        memo_reset(m, m->tmask + 1);
        slot = memo_hash(key, nk) & (uint64_t)m->tmask;
    }
    int64_t e = m->n;
    m->keys = grow(m->keys, &m->kcap, (e + 1) * nk, sizeof(uint32_t));
    m->offset = grow(m->offset, &m->ocap, e + 1, sizeof(int64_t));
    m->res = grow(m->res, &m->rcap, m->rn + len, sizeof(uint32_t));
    memcpy(m->keys + e * nk, key, (size_t)nk * sizeof(uint32_t));
    memcpy(m->res + m->rn, results, (size_t)len * sizeof(uint32_t));
    m->offset[e] = m->rn;
    m->rn += len;
    m->table[slot] = e;
    m->n++;
    if (2 * m->n > m->tmask + 1) memo_grow(m, nk);
}

static Explorer *xs_new(void) {
    Explorer *x = calloc(1, sizeof(Explorer));
    if (x == NULL) abort();
    x->s = net_new();
    for (int p = 0; p < NET_PLACES; p++) ct_init(&x->contents[p]);
    for (int t = 0; t < NET_TRANSITIONS; t++) {
        memo_reset(&x->memos[t], 64);
        x->memos[t].next_check = MEMO_FIRST_CHECK;
    }
    x->table = malloc(1024 * sizeof(uint32_t));
    if (x->table == NULL) abort();
    for (int i = 0; i < 1024; i++) x->table[i] = EMPTY;
    x->tmask = 1023;
    for (int p = 0; p < NET_PLACES; p++) x->width[p] = 1;
    layout(x);
    x->err_t = -1;
    return x;
}

static void xs_free(Explorer *x) {
    for (int p = 0; p < NET_PLACES; p++) {
        Contents *c = &x->contents[p];
        free(c->start); free(c->rows); free(c->hashes); free(c->table);
    }
    free(x->states); free(x->hashes); free(x->table); free(x->edge_dst); free(x->edge_label); free(x->edge_start);
    free(x->seq); free(x->scratch); free(x->results);
    for (int t = 0; t < NET_TRANSITIONS; t++) {
        Memo *m = &x->memos[t];
        free(m->keys); free(m->offset); free(m->res); free(m->table);
    }
    net_free(x->s);
    free(x);
}

/* content `number` of place p is in a state about to be stored: its field fits it */
static inline void fit(Explorer *x, int p, uint32_t number) {
    if ((uint64_t)number >> x->width[p]) widen(x, p, number);
}

/* the initial marking, loaded into the net state's places beforehand, becomes state 0 */
static void xs_start(Explorer *x) {
    uint32_t v[NET_PLACES];
    uint64_t packed[NET_PLACES + 1] = {0}, h = 0;
    for (int p = 0; p < NET_PLACES; p++) v[p] = (uint32_t)place_number(x, p);
    for (int p = 0; p < NET_PLACES; p++) {
        place_load(x, p, v[p]);
        fit(x, p, v[p]);
        h += number_hash(p, v[p]);
    }
    for (int p = 0; p < NET_PLACES; p++) set_field(x, packed, p, v[p]);
    st_intern(x, packed, h);
    x->edge_start = grow(x->edge_start, &x->start_cap, 1, sizeof(uint32_t));
    x->edge_start[0] = 0;
    x->level_end = 1;
}

/* the numbers transition t's firings leave in the places it writes, in state `cur`
   (count, then X_WRITES numbers per binding), into x->results; -1 on an error */
static int64_t xs_fire_all(Explorer *x, int t, const uint32_t *cur) {
    NetState *s = x->s;
    for (int r = X_RW_START[t]; r < X_RW_START[t + 1]; r++) {
        int p = X_RW_LIST[r];
        if (x->loaded[p] != cur[p]) place_load(x, p, cur[p]);
    }
    const int nw = X_WRITES_START[t + 1] - X_WRITES_START[t];
    x->results = grow(x->results, &x->res_cap, 1, sizeof(uint32_t));
    x->results[0] = 0;
    if (GATE_OF[t] >= 0) {
        double ready;
        int ok = tc_gate(s, GATE_OF[t], &ready);
        if (s->err) { x->err_t = t; return -1; }
        if (!ok) return 1;
    }
    tc_enumerate(s, t);
    if (s->err) { x->err_t = t; return -1; }
    const Bindings *b = &s->bindings[t];
    const int nv = NVARS[t];
    int64_t len = 1 + b->n * nw;
    x->results = grow(x->results, &x->res_cap, len, sizeof(uint32_t));
    x->results[0] = (uint32_t)b->n;
    for (int64_t k = 0; k < b->n; k++) {
        tc_fire(s, t, b->vals + k * nv, 0.0);
        if (s->err) { x->err_t = t; return -1; }
        uint32_t *out = x->results + 1 + k * nw;
        for (int w = 0; w < nw; w++) out[w] = (uint32_t)place_number(x, X_WRITES_LIST[X_WRITES_START[t] + w]);
        for (int w = 0; w < nw; w++) {
            int p = X_WRITES_LIST[X_WRITES_START[t] + w];
            place_load(x, p, cur[p]);
        }
    }
    return len;
}

/* the successors of state i, appended to the edges; -1 on an error of the generated code */
static int xs_expand(Explorer *x, int64_t i) {
    uint32_t cur[NET_PLACES], key[NET_PLACES];
    uint64_t packed[NET_PLACES + 1], next[NET_PLACES + 1];
    const uint64_t h = x->hashes[i];
    int words = x->words;
    memcpy(packed, x->states + i * words, (size_t)words * sizeof(uint64_t));
    for (int p = 0; p < NET_PLACES; p++) cur[p] = get_field(x, packed, p);
    int64_t first_edge = x->n_edges;
    for (int g = 0; g < X_GROUPS; g++) {
        for (int o = X_GROUP_START[g]; o < X_GROUP_START[g + 1]; o++) {
            int t = X_ORDER[o];
            const int nk = X_RW_START[t + 1] - X_RW_START[t];
            const int *writes = X_WRITES_LIST + X_WRITES_START[t];
            const int nw = X_WRITES_START[t + 1] - X_WRITES_START[t];
            for (int r = 0; r < nk; r++) key[r] = cur[X_RW_LIST[X_RW_START[t] + r]];
            Memo *m = &x->memos[t];
            uint64_t slot = 0;
            const uint32_t *found = NULL;
            if (!m->off) {
                m->lookups++;
                found = memo_find(m, key, nk, &slot);
            }
            if (found == NULL) {
                int64_t len = xs_fire_all(x, t, cur);
                if (len < 0) return -1;
                if (!m->off) memo_add(m, key, nk, slot, x->results, len);
                found = x->results;
            }
            const int64_t nb = found[0];
            for (int64_t k = 0; k < nb; k++) {
                const uint32_t *after = found + 1 + k * nw;
                uint64_t hn = h;
                for (int w = 0; w < nw; w++) {
                    int p = writes[w];
                    if ((uint64_t)after[w] >> x->width[p]) {  /* re-packed: this state too */
                        widen(x, p, after[w]);
                        words = x->words;
                        memset(packed, 0, sizeof(packed));
                        for (int q = 0; q < NET_PLACES; q++) set_field(x, packed, q, cur[q]);
                    }
                    hn += number_hash(p, after[w]) - number_hash(p, cur[p]);
                }
                memcpy(next, packed, (size_t)words * sizeof(uint64_t));
                for (int w = 0; w < nw; w++) set_field(x, next, writes[w], after[w]);
                int64_t target = st_intern(x, next, hn);
                x->edge_dst = grow(x->edge_dst, &x->edge_cap, x->n_edges + 1, sizeof(uint32_t));
                x->edge_label = grow(x->edge_label, &x->label_cap, x->n_edges + 1, sizeof(int32_t));
                x->edge_label[x->n_edges] = (int32_t)t;
                x->edge_dst[x->n_edges++] = (uint32_t)target;
            }
        }
        if (x->n_edges != first_edge) break;
    }
    return 0;
}

/* the content numbers of states first .. first + count - 1 (NET_PLACES each) into out */
static void xs_numbers(const Explorer *x, int64_t first, int64_t count, uint32_t *out) {
    for (int64_t k = 0; k < count; k++)
        for (int p = 0; p < NET_PLACES; p++)
            out[k * NET_PLACES + p] = get_field(x, x->states + (first + k) * x->words, p);
}

/* explores on from where the last call stopped: at most `budget` states expanded (< 0: no
   limit); stops past `state_cap` states (the last expansion undone) or at `depth_cap` */
static int xs_run(Explorer *x, int64_t budget, int64_t state_cap, int64_t depth_cap) {
    while (x->expanded < x->n_states) {
        int64_t i = x->expanded;
        if (i == x->level_end) { x->depth++; x->level_end = x->n_states; }
        if (x->depth >= depth_cap) return XS_MAX_DEPTH;
        if (budget-- == 0) return XS_PAUSED;
        int64_t n_before = x->n_states, e_before = x->n_edges;
        if (xs_expand(x, i) < 0) return XS_ERROR;
        if (x->n_states > state_cap) {
            x->n_states = n_before;   /* the table still holds them: no further expansion */
            x->n_edges = e_before;
            return XS_MAX_STATES;
        }
        x->edge_start = grow(x->edge_start, &x->start_cap, i + 2, sizeof(uint32_t));
        x->edge_start[i + 1] = (uint32_t)x->n_edges;
        x->expanded++;
    }
    return XS_COMPLETE;
}

/* bytes held by the exploration's stores (capacities: what was allocated) */
static int64_t xs_bytes(const Explorer *x) {
    int64_t total = (int64_t)sizeof(Explorer);
    total += x->states_cap * 8 + x->hashes_cap * 8 + (x->tmask + 1) * 4 + x->edge_cap * 4
        + x->label_cap * 4 + x->start_cap * 4;
    total += x->seq_cap * 4;
    for (int p = 0; p < NET_PLACES; p++) {
        const Contents *c = &x->contents[p];
        total += c->cap * 8 + c->rcap * 8 + c->hcap * 8 + (c->tmask + 1) * 8;
    }
    for (int t = 0; t < NET_TRANSITIONS; t++) {
        const Memo *m = &x->memos[t];
        total += m->kcap * 4 + m->ocap * 8 + m->rcap * 4 + (m->tmask + 1) * 8;
    }
    return total;
}

/* the values in place p's contents numbered in order of appearance: ids[r] is row r's,
   values (width slots each) the distinct ones; returns how many there are */
static int64_t xs_value_ids(const Explorer *x, int p, int32_t *ids, int64_t *values) {
    const Contents *c = &x->contents[p];
    const int w = PLACE_WIDTH[p], rw = w + 1;
    const int64_t rows = c->rn / rw;
    int64_t size = 16;
    while (size < 2 * (rows + 1)) size <<= 1;
    int64_t *table = malloc((size_t)size * sizeof(int64_t));
    if (table == NULL) abort();
    for (int64_t i = 0; i < size; i++) table[i] = -1;
    int64_t n = 0;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t *v = c->rows + r * rw;
        uint64_t j = pl_hash(v, w) & (uint64_t)(size - 1);
        for (;;) {
            int64_t k = table[j];
            if (k < 0) {
                memcpy(values + n * w, v, (size_t)w * sizeof(int64_t));
                table[j] = k = n++;
            } else if (memcmp(values + k * w, v, (size_t)w * sizeof(int64_t)) != 0) {
                j = (j + 1) & (uint64_t)(size - 1);
                continue;
            }
            ids[r] = (int32_t)k;
            break;
        }
    }
    free(table);
    return n;
}
