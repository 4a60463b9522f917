/* The C engine's fixed part: places, binding lists, the live set, the choice buffer and
   the simulator loop (a port of tcpn.petrinets.engine.simulator.Simulator._loop). The generated
   part of a net (NET_* constants, tc_enumerate, tc_fire, tc_gate) is prepended. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "numpy/random/distributions.h"

#define CHOICE_BUFFER 1024

typedef struct { double *t; int64_t n, cap; } Times;

typedef struct {
    int width, timed;
    int64_t n, cap, vcap;  /* entries (live and dead), in the order values appeared */
    int64_t live;          /* entries holding tokens; a dead entry holds none */
    int64_t *vals;         /* n * width slots */
    int64_t *count;        /* untimed: tokens per value */
    Times *times;          /* timed: sorted timestamps per value */
    int64_t *index;        /* value hash -> entry (open addressing), once a place is big */
    int64_t imask, ifill;
} Place;

typedef struct { int64_t n, cap, vcap; double *ready; int64_t *vals; } Bindings;

/* CPython's set of small ints (3.11 setobject.c: probing, dummies, resizing), so that
   iterating the live transitions visits them in the order the Python engine does. */
#define SET_EMPTY (-1)
#define SET_DUMMY (-2)
#define SET_MINSIZE 8
#define LINEAR_PROBES 9
#define PERTURB_SHIFT 5
typedef struct { int64_t *table; int64_t mask, fill, used; } PySetEmu;

typedef struct {
    Place places[NET_PLACES];
    Bindings bindings[NET_TRANSITIONS];
    PySetEmu live;
    int gate_ok[NET_GATES + 1];
    double gate_ready[NET_GATES + 1];
    int64_t group_sum[NET_GATES + 1];
    int64_t total, firings;
    int64_t counts[NET_TRANSITIONS];
    double now;
    int fired;                       /* a firing whose after-effects are pending, or -1 */
    int pending_t;                   /* a chosen binding not fired yet, or -1 */
    int64_t pending_b[NET_VARS + 1];
    int last_t;
    int64_t last_b[NET_VARS + 1];
    double last_at;
    bitgen_t *rng;
    double buffer[CHOICE_BUFFER];
    int64_t buffer_n, buffer_next;
    int refilled;
    int err;                         /* error code, see ERR_* */
    int err_where;                   /* index of the element at fault */
    int err_t;
    int err_nb;                      /* variables bound when it happened */
    int64_t err_b[NET_VARS + 1];
    int64_t err_tok[NET_WIDTH + 1];  /* a token outside its colour set */
} NetState;

enum { ERR_NONE = 0, ERR_OVERFLOW = 1, ERR_ZERO_DIVISION = 2, ERR_COLOUR = 3 };

static void *grow(void *p, int64_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return p;
    int64_t c = *cap ? *cap : 4;
    while (c < need) c *= 2;
    void *q = realloc(p, (size_t)c * size);
    if (q == NULL) abort();
    *cap = c;
    return q;
}

/* -- places ------------------------------------------------------------------------- */
/* A place keeps its values in insertion order, as a Python dict does. Past SMALL_PLACE
   values a hash index finds a value without a scan, and a removed value leaves a dead
   entry (compacted away when they outnumber the live ones); a small place is scanned and
   closes the gap of a removed value. */
#define SMALL_PLACE 8
#define INDEX_EMPTY (-1)
#define INDEX_DUMMY (-2)

static inline int64_t pl_have(const Place *p, int64_t i) {
    return p->timed ? p->times[i].n : p->count[i];
}

static inline uint64_t pl_hash(const int64_t *v, int w) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int k = 0; k < w; k++) {
        h ^= (uint64_t)v[k];
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    return h;
}

static void pl_reindex(Place *p) {
    int64_t size = 16;
    while (size < 4 * (p->live + 1)) size <<= 1;
    free(p->index);
    p->index = malloc((size_t)size * sizeof(int64_t));
    if (p->index == NULL) abort();
    for (int64_t i = 0; i < size; i++) p->index[i] = INDEX_EMPTY;
    p->imask = size - 1;
    p->ifill = 0;
    for (int64_t i = 0; i < p->n; i++) {
        if (pl_have(p, i) == 0) continue;
        uint64_t j = pl_hash(p->vals + i * p->width, p->width) & (uint64_t)p->imask;
        while (p->index[j] != INDEX_EMPTY) j = (j + 1) & (uint64_t)p->imask;
        p->index[j] = i;
        p->ifill++;
    }
}

