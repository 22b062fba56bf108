/* The flow-level simulator: an event-driven fluid model with max-min fair rates, solved
 * incrementally so that millions of flows in hundreds of barrier groups take seconds.
 *
 * Speed comes from four things. Flows of one group with the same path, bytes, cap and
 * latency are one weighted class: they start together and, max-min fairness being
 * symmetric, move at the same rate and finish together. Completions and activations within
 * a relative BATCH_EPS of each other are one event. At an event only the classes that can
 * change rate are re-solved: a local set S, grown until the bottleneck conditions of
 * max-min fairness (below) hold again for the whole system, which is usually far smaller
 * than the connected component (leaf links tie every flow of a group into one component).
 * Per-link arrays of the classes crossing them, and heaps for events and for the filling. */
#include "flowsim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Completions and activations this close (relative to the clock) are one event. Finish
 * times are recorded exactly; only the rates of the others are moved by at most this. */
#define BATCH_EPS 1e-11
/* Tolerance of the max-min checks; a looser one saves re-solves but costs accuracy. */
#define RATE_EPS 1e-10

struct flow {
    double bytes, lat, cap;
    int64_t path; /* offset into fs->paths */
    int32_t path_len, group;
};

/* A weighted class of identical flows; rates and bytes are per flow. */
struct cls {
    double rem;   /* bytes left at t_upd */
    double rate;  /* since t_upd */
    double t_upd; /* when rem was last brought up to date */
    double key;   /* predicted finish: the completion heap's key */
    double lat, cap, finish;
    int64_t path; /* offset into fs->cpath and fs->hop */
    int32_t path_len, group;
    int32_t w;    /* flows in the class */
    int32_t b;    /* bottleneck link; -1 when the cap binds or not yet rated */
    int32_t hpos; /* position in the completion heap; -1 when not there */
    int32_t spos; /* position in the solve set when stamp is current */
    uint32_t stamp;
};

/* An active class crossing a link, and which hop of its path the link is. */
struct entry {
    int32_t c, k;
};

struct link {
    double cap, load, t_upd;
    /* A lower bound on the rate of the classes bottlenecked here: checks against it are
     * cheap, and only a failed check scans the link's classes. */
    double sat_lvl;
    struct entry *list; /* the active classes crossing the link */
    int32_t n, size;
    int32_t nb; /* active classes whose bottleneck this is */
    uint32_t stamp, fstamp;
    int32_t loc; /* index in the solve's link table when stamp is current */
};

struct group {
    double start, finish, ready; /* ready: latest prerequisite finish seen */
    int32_t cbeg, cend, cursor;  /* classes, sorted by latency; next to activate */
    int32_t npre, unfinished;
    int32_t dbeg, dend; /* dependents in fs->deps */
    bool started, done;
};

struct edge {
    int32_t group, pre;
};

/* A link within one solve: residual capacity and unfrozen weight of the solve set. */
struct slink {
    double R, key, lam_sat, out_load, sum_old, sum_new, max_new;
    int64_t W;
    int32_t l, nS, nbS_old, off, fill;
    bool done;
};

struct hent {
    double key;
    int32_t id; /* >= 0: a slink; < 0: ~member whose cap binds */
};

struct aent {
    double t;
    int32_t g;
};

struct rf_flowsim {
    size_t n_links;
    struct link *links;
    double *lbytes, *lbusy;

    struct flow *flows;
    size_t n_flows, cap_flows;
    int32_t *paths;
    size_t n_paths, cap_paths;
    struct edge *edges;
    size_t n_edges, cap_edges;
    int32_t n_groups;

    /* Built by a run. */
    bool ran;
    size_t run_flows;
    int32_t *f_class;
    struct cls *cls;
    int32_t n_cls;
    int32_t *cpath, *hop;
    struct group *groups;
    int32_t run_groups;
    int32_t *deps;
    int32_t *gstack;
    double makespan;
    struct rf_flowsim_stats stats;

    /* Event heaps. */
    int32_t *cheap;
    int32_t n_cheap;
    struct aent *aheap;
    int32_t n_aheap;

    /* Solve scratch, kept between events. */
    uint32_t sstamp, lstamp, fstamp;
    int32_t *S;
    size_t nS, capS;
    double *s_r;
    int32_t *s_b;
    bool *s_frozen;
    size_t cap_sm;
    struct slink *sl;
    size_t n_sl, cap_sl;
    int32_t *csr;
    size_t cap_csr;
    struct hent *heap;
    size_t n_heap, cap_heap;
    int32_t *freed;
    size_t n_freed, cap_freed;
};

/* Grows the array *pp (of elem-sized elements) to hold `need`; false when out of memory, the
 * array then unchanged. The pointer is passed by address through memcpy so that one helper
 * serves arrays of every type. */
static bool grow_any(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *p;
    memcpy(&p, pp, sizeof(p));
    p = realloc(p, nc * elem);
    if (!p)
        return false;
    memcpy(pp, &p, sizeof(p));
    *cap = nc;
    return true;
}

#define GROW(arr, cap, need) grow_any(&(arr), &(cap), (need), sizeof(*(arr)))

int rf_flowsim_new(struct rf_flowsim **out, size_t n_links, const double *capacity,
                   struct rf_error *err)
{
    struct rf_flowsim *fs = NULL;
    int rc = 0;

