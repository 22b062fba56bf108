/* The flow simulator's input side: flows and barriers as added, and what a run builds from
 * them before it starts (members of identical flows, rate classes of one path and cap,
 * groups in activation order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "flowsim_int.h"

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
    fs->tolerance = BATCH_EPS;
    fs->links = calloc(n_links ? n_links : 1, sizeof(*fs->links));
    fs->lbytes = calloc(n_links ? n_links : 1, sizeof(double));
    fs->lbusy = calloc(n_links ? n_links : 1, sizeof(double));
    fs->lcap = malloc((n_links ? n_links : 1) * sizeof(double));
    fs->lslot = calloc(n_links ? n_links : 1, sizeof(struct lslot));
    fs->lsat = malloc((n_links ? n_links : 1) * sizeof(double));
    if (!fs->links || !fs->lbytes || !fs->lbusy || !fs->lcap || !fs->lsat || !fs->lslot)
        goto nomem;
    for (size_t l = 0; l < n_links; l++)
        fs->lcap[l] = capacity[l];
    *out = fs;
    fs = NULL;
    goto out;
nomem:
    rc = rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
out:
    rf_flowsim_free(fs);
    return rc;
}

void flowsim_free_run(struct rf_flowsim *fs)
{
    free(fs->f_memb);
    free(fs->memb);
    free(fs->mheap);
    free(fs->cls);
    free(fs->cpath);
    free(fs->groups);
    free(fs->deps);
    free(fs->gstack);
    free(fs->act);
    free(fs->cheap);
    free(fs->aheap);
    fs->f_memb = NULL;
    fs->memb = NULL;
    fs->mheap = NULL;
    fs->cls = NULL;
    fs->cpath = NULL;
    fs->groups = NULL;
    fs->deps = NULL;
    fs->gstack = NULL;
    fs->act = NULL;
    fs->cheap = NULL;
    fs->cap_cheap = 0;
    fs->aheap = NULL;
    fs->ran = false;
}

void rf_flowsim_free(struct rf_flowsim *fs)
{
    if (!fs)
        return;
    flowsim_free_run(fs);
    if (fs->links)
        for (size_t l = 0; l < fs->n_links; l++)
            free(fs->links[l].list);
    free(fs->links);
    free(fs->lbytes);
    free(fs->lbusy);
    free(fs->flows);
    free(fs->paths);
    free(fs->edges);
    free(fs->lcap);
    free(fs->lsat);
    free(fs->lslot);
    free(fs->mem);
    free(fs->s_loc);
    free(fs->caps);
    free(fs->sl);
    free(fs->csr);
    free(fs->heap);
    free(fs->freed);
    free(fs);
}

int rf_flowsim_add(struct rf_flowsim *fs, const struct rf_flow_spec *f, struct rf_error *err)
{
    if (fs->spent)
        return rf_error_set(err, RF_EINVAL,
                            "flowsim: its flows were freed by a run "
                            "(rf_flowsim_set_once)");
    if (f->group < 0 || f->group == INT32_MAX)
        return rf_error_set(err, RF_EINVAL, "flowsim: bad flow group %d", (int)f->group);
    if (!(f->bytes >= 0) || !isfinite(f->bytes) || !(f->latency_s >= 0) ||
        !isfinite(f->latency_s) || !(f->rate_cap >= 0) || !isfinite(f->rate_cap) ||
        !(f->tail_s >= 0) || !isfinite(f->tail_s))
        return rf_error_set(err, RF_EINVAL,
                            "flowsim: flow bytes %g, latency %g, rate cap %g, tail %g: each must "
                            "be finite and >= 0",
                            f->bytes, f->latency_s, f->rate_cap, f->tail_s);
    if (f->path_len < 0 || (f->path_len > 0 && !f->path))
        return rf_error_set(err, RF_EINVAL, "flowsim: bad path (length %d)", f->path_len);
    if (fs->n_flows >= INT32_MAX)
        return rf_error_set(err, RF_EINVAL, "flowsim: too many flows");
    for (int k = 0; k < f->path_len; k++)
        if (f->path[k] < 0 || (size_t)f->path[k] >= fs->n_links)
            return rf_error_set(err, RF_EINVAL, "flowsim: path link %d out of range (%zu links)",
                                (int)f->path[k], fs->n_links);
    if (RF_GROW(fs->flows, fs->cap_flows, fs->n_flows + 1, NULL) ||
        RF_GROW(fs->paths, fs->cap_paths, fs->n_paths + (size_t)f->path_len, NULL))
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
                                           .tail = f->tail_s + 0.0,
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
    if (RF_GROW(fs->edges, fs->cap_edges, fs->n_edges + 1, NULL))
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

static int cmp_hent(const void *a, const void *b)
{
    const struct hent *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

#define FEW_KEYS 16

/* Sorts by key, ties in input order (ids ascending on input stay so). Latencies and caps
 * take a handful of values (one per kind of path), so a counting sort over the distinct
 * keys usually does it in two passes; tmp holds n entries. */