/* the index slot of entry i's value, or of the empty slot ending its probe sequence */
static int64_t pl_slot(const Place *p, const int64_t *v) {
    const int w = p->width;
    uint64_t j = pl_hash(v, w) & (uint64_t)p->imask;
    for (;;) {
        int64_t e = p->index[j];
        if (e == INDEX_EMPTY) return (int64_t)j;
        if (e >= 0 && memcmp(p->vals + e * w, v, (size_t)w * sizeof(int64_t)) == 0) return (int64_t)j;
        j = (j + 1) & (uint64_t)p->imask;
    }
}

static int64_t pl_find(const Place *p, const int64_t *v) {
    const int w = p->width;
    if (p->index != NULL) {
        int64_t e = p->index[pl_slot(p, v)];
        return e >= 0 ? e : -1;
    }
    if (w == 1) {
        for (int64_t i = 0; i < p->n; i++) if (p->vals[i] == v[0] && pl_have(p, i)) return i;
        return -1;
    }
    for (int64_t i = 0; i < p->n; i++)
        if (memcmp(p->vals + i * w, v, (size_t)w * sizeof(int64_t)) == 0 && pl_have(p, i))
            return i;
    return -1;
}

/* drops the dead entries, keeping the order of the others */
static void pl_compact(Place *p) {
    const int w = p->width;
    int64_t k = 0;
    for (int64_t i = 0; i < p->n; i++) {
        if (pl_have(p, i) == 0) continue;
        if (k != i) {
            memmove(p->vals + k * w, p->vals + i * w, (size_t)w * sizeof(int64_t));
            if (p->timed) p->times[k] = p->times[i]; else p->count[k] = p->count[i];
        }
        k++;
    }
    p->n = k;
    free(p->index);  /* a place back to a few values scans faster than it hashes */
    p->index = NULL;
    if (p->live > SMALL_PLACE) pl_reindex(p);
}

static int64_t pl_append(Place *p, const int64_t *v) {
    if (p->n - p->live > p->live && p->n >= SMALL_PLACE) pl_compact(p);
    p->vals = grow(p->vals, &p->vcap, (p->n + 1) * p->width, sizeof(int64_t));
    if (p->n + 1 > p->cap) {
        int64_t cap = p->cap;
        if (p->timed) p->times = grow(p->times, &cap, p->n + 1, sizeof(Times));
        else p->count = grow(p->count, &cap, p->n + 1, sizeof(int64_t));
        p->cap = cap;
    }
    memcpy(p->vals + p->n * p->width, v, (size_t)p->width * sizeof(int64_t));
    if (p->timed) { p->times[p->n].t = NULL; p->times[p->n].n = p->times[p->n].cap = 0; }
    else p->count[p->n] = 0;
    int64_t i = p->n++;
    p->live++;
    /* (a rebuild skips entry i: it holds no token yet, the caller adds them next) */
    if ((p->index == NULL && p->live > SMALL_PLACE)
            || (p->index != NULL && 2 * (p->ifill + 1) > p->imask + 1))
        pl_reindex(p);
    if (p->index != NULL) {
        int64_t j = pl_slot(p, v);
        if (p->index[j] == INDEX_EMPTY) p->ifill++;
        p->index[j] = i;
    }
    return i;
}

/* entry i lost its last token: a small place closes the gap (its order kept), an indexed
   one leaves a dead entry (its value no longer found) */