    *out = NULL;
    if (n_links > INT32_MAX) {
        rc = rf_error_set(err, RF_EINVAL, "flowsim: %zu links, at most %d", n_links, INT32_MAX);
        goto out;
    }
    for (size_t l = 0; l < n_links; l++)
        if (!(capacity[l] > 0) || !isfinite(capacity[l])) {
            rc = rf_error_set(err, RF_EINVAL, "flowsim: link %zu capacity %g is not positive", l,
                              capacity[l]);
            goto out;
        }
    fs = calloc(1, sizeof(*fs));
    if (!fs)
        goto nomem;
    fs->n_links = n_links;
    fs->links = calloc(n_links ? n_links : 1, sizeof(*fs->links));
    fs->lbytes = calloc(n_links ? n_links : 1, sizeof(double));
    fs->lbusy = calloc(n_links ? n_links : 1, sizeof(double));
    if (!fs->links || !fs->lbytes || !fs->lbusy)
        goto nomem;
    for (size_t l = 0; l < n_links; l++)
        fs->links[l].cap = capacity[l];
    *out = fs;
    fs = NULL;
    goto out;
nomem:
    rc = rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
out:
    rf_flowsim_free(fs);
    return rc;
}

static void free_run(struct rf_flowsim *fs)
{
    free(fs->f_class);
    free(fs->cls);
    free(fs->cpath);
    free(fs->hop);
    free(fs->groups);
    free(fs->deps);
    free(fs->gstack);
    free(fs->cheap);
    free(fs->aheap);
    fs->f_class = NULL;
    fs->cls = NULL;
    fs->cpath = fs->hop = NULL;
    fs->groups = NULL;
    fs->deps = NULL;
    fs->gstack = NULL;
    fs->cheap = NULL;
    fs->aheap = NULL;
    fs->ran = false;
}

void rf_flowsim_free(struct rf_flowsim *fs)
{
    if (!fs)
        return;
    free_run(fs);
    if (fs->links)
        for (size_t l = 0; l < fs->n_links; l++)
            free(fs->links[l].list);
    free(fs->links);
    free(fs->lbytes);
    free(fs->lbusy);
    free(fs->flows);
    free(fs->paths);
    free(fs->edges);
    free(fs->S);
    free(fs->s_r);
    free(fs->s_b);
    free(fs->s_frozen);
    free(fs->sl);
    free(fs->csr);
    free(fs->heap);
    free(fs->freed);
    free(fs);
}

int rf_flowsim_add(struct rf_flowsim *fs, const struct rf_flow_spec *f, struct rf_error *err)
{
    if (f->group < 0)
        return rf_error_set(err, RF_EINVAL, "flowsim: flow group %d is negative", (int)f->group);
    if (!(f->bytes >= 0) || !isfinite(f->bytes) || !(f->latency_s >= 0) ||
        !isfinite(f->latency_s) || !(f->rate_cap >= 0) || !isfinite(f->rate_cap))
        return rf_error_set(err, RF_EINVAL,
                            "flowsim: flow bytes %g, latency %g, rate cap %g: each must be "
                            "finite and >= 0",
                            f->bytes, f->latency_s, f->rate_cap);
    if (f->path_len < 0 || (f->path_len > 0 && !f->path))
        return rf_error_set(err, RF_EINVAL, "flowsim: bad path (length %d)", f->path_len);
    if (fs->n_flows >= INT32_MAX)
        return rf_error_set(err, RF_EINVAL, "flowsim: too many flows");
    for (int k = 0; k < f->path_len; k++)
        if (f->path[k] < 0 || (size_t)f->path[k] >= fs->n_links)
            return rf_error_set(err, RF_EINVAL, "flowsim: path link %d out of range (%zu links)",
                                (int)f->path[k], fs->n_links);
    if (!GROW(fs->flows, fs->cap_flows, fs->n_flows + 1) ||
        !GROW(fs->paths, fs->cap_paths, fs->n_paths + (size_t)f->path_len))
        return rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");

    /* Sorted paths make a repeated link adjacent and identical flows byte-equal. */
    int32_t *p = fs->paths + fs->n_paths;
    for (int k = 0; k < f->path_len; k++) {
        int32_t v = f->path[k];
        int j = k;
        for (; j > 0 && p[j - 1] > v; j--)
            p[j] = p[j - 1];
        p[j] = v;
    }
    for (int k = 1; k < f->path_len; k++)
        if (p[k] == p[k - 1])
            return rf_error_set(err, RF_EINVAL, "flowsim: path crosses link %d twice", (int)p[k]);

    /* Adding 0.0 turns -0.0 into +0.0, so equal keys have equal bits for the class hash. */
    fs->flows[fs->n_flows] = (struct flow){.bytes = f->bytes + 0.0,
                                           .lat = f->latency_s + 0.0,
                                           .cap = f->rate_cap + 0.0,
                                           .path = (int64_t)fs->n_paths,
                                           .path_len = f->path_len,
                                           .group = f->group};
    fs->n_paths += (size_t)f->path_len;
    if (f->group >= fs->n_groups)
        fs->n_groups = f->group + 1;
    fs->ran = false;
    return (int)fs->n_flows++;
}

int rf_flowsim_after(struct rf_flowsim *fs, int32_t group, int32_t prerequisite,
                     struct rf_error *err)
{
    if (group < 0 || prerequisite < 0 || group == INT32_MAX || prerequisite == INT32_MAX)
        return rf_error_set(err, RF_EINVAL, "flowsim: bad group %d after %d", (int)group,
                            (int)prerequisite);
    if (!GROW(fs->edges, fs->cap_edges, fs->n_edges + 1))
        return rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
    fs->edges[fs->n_edges++] = (struct edge){group, prerequisite};
    if (group >= fs->n_groups)
        fs->n_groups = group + 1;
    if (prerequisite >= fs->n_groups)
        fs->n_groups = prerequisite + 1;
    fs->ran = false;
    return 0;
}