void flowsim_sort_hents(struct hent *a, size_t n, struct hent *tmp)
{
    double keys[FEW_KEYS];
    size_t count[FEW_KEYS] = {0}, nk = 0;
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && a[i].key < a[i - 1].key)
            sorted = false;
        size_t j = 0;
        while (j < nk && keys[j] != a[i].key)
            j++;
        if (j == nk) {
            if (nk == FEW_KEYS) {
                qsort(a, n, sizeof(*a), cmp_hent);
                return;
            }
            keys[nk++] = a[i].key;
        }
        count[j]++;
    }
    if (sorted)
        return;
    /* Rank the distinct keys, then place each entry after the smaller ones. */
    size_t start[FEW_KEYS];
    for (size_t j = 0; j < nk; j++) {
        start[j] = 0;
        for (size_t m = 0; m < nk; m++)
            if (keys[m] < keys[j])
                start[j] += count[m];
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (keys[j] != a[i].key)
            j++;
        tmp[start[j]++] = a[i];
    }
    memcpy(a, tmp, n * sizeof(*a));
}

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
    uint64_t h =
        mix(mix(mix(mix(0, dbits(f->bytes)), dbits(f->lat)), dbits(f->cap)), dbits(f->tail));
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
    return a->bytes == b->bytes && a->lat == b->lat && a->cap == b->cap && a->tail == b->tail &&
           a->path_len == b->path_len &&
           (a->path_len == 0 || memcmp(fs->paths + a->path, fs->paths + b->path,
                                       sizeof(int32_t) * (size_t)a->path_len) == 0);
}

/* Merges the flows of each group into members by hashing; a group's members are
 * contiguous and sorted by latency, so its activations are a sweep. rep[m] is left as a
 * flow of member m (its path and cap, for build_rate_classes). */
static int build_members(struct rf_flowsim *fs, int32_t *rep_out, struct rf_error *err)
{
    int32_t G = fs->n_groups;
    size_t *gcount = calloc((size_t)G + 1, sizeof(size_t));
    int32_t *order = malloc((fs->n_flows ? fs->n_flows : 1) * sizeof(int32_t));
    int32_t *table = NULL, *used = NULL, *rep = NULL, *wt = NULL, *perm = NULL;
    struct hent *lk = NULL, *tmp = NULL;
    size_t maxg = 0, tsize = 1;
    int rc = 0;

    fs->f_memb = malloc((fs->n_flows ? fs->n_flows : 1) * sizeof(int32_t));
    fs->groups = calloc((size_t)G + 1, sizeof(struct group));
    if (!gcount || !order || !fs->f_memb || !fs->groups)
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
    tmp = malloc((maxg ? maxg : 1) * sizeof(*tmp));
    /* Members never outnumber flows; the array shrinks to size below. */
    fs->memb = malloc((fs->n_flows ? fs->n_flows : 1) * sizeof(struct memb));
    if (!table || !used || !rep || !wt || !perm || !lk || !tmp || !fs->memb)
        goto nomem;
    for (size_t i = 0; i < tsize; i++)
        table[i] = -1;

    int32_t nm = 0;
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
            fs->f_memb[order[i]] = table[s]; /* provisional, within the group */
        }
        for (int32_t j = 0; j < np; j++) {
            table[used[j]] = -1;
            lk[j] = (struct hent){fs->flows[rep[j]].lat, j};
        }
        flowsim_sort_hents(lk, (size_t)np, tmp);
        struct group *gr = &fs->groups[g];
        gr->cbeg = nm;
        for (int32_t j = 0; j < np; j++) {
            const struct flow *f = &fs->flows[rep[lk[j].id]];
            perm[lk[j].id] = nm;
            rep_out[nm] = rep[lk[j].id];
            fs->memb[nm] = (struct memb){.bytes = f->bytes,
                                         .lat = f->lat,
                                         .tail = f->tail,
                                         .finish = NAN,
                                         .cls = -1,
                                         .group = g,
                                         .w = wt[lk[j].id]};
            nm++;
        }
        gr->cend = nm;
        for (size_t i = beg; i < end; i++)
            fs->f_memb[order[i]] = perm[fs->f_memb[order[i]]];
    }
    fs->n_memb = nm;
    struct memb *shrunk = realloc(fs->memb, (nm ? (size_t)nm : 1) * sizeof(struct memb));
    if (shrunk)
        fs->memb = shrunk;
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
    free(tmp);
    return rc;
}