static void pl_remove_entry(Place *p, int64_t i) {
    const int w = p->width;
    if (p->timed) { free(p->times[i].t); p->times[i].t = NULL; p->times[i].n = p->times[i].cap = 0; }
    else p->count[i] = 0;
    p->live--;
    if (p->index == NULL) {
        memmove(p->vals + i * w, p->vals + (i + 1) * w, (size_t)((p->n - i - 1) * w) * sizeof(int64_t));
        if (p->timed) memmove(p->times + i, p->times + i + 1, (size_t)(p->n - i - 1) * sizeof(Times));
        else memmove(p->count + i, p->count + i + 1, (size_t)(p->n - i - 1) * sizeof(int64_t));
        p->n--;
        return;
    }
    uint64_t j = pl_hash(p->vals + i * w, w) & (uint64_t)p->imask;
    while (p->index[j] != i) j = (j + 1) & (uint64_t)p->imask;
    p->index[j] = INDEX_DUMMY;
    if (p->live == 0) pl_compact(p);
}

static void pl_clear(Place *p) {
    if (p->timed) for (int64_t i = 0; i < p->n; i++) free(p->times[i].t);
    p->n = p->live = 0;
    free(p->index);
    p->index = NULL;
}

/* untimed: k more tokens of value v (a new value goes last, as in a dict) */
static void pl_add(Place *p, const int64_t *v, int64_t k) {
    int64_t i = pl_find(p, v);
    if (i < 0) i = pl_append(p, v);
    p->count[i] += k;
}

/* untimed: k tokens of value v less (the enumeration found them) */
static void pl_take(Place *p, const int64_t *v, int64_t k) {
    int64_t i = pl_find(p, v);
    p->count[i] -= k;
    if (p->count[i] == 0) pl_remove_entry(p, i);
}

/* timed: one token of value v at time ts, after the equal stamps (bisect.insort) */
static void pl_add_time(Place *p, const int64_t *v, double ts) {
    int64_t i = pl_find(p, v);
    if (i < 0) i = pl_append(p, v);
    Times *t = &p->times[i];
    t->t = grow(t->t, &t->cap, t->n + 1, sizeof(double));
    int64_t lo = 0, hi = t->n;
    while (lo < hi) { int64_t mid = (lo + hi) / 2; if (ts < t->t[mid]) hi = mid; else lo = mid + 1; }
    memmove(t->t + lo + 1, t->t + lo, (size_t)(t->n - lo) * sizeof(double));
    t->t[lo] = ts;
    t->n++;
}

/* timed: the k earliest tokens of value v less */
static void pl_take_time(Place *p, const int64_t *v, int64_t k) {
    int64_t i = pl_find(p, v);
    Times *t = &p->times[i];
    memmove(t->t, t->t + k, (size_t)(t->n - k) * sizeof(double));
    t->n -= k;
    if (t->n == 0) pl_remove_entry(p, i);
}


/* -- binding lists ------------------------------------------------------------------- */
static inline void bl_push(Bindings *b, double ready, const int64_t *vals, int nv) {
    b->ready = grow(b->ready, &b->cap, b->n + 1, sizeof(double));
    b->vals = grow(b->vals, &b->vcap, (b->n + 1) * (nv ? nv : 1), sizeof(int64_t));
    b->ready[b->n] = ready;
    if (nv) memcpy(b->vals + b->n * nv, vals, (size_t)nv * sizeof(int64_t));
    b->n++;
}

/* -- the live set -------------------------------------------------------------------- */
static void set_init(PySetEmu *s) {
    s->table = malloc(SET_MINSIZE * sizeof(int64_t));
    if (s->table == NULL) abort();
    for (int i = 0; i < SET_MINSIZE; i++) s->table[i] = SET_EMPTY;
    s->mask = SET_MINSIZE - 1; s->fill = s->used = 0;
}