/* ---- Building classes and groups ---- */

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static uint64_t flow_hash(const struct rf_flowsim *fs, const struct flow *f)
{
    uint64_t h = mix(mix(mix(0, dbits(f->bytes)), dbits(f->lat)), dbits(f->cap));
    h = mix(h, (uint64_t)f->path_len);
    for (int32_t k = 0; k < f->path_len; k++)
        h = mix(h, (uint64_t)(uint32_t)fs->paths[f->path + k]);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

static bool flow_same(const struct rf_flowsim *fs, const struct flow *a, const struct flow *b)
{
    return a->bytes == b->bytes && a->lat == b->lat && a->cap == b->cap &&
           a->path_len == b->path_len &&
           (a->path_len == 0 || memcmp(fs->paths + a->path, fs->paths + b->path,
                                       sizeof(int32_t) * (size_t)a->path_len) == 0);
}

struct lat_key {
    double lat;
    int32_t prov;
};

static int cmp_lat(const void *a, const void *b)
{
    const struct lat_key *x = a, *y = b;
    if (x->lat != y->lat)
        return x->lat < y->lat ? -1 : 1;
    return (x->prov > y->prov) - (x->prov < y->prov);
}

/* Merges the flows of each group into classes by hashing; a group's classes are
 * contiguous and sorted by latency, so its activations are a sweep. */
static int build_classes(struct rf_flowsim *fs, struct rf_error *err)
{
    int32_t G = fs->n_groups;
    size_t *gcount = calloc((size_t)G + 1, sizeof(size_t));
    int32_t *order = malloc((fs->n_flows ? fs->n_flows : 1) * sizeof(int32_t));
    int32_t *table = NULL, *used = NULL, *rep = NULL, *wt = NULL, *perm = NULL;
    struct lat_key *lk = NULL;
    size_t maxg = 0, tsize = 1, total_path = 0;
    int rc = 0;

    fs->f_class = malloc((fs->n_flows ? fs->n_flows : 1) * sizeof(int32_t));
    fs->groups = calloc((size_t)G + 1, sizeof(struct group));
    if (!gcount || !order || !fs->f_class || !fs->groups)
        goto nomem;
    for (size_t f = 0; f < fs->n_flows; f++)
        gcount[fs->flows[f].group + 1]++;
    for (int32_t g = 0; g < G; g++) {
        if (gcount[g + 1] > maxg)
            maxg = gcount[g + 1];
        gcount[g + 1] += gcount[g];
    }
    for (size_t f = 0; f < fs->n_flows; f++)
        order[gcount[fs->flows[f].group]++] = (int32_t)f;
    /* gcount[g] is now the end of group g; shift back to starts. */
    for (int32_t g = G; g > 0; g--)
        gcount[g] = gcount[g - 1];
    gcount[0] = 0;

    while (tsize < 2 * maxg)
        tsize *= 2;
    table = malloc(tsize * sizeof(int32_t));
    used = malloc((maxg ? maxg : 1) * sizeof(int32_t));
    rep = malloc((maxg ? maxg : 1) * sizeof(int32_t));
    wt = malloc((maxg ? maxg : 1) * sizeof(int32_t));
    perm = malloc((maxg ? maxg : 1) * sizeof(int32_t));
    lk = malloc((maxg ? maxg : 1) * sizeof(*lk));
    /* Classes never outnumber flows; the arrays shrink to size below. */
    fs->cls = malloc((fs->n_flows ? fs->n_flows : 1) * sizeof(struct cls));
    if (!table || !used || !rep || !wt || !perm || !lk || !fs->cls)
        goto nomem;
    for (size_t i = 0; i < tsize; i++)
        table[i] = -1;

    int32_t nc = 0;
    for (int32_t g = 0; g < G; g++) {
        size_t beg = gcount[g], end = gcount[g + 1];
        int32_t np = 0;
        for (size_t i = beg; i < end; i++) {
            const struct flow *f = &fs->flows[order[i]];
            size_t s = (size_t)flow_hash(fs, f) & (tsize - 1);
            while (table[s] >= 0 && !flow_same(fs, &fs->flows[rep[table[s]]], f))
                s = (s + 1) & (tsize - 1);
            if (table[s] < 0) {
                table[s] = np;
                used[np] = (int32_t)s;
                rep[np] = order[i];
                wt[np] = 0;
                np++;
            }
            wt[table[s]]++;
            fs->f_class[order[i]] = table[s]; /* provisional, within the group */
        }
        bool sorted = true;
        for (int32_t j = 0; j < np; j++) {
            table[used[j]] = -1;
            lk[j] = (struct lat_key){fs->flows[rep[j]].lat, j};
            if (j > 0 && lk[j].lat < lk[j - 1].lat)
                sorted = false;
        }
        if (!sorted)
            qsort(lk, (size_t)np, sizeof(*lk), cmp_lat);
        struct group *gr = &fs->groups[g];
        gr->cbeg = nc;
        for (int32_t j = 0; j < np; j++) {
            const struct flow *f = &fs->flows[rep[lk[j].prov]];
            perm[lk[j].prov] = nc;
            fs->cls[nc] = (struct cls){.rem = f->bytes,
                                       .lat = f->lat,
                                       .cap = f->cap,
                                       .finish = NAN,
                                       .path = f->path, /* a flow offset until remapped */
                                       .path_len = f->path_len,
                                       .group = g,
                                       .w = wt[lk[j].prov],
                                       .b = -1,
                                       .hpos = -1};
            total_path += (size_t)f->path_len;
            nc++;
        }
        gr->cend = nc;
        for (size_t i = beg; i < end; i++)
            fs->f_class[order[i]] = perm[fs->f_class[order[i]]];
    }
    fs->n_cls = nc;
    struct cls *shrunk = realloc(fs->cls, (nc ? (size_t)nc : 1) * sizeof(struct cls));
    if (shrunk)
        fs->cls = shrunk;

    /* Classes get their own path copies, with a parallel array of list positions. */
    fs->cpath = malloc((total_path ? total_path : 1) * sizeof(int32_t));
    fs->hop = malloc((total_path ? total_path : 1) * sizeof(int32_t));
    if (!fs->cpath || !fs->hop)
        goto nomem;
    size_t off = 0;
    for (int32_t c = 0; c < nc; c++) {
        struct cls *k = &fs->cls[c];
        if (k->path_len > 0)
            memcpy(fs->cpath + off, fs->paths + k->path, sizeof(int32_t) * (size_t)k->path_len);
        k->path = (int64_t)off;
        off += (size_t)k->path_len;
    }
    goto out;
nomem:
    rc = rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
out:
    free(gcount);
    free(order);
    free(table);
    free(used);
    free(rep);
    free(wt);
    free(perm);
    free(lk);
    return rc;
}

/* Dependents lists, prerequisite counts, and the refusal of cycles (Kahn's algorithm). */
static int build_groups(struct rf_flowsim *fs, struct rf_error *err)
{
    int32_t G = fs->n_groups;
    int32_t *queue = malloc(((size_t)G + 1) * sizeof(int32_t));
    int32_t *indeg = calloc((size_t)G + 1, sizeof(int32_t));
    int rc = 0;

    fs->deps = malloc((fs->n_edges ? fs->n_edges : 1) * sizeof(int32_t));
    if (!queue || !indeg || !fs->deps) {
        rc = rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
        goto out;
    }
    for (size_t e = 0; e < fs->n_edges; e++) {
        fs->groups[fs->edges[e].pre].dend++;
        fs->groups[fs->edges[e].group].npre++;
    }
    int32_t acc = 0;
    for (int32_t g = 0; g < G; g++) {
        fs->groups[g].dbeg = acc;
        acc += fs->groups[g].dend;
        fs->groups[g].dend = fs->groups[g].dbeg;
    }
    for (size_t e = 0; e < fs->n_edges; e++)
        fs->deps[fs->groups[fs->edges[e].pre].dend++] = fs->edges[e].group;

    int32_t head = 0, tail = 0;
    for (int32_t g = 0; g < G; g++) {
        indeg[g] = fs->groups[g].npre;
        if (indeg[g] == 0)
            queue[tail++] = g;
    }
    while (head < tail) {
        struct group *gr = &fs->groups[queue[head++]];
        for (int32_t i = gr->dbeg; i < gr->dend; i++)
            if (--indeg[fs->deps[i]] == 0)
                queue[tail++] = fs->deps[i];
    }
    if (tail < G) {
        int32_t g = 0;
        while (indeg[g] == 0)
            g++;
        rc =
            rf_error_set(err, RF_EINVAL, "flowsim: groups form a cycle (through group %d)", (int)g);
    }
out:
    free(queue);
    free(indeg);
    return rc;
}

/* ---- Heaps ---- */

static void cheap_set(struct rf_flowsim *fs, int32_t i, int32_t c)
{
    fs->cheap[i] = c;
    fs->cls[c].hpos = i;
}

static void cheap_up(struct rf_flowsim *fs, int32_t i)
{
    int32_t c = fs->cheap[i];
    double k = fs->cls[c].key;
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (fs->cls[fs->cheap[p]].key <= k)
            break;
        cheap_set(fs, i, fs->cheap[p]);
        i = p;
    }
    cheap_set(fs, i, c);
}