static uint64_t route_hash(const struct rf_flowsim *fs, const struct flow *f)
{
    uint64_t h = mix(mix(0, dbits(f->cap)), (uint64_t)f->path_len);
    for (int32_t k = 0; k < f->path_len; k++)
        h = mix(h, (uint64_t)(uint32_t)fs->paths[f->path + k]);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h;
}

static bool route_same(const struct rf_flowsim *fs, const struct flow *a, const struct flow *b)
{
    return a->cap == b->cap && a->path_len == b->path_len &&
           (a->path_len == 0 || memcmp(fs->paths + a->path, fs->paths + b->path,
                                       sizeof(int32_t) * (size_t)a->path_len) == 0);
}

/* Merges the members of all groups into rate classes by path and cap, in order of first
 * member; each class gets its own copy of its path and a slice of fs->mheap as large as
 * its members (rep: a flow of each member). */
static int build_rate_classes(struct rf_flowsim *fs, const int32_t *rep, struct rf_error *err)
{
    size_t nm = (size_t)fs->n_memb, tsize = 1, total_path = 0, cap_cls = 0, cap_crep = 0;
    int32_t *table = NULL, *crep = NULL;
    int32_t nc = 0;
    int rc = 0;

    /* Classes grow as they are found: Kimi K3's 4.9 M members make 65 k classes, and an
     * array sized for one class a member asked for 415 MB (untouched, so not resident, but
     * counted against a ulimit -v or an overcommit limit). */
    while (tsize < 2 * nm)
        tsize *= 2;
    table = malloc(tsize * sizeof(int32_t));
    fs->cls = NULL;
    fs->mheap = malloc((nm ? nm : 1) * sizeof(struct hent));
    if (!table || !fs->mheap)
        goto nomem;
    for (size_t i = 0; i < tsize; i++)
        table[i] = -1;
    for (size_t m = 0; m < nm; m++) {
        const struct flow *f = &fs->flows[rep[m]];
        size_t s = (size_t)route_hash(fs, f) & (tsize - 1);
        while (table[s] >= 0 && !route_same(fs, &fs->flows[crep[table[s]]], f))
            s = (s + 1) & (tsize - 1);
        if (table[s] < 0) {
            if (RF_GROW(fs->cls, cap_cls, (size_t)nc + 1, NULL) ||
                RF_GROW(crep, cap_crep, (size_t)nc + 1, NULL))
                goto nomem;
            table[s] = nc;
            crep[nc] = rep[m];
            fs->cls[nc] = (struct cls){.cap = f->cap,
                                       .path = f->path, /* a flow offset until remapped */
                                       .path_len = f->path_len,
                                       .key = NAN,
                                       .hkey = INFINITY,
                                       .b = -1};
            total_path += (size_t)f->path_len;
            nc++;
        }
        fs->memb[m].cls = table[s];
        fs->cls[table[s]].hn++; /* members, until the slices are laid out */
    }
    fs->n_cls = nc;
    struct cls *shrunk = realloc(fs->cls, (nc ? (size_t)nc : 1) * sizeof(struct cls));
    if (shrunk)
        fs->cls = shrunk;
    int32_t off = 0;
    for (int32_t c = 0; c < nc; c++) {
        fs->cls[c].hbeg = off;
        off += fs->cls[c].hn;
        fs->cls[c].hn = 0;
    }

    /* The run walks paths class by class: each class has its own copy. */
    fs->cpath = malloc((total_path ? total_path : 1) * sizeof(int32_t));
    if (!fs->cpath)
        goto nomem;
    size_t po = 0;
    for (int32_t c = 0; c < nc; c++) {
        struct cls *k = &fs->cls[c];
        if (k->path_len > 0)
            memcpy(fs->cpath + po, fs->paths + k->path, sizeof(int32_t) * (size_t)k->path_len);
        k->path = (int64_t)po;
        po += (size_t)k->path_len;
    }
    goto out;
nomem:
    rc = rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
out:
    free(table);
    free(crep);
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

int flowsim_build(struct rf_flowsim *fs, struct rf_error *err)
{
    int32_t *rep = malloc((fs->n_flows ? fs->n_flows : 1) * sizeof(int32_t));
    if (!rep)
        return rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
    int rc = build_members(fs, rep, err);
    if (rc >= 0)
        rc = build_rate_classes(fs, rep, err);
    free(rep);
    return rc < 0 ? rc : build_groups(fs, err);
}