static void set_insert_clean(int64_t *table, uint64_t mask, int64_t key) {
    uint64_t perturb = (uint64_t)key, i = (uint64_t)key & mask;
    for (;;) {
        if (table[i] == SET_EMPTY) { table[i] = key; return; }
        if (i + LINEAR_PROBES <= mask)
            for (int j = 1; j <= LINEAR_PROBES; j++)
                if (table[i + j] == SET_EMPTY) { table[i + j] = key; return; }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
}

static void set_resize(PySetEmu *s, int64_t minused) {
    int64_t size = SET_MINSIZE;
    while (size <= minused) size <<= 1;
    if (size == SET_MINSIZE && s->mask + 1 == SET_MINSIZE && s->fill == s->used) return;
    int64_t *table = malloc((size_t)size * sizeof(int64_t));
    if (table == NULL) abort();
    for (int64_t i = 0; i < size; i++) table[i] = SET_EMPTY;
    for (int64_t i = 0; i <= s->mask; i++)
        if (s->table[i] >= 0) set_insert_clean(table, (uint64_t)size - 1, s->table[i]);
    free(s->table);
    s->table = table; s->mask = size - 1; s->fill = s->used;
}

/* the slot holding key, else the first empty slot of its probe sequence; *freeslot: the
   last dummy passed on the way (CPython reuses that one) */
static int64_t set_probe(const PySetEmu *s, int64_t key, int64_t *freeslot) {
    uint64_t mask = (uint64_t)s->mask, perturb = (uint64_t)key, i = (uint64_t)key & mask;
    *freeslot = -1;
    for (;;) {
        int probes = (i + LINEAR_PROBES <= mask) ? LINEAR_PROBES : 0;
        uint64_t j = i;
        for (;;) {
            int64_t e = s->table[j];
            if (e == SET_EMPTY || e == key) return (int64_t)j;
            if (e == SET_DUMMY) *freeslot = (int64_t)j;
            if (probes-- == 0) break;
            j++;
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
}

static void set_add(PySetEmu *s, int64_t key) {
    int64_t freeslot, j = set_probe(s, key, &freeslot);
    if (s->table[j] == key) return;
    if (freeslot >= 0) { s->table[freeslot] = key; s->used++; return; }
    s->table[j] = key;
    s->fill++; s->used++;
    if (s->fill * 5 < s->mask * 3) return;
    set_resize(s, s->used > 50000 ? s->used * 2 : s->used * 4);
}

static void set_discard(PySetEmu *s, int64_t key) {
    int64_t freeslot, j = set_probe(s, key, &freeslot);
    if (s->table[j] == key) { s->table[j] = SET_DUMMY; s->used--; }
}

/* set.difference_update(tuple): discards, then a rebuild when over 1/4 are dummies */
static void set_difference_update(PySetEmu *s, const int *keys, int n) {
    for (int i = 0; i < n; i++) set_discard(s, keys[i]);
    if (s->fill - s->used <= s->mask / 4) return;
    set_resize(s, s->used > 50000 ? s->used * 2 : s->used * 4);
}

/* -- random draws (numpy's bit generator, as RandomDraws does) ------------------------ */
static inline int64_t choose(NetState *s, int64_t n) {
    if (s->buffer_next >= s->buffer_n) {
        for (int i = 0; i < CHOICE_BUFFER; i++) s->buffer[i] = s->rng->next_double(s->rng->state);
        s->buffer_n = CHOICE_BUFFER; s->buffer_next = 0; s->refilled = 1;
    }
    return (int64_t)(s->buffer[s->buffer_next++] * (double)n);
}

static inline double draw_exponential(NetState *s, double mean) {
    return mean * random_standard_exponential(s->rng);
}

static inline double draw_uniform(NetState *s, double low, double high) {
    return random_uniform(s->rng, low, high - low);
}

/* -- integer arithmetic with Python's meaning (or an error, outside 64 bits) ---------- */
static inline int64_t py_floordiv(NetState *s, int64_t a, int64_t b) {
    if (b == 0) { s->err = ERR_ZERO_DIVISION; return 0; }
    if (a == INT64_MIN && b == -1) { s->err = ERR_OVERFLOW; return 0; }
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
static inline int64_t py_mod(NetState *s, int64_t a, int64_t b) {
    if (b == 0) { s->err = ERR_ZERO_DIVISION; return 0; }
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static inline int64_t py_add(NetState *s, int64_t a, int64_t b) {
    int64_t r; if (__builtin_add_overflow(a, b, &r)) s->err = ERR_OVERFLOW; return r;
}
static inline int64_t py_sub(NetState *s, int64_t a, int64_t b) {
    int64_t r; if (__builtin_sub_overflow(a, b, &r)) s->err = ERR_OVERFLOW; return r;
}
static inline int64_t py_mul(NetState *s, int64_t a, int64_t b) {
    int64_t r; if (__builtin_mul_overflow(a, b, &r)) s->err = ERR_OVERFLOW; return r;
}
static inline int64_t py_neg(NetState *s, int64_t a) {
    if (a == INT64_MIN) s->err = ERR_OVERFLOW; return -a;
}

/* -- the generated part ---------------------------------------------------------------- */
static void tc_enumerate(NetState *s, int t);   /* every binding of t, into bindings[t] */
static void tc_fire(NetState *s, int t, const int64_t *b, double now);
static int tc_gate(NetState *s, int g, double *ready);   /* 1: satisfied from *ready */

/* -- the loop ------------------------------------------------------------------------ */
enum { R_ERROR = -1, R_DEAD = 0, R_LIMIT = 1, R_HORIZON = 2, R_FIRED = 3, R_CHOSEN = 4 };
enum { PAUSE_AFTER = 1, PAUSE_BEFORE = 2, PAUSE_1024 = 4 };

static NetState *net_new(void) {
    NetState *s = calloc(1, sizeof(NetState));
    if (s == NULL) abort();
    for (int p = 0; p < NET_PLACES; p++) {
        s->places[p].width = PLACE_WIDTH[p];
        s->places[p].timed = PLACE_TIMED[p];
    }
    set_init(&s->live);
    s->fired = s->pending_t = s->last_t = -1;
    return s;
}

static void net_free(NetState *s) {
    for (int p = 0; p < NET_PLACES; p++) {
        pl_clear(&s->places[p]);
        free(s->places[p].vals); free(s->places[p].count); free(s->places[p].times);
        free(s->places[p].index);
    }
    for (int t = 0; t < NET_TRANSITIONS; t++) { free(s->bindings[t].ready); free(s->bindings[t].vals); }
    free(s->live.table);
    free(s);
}

/* the order in which CPython iterates a set built by adding `items` one by one */
static int set_order(const int *items, int n, int *out) {
    PySetEmu order;
    set_init(&order);
    for (int i = 0; i < n; i++) set_add(&order, items[i]);
    int k = 0;
    for (int64_t i = 0; i <= order.mask; i++) if (order.table[i] >= 0) out[k++] = (int)order.table[i];
    free(order.table);
    return k;
}

static inline int required_marked(const NetState *s, int u) {
    for (int i = REQ_START[u]; i < REQ_START[u + 1]; i++)
        if (s->places[REQ_LIST[i]].live == 0) return 0;
    return 1;
}

/* re-test the gates `gates`, then re-enumerate the transitions `todo` (in these orders) */
static void net_update(NetState *s, const int *gates, int ngates, const int *todo, int ntodo) {
    for (int i = 0; i < ngates; i++) {
        int g = gates[i];
        double ready;
        int ok = tc_gate(s, g, &ready);
        if (s->err) return;
        int old = s->gate_ok[g];
        s->gate_ok[g] = ok;
        if (!ok) {
            if (old) {
                s->total -= s->group_sum[g];
                set_difference_update(&s->live, MEMBERS_LIST + MEMBERS_START[g],
                                      MEMBERS_START[g + 1] - MEMBERS_START[g]);
            }
            continue;
        }
        s->gate_ready[g] = ready;
        if (!old) {
            s->total += s->group_sum[g];
            for (int m = MEMBERS_START[g]; m < MEMBERS_START[g + 1]; m++)
                if (s->bindings[MEMBERS_LIST[m]].n) set_add(&s->live, MEMBERS_LIST[m]);
        }
    }
    for (int i = 0; i < ntodo; i++) {
        int u = todo[i];
        int g = GATE_OF[u];
        int64_t before = s->bindings[u].n;
        if (required_marked(s, u)) {
            tc_enumerate(s, u);
            if (s->err) { s->err_t = u; return; }
        } else {
            s->bindings[u].n = 0;
        }
        int64_t change = s->bindings[u].n - before;
        if (g >= 0) s->group_sum[g] += change;
        if (g < 0 || s->gate_ok[g]) s->total += change;
        if (g >= 0 && !s->gate_ok[g]) continue;
        if (s->bindings[u].n) set_add(&s->live, u); else set_discard(&s->live, u);
    }
}

/* what the Python engine's first _refresh does: every gate and transition, in set order */
static void net_refresh_all(NetState *s) {
    int items[NET_TRANSITIONS + NET_GATES + 1], gates[NET_GATES + 1], todo[NET_TRANSITIONS];
    for (int g = 0; g < NET_GATES; g++) items[g] = g;
    int ng = set_order(items, NET_GATES, gates);
    for (int t = 0; t < NET_TRANSITIONS; t++) items[t] = t;
    int nt = set_order(items, NET_TRANSITIONS, todo);
    net_update(s, gates, ng, todo, nt);
}

/* the after-effects of firing `fired`; via_set: in the order _refresh visits its sets
   (the Python engine's next run after a stop_when), else in the loop's tuple order */
static void net_after(NetState *s, int fired, int via_set) {
    const int *gates = GATE_AFF_LIST + GATE_AFF_START[fired];
    int ng = GATE_AFF_START[fired + 1] - GATE_AFF_START[fired];
    const int *todo = BODY_AFF_LIST + BODY_AFF_START[fired];
    int nt = BODY_AFF_START[fired + 1] - BODY_AFF_START[fired];
    if (!via_set) { net_update(s, gates, ng, todo, nt); return; }
    int gs[NET_GATES + 1], ts[NET_TRANSITIONS];
    ng = set_order(gates, ng, gs);
    nt = set_order(todo, nt, ts);
    net_update(s, gs, ng, ts, nt);
}

static int net_fire_pending(NetState *s) {
    int t = s->pending_t;
    s->pending_t = -1;
    tc_fire(s, t, s->pending_b, s->now);
    if (s->err) { s->err_t = t; return R_ERROR; }
    s->last_t = t; s->last_at = s->now;
    memcpy(s->last_b, s->pending_b, sizeof(s->pending_b));
    s->fired = t;
    s->firings++;
    s->counts[t]++;
    return R_FIRED;
}

/* runs until the horizon, `limit` firings, a dead marking or a pause that `flags` asks
   for; `via_set`: the pending after-effects come from a stop (see net_after) */
static int net_run(NetState *s, double horizon, double limit, int flags, int via_set) {
    if (s->pending_t >= 0) {
        if (net_fire_pending(s) == R_ERROR) return R_ERROR;
        if (flags & PAUSE_AFTER) return R_FIRED;
    }
    for (;;) {
        if (s->fired >= 0) {
            int fired = s->fired;
            s->fired = -1;
            net_after(s, fired, via_set);
            via_set = 0;
            if (s->err) return R_ERROR;
        }
        if ((double)s->firings >= limit) return R_LIMIT;
        int t = -1;
        int64_t k = 0;
        if (NET_SIMPLE) {
            if (!s->total) return R_DEAD;
            k = s->total > 1 ? choose(s, s->total) : 0;
            for (int64_t i = 0; i <= s->live.mask; i++) {
                int64_t u = s->live.table[i];
                if (u < 0) continue;
                if (k < s->bindings[u].n) { t = (int)u; break; }
                k -= s->bindings[u].n;
            }
        } else {
            double best_time = INFINITY, best_priority = INFINITY, now = s->now;
            int64_t nchosen = 0, first_t = -1, first_k = 0;
            /* two passes: count the most urgent bindings, then walk to the drawn one */
            for (int64_t i = 0; i <= s->live.mask; i++) {
                int64_t u = s->live.table[i];
                if (u < 0) continue;
                double priority = PRIORITY[u], floor = now;
                int g = GATE_OF[u];
                if (NET_GATES && g >= 0 && s->gate_ready[g] > now) floor = s->gate_ready[g];
                const Bindings *b = &s->bindings[u];
                for (int64_t j = 0; j < b->n; j++) {
                    double at = b->ready[j] > floor ? b->ready[j] : floor;
                    if (at < best_time || (at == best_time && priority < best_priority)) {
                        best_time = at; best_priority = priority; nchosen = 1;
                        first_t = u; first_k = j;
                    } else if (at == best_time && priority == best_priority) {
                        nchosen++;
                    }
                }
            }
            if (!nchosen) return R_DEAD;
            if (best_time > horizon) { s->now = horizon; return R_HORIZON; }
            s->now = best_time;
            if (nchosen == 1) {
                t = (int)first_t; k = first_k;
            } else {
                int64_t pick = choose(s, nchosen);
                for (int64_t i = 0; i <= s->live.mask && t < 0; i++) {
                    int64_t u = s->live.table[i];
                    if (u < 0 || PRIORITY[u] != best_priority) continue;
                    double floor = now;
                    int g = GATE_OF[u];
                    if (NET_GATES && g >= 0 && s->gate_ready[g] > now) floor = s->gate_ready[g];
                    const Bindings *b = &s->bindings[u];
                    for (int64_t j = 0; j < b->n; j++) {
                        double at = b->ready[j] > floor ? b->ready[j] : floor;
                        if (at == best_time && pick-- == 0) { t = (int)u; k = j; break; }
                    }
                }
            }
        }
        int nv = NVARS[t];
        s->pending_t = t;
        if (nv) memcpy(s->pending_b, s->bindings[t].vals + k * nv, (size_t)nv * sizeof(int64_t));
        if (flags & PAUSE_BEFORE) return R_CHOSEN;
        if (net_fire_pending(s) == R_ERROR) return R_ERROR;
        if ((flags & PAUSE_AFTER) || ((flags & PAUSE_1024) && (s->firings & 1023) == 0))
            return R_FIRED;
    }
}

/* -- access for the Python side ---------------------------------------------------------- */
static void net_load(NetState *s, int p, const int64_t *v, int64_t count) { pl_add(&s->places[p], v, count); }
static void net_load_time(NetState *s, int p, const int64_t *v, double t) { pl_add_time(&s->places[p], v, t); }
static int64_t net_entries(NetState *s, int p) { return s->places[p].n; }
static const int64_t *net_value(NetState *s, int p, int64_t i) { return s->places[p].vals + i * s->places[p].width; }
static int64_t net_have(NetState *s, int p, int64_t i) { return pl_have(&s->places[p], i); }
static double net_time(NetState *s, int p, int64_t i, int64_t j) { return s->places[p].times[i].t[j]; }
static int net_width(int p) { return PLACE_WIDTH[p]; }
static int net_nvars(int t) { return NVARS[t]; }

/* the live set alone, for the test that holds it to CPython's set: ops k >= 0 add k, k < 0
   discard -k - 1; a run of SET_DIFF_MARK then n keys is difference_update; the order out */
#define SET_DIFF_MARK INT64_MIN
static int64_t net_set_order(const int64_t *ops, int64_t n, int64_t *out) {
    PySetEmu s;
    set_init(&s);
    int keys[256];
    for (int64_t i = 0; i < n; i++) {
        if (ops[i] == SET_DIFF_MARK) {
            int64_t m = ops[++i];
            for (int64_t j = 0; j < m && j < 256; j++) keys[j] = (int)ops[i + 1 + j];
            set_difference_update(&s, keys, (int)(m < 256 ? m : 256));
            i += m;
        } else if (ops[i] >= 0) {
            set_add(&s, ops[i]);
        } else {
            set_discard(&s, -ops[i] - 1);
        }
    }
    int64_t k = 0;
    for (int64_t i = 0; i <= s.mask; i++) if (s.table[i] >= 0) out[k++] = s.table[i];
    free(s.table);
    return k;
}

/* a firing made outside the C loop (Simulator.fire): the marking after it is loaded, then
   its after-effects run in the order the Python engine's next _refresh gives them */
static void net_settle(NetState *s) {
    if (s->fired >= 0) { int fired = s->fired; s->fired = -1; net_after(s, fired, 1); }
}
static void net_outside(NetState *s, int t) { net_after(s, t, 1); }
static void net_clear_place(NetState *s, int p) { pl_clear(&s->places[p]); }
static void net_set_count(NetState *s, int t, int64_t n) { s->counts[t] = n; }