static void cheap_down(struct rf_flowsim *fs, int32_t i)
{
    int32_t c = fs->cheap[i], n = fs->n_cheap;
    double k = fs->cls[c].key;
    for (;;) {
        int32_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && fs->cls[fs->cheap[l + 1]].key < fs->cls[fs->cheap[l]].key)
            l++;
        if (fs->cls[fs->cheap[l]].key >= k)
            break;
        cheap_set(fs, i, fs->cheap[l]);
        i = l;
    }
    cheap_set(fs, i, c);
}

/* Inserts class c, or moves it after its key changed. */
static void cheap_update(struct rf_flowsim *fs, int32_t c)
{
    int32_t i = fs->cls[c].hpos;
    if (i < 0) {
        i = fs->n_cheap++;
        cheap_set(fs, i, c);
    }
    cheap_up(fs, i);
    cheap_down(fs, fs->cls[c].hpos);
}

static int32_t cheap_pop(struct rf_flowsim *fs)
{
    int32_t c = fs->cheap[0];
    fs->cls[c].hpos = -1;
    if (--fs->n_cheap > 0) {
        cheap_set(fs, 0, fs->cheap[fs->n_cheap]);
        cheap_down(fs, 0);
    }
    return c;
}

static void aheap_push(struct rf_flowsim *fs, double t, int32_t g)
{
    int32_t i = fs->n_aheap++;
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (fs->aheap[p].t <= t)
            break;
        fs->aheap[i] = fs->aheap[p];
        i = p;
    }
    fs->aheap[i] = (struct aent){t, g};
}

static void aheap_pop(struct rf_flowsim *fs)
{
    struct aent last = fs->aheap[--fs->n_aheap];
    int32_t i = 0, n = fs->n_aheap;
    if (n == 0)
        return;
    for (;;) {
        int32_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && fs->aheap[l + 1].t < fs->aheap[l].t)
            l++;
        if (fs->aheap[l].t >= last.t)
            break;
        fs->aheap[i] = fs->aheap[l];
        i = l;
    }
    fs->aheap[i] = last;
}

static void sheap_down(struct hent *h, size_t n, size_t i)
{
    struct hent x = h[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && h[l + 1].key < h[l].key)
            l++;
        if (h[l].key >= x.key)
            break;
        h[i] = h[l];
        i = l;
    }
    h[i] = x;
}

static int sheap_push(struct rf_flowsim *fs, double key, int32_t id)
{
    if (!GROW(fs->heap, fs->cap_heap, fs->n_heap + 1))
        return RF_ENOMEM;
    size_t i = fs->n_heap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (fs->heap[p].key <= key)
            break;
        fs->heap[i] = fs->heap[p];
        i = p;
    }
    fs->heap[i] = (struct hent){key, id};
    return 0;
}

/* ---- Groups and links during the run ---- */

/* Group g has finished at its finish time: release the dependents whose last prerequisite
 * it was. A worklist rather than recursion, since chains of empty groups can be long; each
 * group enters it once. */
static void group_done(struct rf_flowsim *fs, int32_t g0)
{
    int32_t n = 0;
    fs->gstack[n++] = g0;
    while (n > 0) {
        struct group *gr = &fs->groups[fs->gstack[--n]];
        gr->done = true;
        for (int32_t i = gr->dbeg; i < gr->dend; i++) {
            int32_t d = fs->deps[i];
            struct group *dg = &fs->groups[d];
            if (gr->finish > dg->ready)
                dg->ready = gr->finish;
            if (--dg->npre > 0)
                continue;
            dg->started = true;
            dg->start = dg->finish = dg->ready;
            if (dg->cbeg == dg->cend)
                fs->gstack[n++] = d;
            else
                aheap_push(fs, dg->start + fs->cls[dg->cbeg].lat, d);
        }
    }
}

static void class_finished(struct rf_flowsim *fs, int32_t c, double t)
{
    struct cls *k = &fs->cls[c];
    struct group *gr = &fs->groups[k->group];
    k->finish = t;
    if (t > gr->finish)
        gr->finish = t;
    if (--gr->unfinished == 0)
        group_done(fs, k->group);
}

/* Brings a link's carried bytes and busy time up to t at its current load. */
static void link_flush(struct rf_flowsim *fs, int32_t l, double t)
{
    struct link *L = &fs->links[l];
    double dt = t - L->t_upd;
    if (dt > 0) {
        fs->lbytes[l] += L->load * dt;
        if (L->n > 0)
            fs->lbusy[l] += dt;
        L->t_upd = t;
    }
}

static int solve_add(struct rf_flowsim *fs, int32_t c)
{
    struct cls *k = &fs->cls[c];
    if (k->stamp == fs->sstamp)
        return 0;
    if (!GROW(fs->S, fs->capS, fs->nS + 1))
        return RF_ENOMEM;
    k->stamp = fs->sstamp;
    k->spos = (int32_t)fs->nS;
    fs->S[fs->nS++] = c;
    return 0;
}

/* An active class completes: its links lose its load and get the bytes it had left (so
 * that link bytes are exact even when the completion was batched slightly early). */
static int complete(struct rf_flowsim *fs, int32_t c, double t)
{
    struct cls *k = &fs->cls[c];
    double left = k->rem - k->rate * (t - k->t_upd);
    double fin = k->key > t ? k->key : t;
    for (int32_t h = 0; h < k->path_len; h++) {
        int32_t l = fs->cpath[k->path + h];
        struct link *L = &fs->links[l];
        link_flush(fs, l, t);
        L->load -= (double)k->w * k->rate;
        fs->lbytes[l] += (double)k->w * left;
        if (k->b == l)
            L->nb--;
        int32_t pos = fs->hop[k->path + h];
        struct entry last = L->list[--L->n];
        if (pos != L->n) {
            L->list[pos] = last;
            fs->hop[fs->cls[last.c].path + last.k] = pos;
        }
        if (L->n == 0)
            L->load = 0; /* no drift survives an idle link */
        if (L->fstamp != fs->fstamp) {
            L->fstamp = fs->fstamp;
            if (!GROW(fs->freed, fs->cap_freed, fs->n_freed + 1))
                return RF_ENOMEM;
            fs->freed[fs->n_freed++] = l;
        }
    }
    k->rate = 0;
    class_finished(fs, c, fin);
    return 0;
}

/* Releases the classes of group g whose activation time falls in the event window. */
static int activate(struct rf_flowsim *fs, int32_t g, double t, double t_end)
{
    struct group *gr = &fs->groups[g];
    while (gr->cursor < gr->cend && gr->start + fs->cls[gr->cursor].lat <= t_end) {
        int32_t c = gr->cursor++;
        struct cls *k = &fs->cls[c];
        double act = gr->start + k->lat;
        if (k->rem == 0 || (k->path_len == 0 && k->cap == 0)) {
            class_finished(fs, c, act);
        } else if (k->path_len == 0) {
            /* Alone on no link: the cap is the rate, fixed for good. */
            k->rate = k->cap;
            k->t_upd = act;
            k->key = act + k->rem / k->cap;
            cheap_update(fs, c);
        } else {
            for (int32_t h = 0; h < k->path_len; h++) {
                int32_t l = fs->cpath[k->path + h];
                struct link *L = &fs->links[l];
                link_flush(fs, l, t);
                if (L->n == L->size) {
                    size_t nc = L->size ? 2 * (size_t)L->size : 8;
                    struct entry *ne = realloc(L->list, nc * sizeof(*ne));
                    if (!ne || nc > INT32_MAX)
                        return RF_ENOMEM;
                    L->list = ne;
                    L->size = (int32_t)nc;
                }
                fs->hop[k->path + h] = L->n;
                L->list[L->n++] = (struct entry){c, h};
            }
            k->rate = 0;
            k->t_upd = t;
            k->b = -1;
            int rc = solve_add(fs, c);
            if (rc < 0)
                return rc;
        }
    }
    if (gr->cursor < gr->cend)
        aheap_push(fs, gr->start + fs->cls[gr->cursor].lat, g);
    return 0;
}

/* ---- The local max-min solve ---- */

static int freeze(struct rf_flowsim *fs, int32_t s, double r, int32_t b)
{
    const struct cls *k = &fs->cls[fs->S[s]];
    double w = (double)k->w;
    fs->s_frozen[s] = true;
    fs->s_r[s] = r;
    fs->s_b[s] = b;
    for (int32_t h = 0; h < k->path_len; h++) {
        struct slink *q = &fs->sl[fs->links[fs->cpath[k->path + h]].loc];
        q->R -= w * r;
        q->W -= k->w;
        q->sum_new += w * r;
        if (r > q->max_new)
            q->max_new = r;
        if (q->W == 0) {
            q->done = true;
        } else if (!q->done) {
            /* Rates only rise during filling; rounding must not make a level go back. */
            double nk = q->R > 0 ? q->R / (double)q->W : 0;
            q->key = nk < r ? r : nk;
            if (sheap_push(fs, q->key, (int32_t)(q - fs->sl)) < 0)
                return RF_ENOMEM;
        }
    }
    return 0;
}

/* Progressive filling of the solve set S against what the other classes leave of each
 * link: raise all unfrozen rates together; the first link to saturate or cap to bind
 * freezes its classes. */
static int fill(struct rf_flowsim *fs)
{
    size_t nS = fs->nS, hops = 0;
    int rc;

    fs->lstamp++;
    fs->n_sl = 0;
    if (nS > fs->cap_sm) {
        size_t nc = 2 * nS;
        double *r = realloc(fs->s_r, nc * sizeof(double));
        if (r)
            fs->s_r = r;
        int32_t *b = realloc(fs->s_b, nc * sizeof(int32_t));
        if (b)
            fs->s_b = b;
        bool *fr = realloc(fs->s_frozen, nc * sizeof(bool));
        if (fr)
            fs->s_frozen = fr;
        if (!r || !b || !fr)
            return RF_ENOMEM;
        fs->cap_sm = nc;
    }

    for (size_t s = 0; s < nS; s++) {
        const struct cls *k = &fs->cls[fs->S[s]];
        fs->s_frozen[s] = false;
        hops += (size_t)k->path_len;
        for (int32_t h = 0; h < k->path_len; h++) {
            int32_t l = fs->cpath[k->path + h];
            struct link *L = &fs->links[l];
            if (L->stamp != fs->lstamp) {
                if (!GROW(fs->sl, fs->cap_sl, fs->n_sl + 1))
                    return RF_ENOMEM;
                L->stamp = fs->lstamp;
                L->loc = (int32_t)fs->n_sl;
                fs->sl[fs->n_sl++] = (struct slink){.l = l, .lam_sat = -1};
            }
            struct slink *q = &fs->sl[L->loc];
            q->nS++;
            q->W += k->w;
            q->sum_old += (double)k->w * k->rate;
            if (k->b == l)
                q->nbS_old++;
        }
    }
    if (!GROW(fs->csr, fs->cap_csr, hops))
        return RF_ENOMEM;
    int32_t off = 0;
    fs->n_heap = 0;
    if (!GROW(fs->heap, fs->cap_heap, fs->n_sl + nS))
        return RF_ENOMEM;
    for (size_t i = 0; i < fs->n_sl; i++) {
        struct slink *q = &fs->sl[i];
        const struct link *L = &fs->links[q->l];
        q->off = q->fill = off;
        off += q->nS;
        /* All of a link's classes in S: the residual is the capacity, free of drift. */
        q->out_load = q->nS == L->n ? 0 : L->load - q->sum_old;
        if (q->out_load < 0)
            q->out_load = 0;
        q->R = L->cap - q->out_load;
        if (q->R < 0)
            q->R = 0;
        q->key = q->R / (double)q->W;
        fs->heap[fs->n_heap++] = (struct hent){q->key, (int32_t)i};
    }
    for (size_t s = 0; s < nS; s++) {
        const struct cls *k = &fs->cls[fs->S[s]];
        for (int32_t h = 0; h < k->path_len; h++)
            fs->csr[fs->sl[fs->links[fs->cpath[k->path + h]].loc].fill++] = (int32_t)s;
        if (k->cap > 0)
            fs->heap[fs->n_heap++] = (struct hent){k->cap, ~(int32_t)s};
    }
    for (size_t i = fs->n_heap / 2; i-- > 0;)
        sheap_down(fs->heap, fs->n_heap, i);

    while (fs->n_heap > 0) {
        struct hent e = fs->heap[0];
        fs->heap[0] = fs->heap[--fs->n_heap];
        if (fs->n_heap > 0)
            sheap_down(fs->heap, fs->n_heap, 0);
        if (e.id < 0) {
            int32_t s = ~e.id;
            if (!fs->s_frozen[s] && (rc = freeze(fs, s, e.key, -1)) < 0)
                return rc;
            continue;
        }
        struct slink *q = &fs->sl[e.id];
        if (q->done || e.key != q->key)
            continue;
        q->lam_sat = e.key;
        int32_t l = q->l;
        for (int32_t i = q->off; i < q->off + q->nS; i++) {
            int32_t s = fs->csr[i];
            if (!fs->s_frozen[s] && (rc = freeze(fs, s, e.key, l)) < 0)
                return rc;
        }
        q = &fs->sl[e.id];
        q->done = true;
    }
    return 0;
}

/* The allocation is max-min fair iff every class has a bottleneck: its cap, or a saturated
 * link on which no class runs faster (Bertsekas and Gallager). S was just solved and the
 * other classes kept their rates; the conditions can only fail on links S crosses. A class
 * of S bottlenecked where an outsider runs faster needs the outsider re-solved (V1); an
 * outsider bottlenecked on a link that S left unsaturated, or on which S now runs faster,
 * needs to be re-solved (V2). Returns how many classes joined S. */
static int verify(struct rf_flowsim *fs, size_t *added)
{
    size_t before = fs->nS;
    int rc;
    for (size_t i = 0; i < fs->n_sl; i++) {
        const struct slink *q = &fs->sl[i];
        const struct link *L = &fs->links[q->l];
        if (q->nS == L->n)
            continue;
        if (q->lam_sat >= 0) {
            double thr = q->lam_sat * (1 + RATE_EPS);
            for (int32_t j = 0; j < L->n; j++) {
                int32_t c = L->list[j].c;
                const struct cls *k = &fs->cls[c];
                if (k->stamp != fs->sstamp && k->rate > thr && (rc = solve_add(fs, c)) < 0)
                    return rc;
            }
        }
        if (L->nb - q->nbS_old > 0) {
            bool sat = q->out_load + q->sum_new >= L->cap * (1 - RATE_EPS);
            if (sat && q->max_new <= L->sat_lvl * (1 + RATE_EPS))
                continue;
            for (int32_t j = 0; j < L->n; j++) {
                int32_t c = L->list[j].c;
                const struct cls *k = &fs->cls[c];
                if (k->stamp != fs->sstamp && k->b == q->l &&
                    (!sat || q->max_new > k->rate * (1 + RATE_EPS)) && (rc = solve_add(fs, c)) < 0)
                    return rc;
            }
        }
    }
    *added = fs->nS - before;
    return 0;
}

/* Installs the solved rates: link loads and levels first (they need the old bottleneck
 * counts), then each class's remaining bytes, bottleneck and predicted finish. */
static void commit(struct rf_flowsim *fs, double t)
{
    for (size_t i = 0; i < fs->n_sl; i++) {
        const struct slink *q = &fs->sl[i];
        struct link *L = &fs->links[q->l];
        link_flush(fs, q->l, t);
        L->load = q->out_load + q->sum_new;
        if (L->nb - q->nbS_old == 0)
            L->sat_lvl = q->lam_sat >= 0 ? q->lam_sat : INFINITY;
        else if (q->lam_sat >= 0 && q->lam_sat < L->sat_lvl)
            L->sat_lvl = q->lam_sat;
    }
    for (size_t s = 0; s < fs->nS; s++) {
        int32_t c = fs->S[s];
        struct cls *k = &fs->cls[c];
        if (k->b >= 0)
            fs->links[k->b].nb--;
        k->b = fs->s_b[s];
        if (k->b >= 0)
            fs->links[k->b].nb++;
        double r = fs->s_r[s];
        if (r == k->rate && k->hpos >= 0)
            continue;
        k->rem -= k->rate * (t - k->t_upd);
        if (k->rem < 0)
            k->rem = 0;
        k->t_upd = t;
        k->rate = r;
        k->key = r > 0 ? t + k->rem / r : INFINITY;
        cheap_update(fs, c);
    }
}

/* Re-rates the classes that can change after an event: S holds the new classes and those
 * bottlenecked on links that lost a class; it grows until the bottleneck conditions hold. */
static int solve(struct rf_flowsim *fs, double t)
{
    int rc;
    for (size_t i = 0; i < fs->n_freed; i++) {
        const struct link *L = &fs->links[fs->freed[i]];
        if (L->nb == 0)
            continue;
        for (int32_t j = 0; j < L->n; j++)
            if (fs->cls[L->list[j].c].b == fs->freed[i] && (rc = solve_add(fs, L->list[j].c)) < 0)
                return rc;
    }
    if (fs->nS == 0)
        return 0;
    fs->stats.solves++;
    for (;;) {
        size_t added;
        if ((rc = fill(fs)) < 0 || (rc = verify(fs, &added)) < 0)
            return rc;
        if (added == 0)
            break;
    }
    fs->stats.solved_classes += (int64_t)fs->nS;
    commit(fs, t);
    return 0;
}

/* ---- The run ---- */

static int simulate(struct rf_flowsim *fs, struct rf_error *err)
{
    double now = 0;
    int rc = 0;

    for (int32_t g = 0; g < fs->n_groups; g++) {
        struct group *gr = &fs->groups[g];
        /* An empty root releases its dependents at once; they are not roots. */
        if (gr->npre > 0 || gr->started)
            continue;
        gr->started = true;
        if (gr->cbeg == gr->cend)
            group_done(fs, g);
        else
            aheap_push(fs, fs->cls[gr->cbeg].lat, g);
    }

    for (;;) {
        double tc = fs->n_cheap ? fs->cls[fs->cheap[0]].key : INFINITY;
        double ta = fs->n_aheap ? fs->aheap[0].t : INFINITY;
        double t = tc < ta ? tc : ta;
        if (t == INFINITY) {
            if (fs->n_cheap)
                return rf_error_set(err, RF_EINVAL, "flowsim: flows stalled at time %g", now);
            break;
        }
        if (t < now)
            t = now;
        now = t;
        double t_end = t + BATCH_EPS * t;
        fs->stats.events++;
        fs->sstamp++;
        fs->fstamp++;
        fs->nS = 0;
        fs->n_freed = 0;

        /* Completions can finish groups and release others whose flows activate inside the
         * window, and zero-byte activations complete at once: sweep until quiet. */
        bool progress = true;
        while (progress) {
            progress = false;
            while (fs->n_cheap && fs->cls[fs->cheap[0]].key <= t_end) {
                if ((rc = complete(fs, cheap_pop(fs), t)) < 0)
                    goto nomem;
                progress = true;
            }
            while (fs->n_aheap && fs->aheap[0].t <= t_end) {
                int32_t g = fs->aheap[0].g;
                aheap_pop(fs);
                if ((rc = activate(fs, g, t, t_end)) < 0)
                    goto nomem;
                progress = true;
            }
        }
        if ((rc = solve(fs, t)) < 0)
            goto nomem;
    }
    for (int32_t g = 0; g < fs->n_groups; g++)
        if (!fs->groups[g].done)
            return rf_error_set(err, RF_EINVAL, "flowsim: group %d never finished", (int)g);
    return 0;
nomem:
    return rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
}

int rf_flowsim_run(struct rf_flowsim *fs, struct rf_error *err)
{
    int rc;

    free_run(fs);
    memset(&fs->stats, 0, sizeof(fs->stats));
    for (size_t l = 0; l < fs->n_links; l++) {
        struct link *L = &fs->links[l];
        L->load = L->t_upd = 0;
        L->sat_lvl = INFINITY;
        L->n = L->nb = 0;
        L->stamp = L->fstamp = 0;
        fs->lbytes[l] = fs->lbusy[l] = 0;
    }
    fs->sstamp = fs->lstamp = fs->fstamp = 0;
    if ((rc = build_classes(fs, err)) < 0 || (rc = build_groups(fs, err)) < 0)
        goto out;
    for (int32_t g = 0; g < fs->n_groups; g++) {
        struct group *gr = &fs->groups[g];
        gr->cursor = gr->cbeg;
        gr->unfinished = gr->cend - gr->cbeg;
    }
    fs->cheap = malloc((fs->n_cls ? (size_t)fs->n_cls : 1) * sizeof(int32_t));
    fs->aheap = malloc(((size_t)fs->n_groups + 1) * sizeof(struct aent));
    fs->gstack = malloc(((size_t)fs->n_groups + 1) * sizeof(int32_t));
    if (!fs->cheap || !fs->aheap || !fs->gstack) {
        rc = rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
        goto out;
    }
    fs->n_cheap = fs->n_aheap = 0;
    if ((rc = simulate(fs, err)) < 0)
        goto out;

    fs->makespan = 0;
    for (int32_t g = 0; g < fs->n_groups; g++)
        if (fs->groups[g].finish > fs->makespan)
            fs->makespan = fs->groups[g].finish;
    fs->stats.flows = (int64_t)fs->n_flows;
    fs->stats.classes = fs->n_cls;
    fs->stats.groups = fs->n_groups;
    fs->run_flows = fs->n_flows;
    fs->run_groups = fs->n_groups;
    fs->ran = true;
out:
    if (rc < 0)
        free_run(fs);
    return rc;
}

double rf_flowsim_flow_finish(const struct rf_flowsim *fs, int64_t flow)
{
    if (!fs->ran || flow < 0 || (uint64_t)flow >= fs->run_flows)
        return NAN;
    return fs->cls[fs->f_class[flow]].finish;
}

double rf_flowsim_group_start(const struct rf_flowsim *fs, int32_t group)
{
    if (!fs->ran || group < 0 || group >= fs->run_groups)
        return NAN;
    return fs->groups[group].start;
}

double rf_flowsim_group_finish(const struct rf_flowsim *fs, int32_t group)
{
    if (!fs->ran || group < 0 || group >= fs->run_groups)
        return NAN;
    return fs->groups[group].finish;
}

double rf_flowsim_makespan(const struct rf_flowsim *fs)
{
    return fs->ran ? fs->makespan : NAN;
}

const double *rf_flowsim_link_bytes(const struct rf_flowsim *fs)
{
    return fs->lbytes;
}

const double *rf_flowsim_link_busy(const struct rf_flowsim *fs)
{
    return fs->lbusy;
}

void rf_flowsim_stats(const struct rf_flowsim *fs, struct rf_flowsim_stats *out)
{
    *out = fs->stats;
}
