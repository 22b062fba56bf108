/* The flow simulator's internals, shared by its two halves: sim/flowsim_build.c (the
 * flows as added, merged into members, rate classes and barrier groups) and sim/flowsim.c
 * (the run). */
#ifndef RF_FLOWSIM_INT_H
#define RF_FLOWSIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flowsim.h"

/* Completions and activations this close (relative to the clock) are one event. Finish
 * times are recorded exactly; only the rates of the others are moved by at most this. */
#define BATCH_EPS 1e-11
/* Tolerance of the max-min checks; a looser one saves re-solves but costs accuracy. */
#define RATE_EPS 1e-10

struct flow {
    double bytes, lat, cap, tail;
    int64_t path; /* offset into fs->paths */
    int32_t path_len, group;
};

/* Identical flows of one group (bytes, latency, tail, path, cap): they start together,
 * move at one rate and finish together. Bytes are per flow. */
struct memb {
    double bytes, lat;
    double tail;   /* added to the finish once the bytes have moved (rf_flow_spec.tail_s) */
    double finish; /* NAN until finished */
    int32_t cls;   /* its rate class */
    int32_t group;
    int32_t w; /* flows */
};

/* A rate class: every flow with one path and one cap, of whatever group, bytes or
 * latency. Max-min fairness gives flows with equal paths and caps equal rates, so the
 * solver rates classes, and a class's active members share its rate and finish in the
 * order of their thresholds: the service they joined at plus their bytes. Kimi K3 onto 64
 * engines: 4.9 M members in 65 k classes, since an NVLink fan-out sends one message per
 * hop over each pair of a domain's GPUs. Rates and service are per flow. */
struct cls {
    double svc;   /* bytes each of its flows has moved, up to t_upd */
    double rate;  /* since t_upd */
    double t_upd; /* when svc was last brought up to date */
    double key;   /* the next member's finish while active, else NAN */
    double hkey;  /* key of the class's registered completion heap entry, at most key while
                   * active (INFINITY: none); other entries of the class are stale */
    double cap;
    int64_t path; /* offset into fs->cpath */
    int32_t path_len;
    int32_t w;       /* active flows (its members' weights); 0: inactive */
    int32_t b;       /* bottleneck link; -1 when the cap binds or not yet rated */
    int32_t apos;    /* position in fs->act while active on links */
    int32_t hbeg;    /* its active members, a min-heap by threshold: fs->mheap[hbeg ..] */
    int32_t hn;      /* ... of hn entries */
    uint32_t stamp;  /* == fs->sstamp: in the solve set */
    uint32_t serial; /* activations so far (link list entries of earlier ones are dead) */
};

/* An entry of a link's class list: alive while the class is active in that activation. */
struct lent {
    int32_t c;
    uint32_t serial;
};

/* The per-event state of a link, one cache line; capacity and level live apart. Bytes are
 * those of the flows that crossed it (all of them finish), counted at activation; busy
 * time grows by whole intervals during which some class was active on it. */
struct link {
    double load, since, bytes, busy; /* since: start of the current busy interval */
    /* The classes crossing the link: n active ones among len entries. A class that
     * completes stays in the list, dead (inactive, or active again under a later serial),
     * until a scan or an append compacts it away, so that completing never touches the
     * lists. */
    struct lent *list;
    int32_t n, len, size;
    int32_t nb; /* active classes whose bottleneck this is */
    uint32_t fstamp;
};

/* Where a link sits in the solve's link table, when stamp is current. Apart from struct
 * link so that the lookup, done at every hop of every re-rated class, stays in cache. */
struct lslot {
    uint32_t stamp;
    int32_t loc;
};

struct group {
    double start, finish, ready; /* ready: latest prerequisite finish seen */
    int32_t cbeg, cend, cursor;  /* members, sorted by latency; next to activate */
    int32_t npre, unfinished;
    int32_t dbeg, dend; /* dependents in fs->deps */
    bool started, done;
};

struct edge {
    int32_t group, pre;
};

/* A link within one solve: residual capacity and unfrozen weight of the solve set. */
struct slink {
    double R, lam_sat, out_load, sum_old, sum_new, max_new;
    int64_t W;
    int32_t l, nS, nbS_old, off, fill;
    bool done;
};

/* A class within one solve; its links are s_loc[off .. off + len), as slink indices. */
struct smem {
    double r, cap;
    int32_t c, w, off, len, b;
    bool frozen;
};

/* A heap or sort entry: a key and the class, link or group it belongs to. */
struct hent {
    double key;
    int32_t id;
};

struct rf_flowsim {
    /* Completions within tolerance x (time since the latest group start) of the earliest
     * are one event: the error stays relative to a round, not to the whole run. */
    double tolerance;
    double last_start;
    size_t n_links;
    struct link *links;
    struct lslot *lslot;
    double *lcap;
    /* A lower bound on the rate of the classes bottlenecked on each link: checks against
     * it are cheap, and only a failed check scans the link's classes. */
    double *lsat;
    double *lbytes, *lbusy; /* results, copied out of links at the end of a run */

    struct flow *flows;
    size_t n_flows, cap_flows;
    int32_t *paths;
    size_t n_paths, cap_paths;
    struct edge *edges;
    size_t n_edges, cap_edges;
    int32_t n_groups;

    /* Built by a run. */
    bool ran;
    bool once, spent; /* rf_flowsim_set_once; its flows freed by a run */
    size_t run_flows;
    int32_t *f_memb; /* each flow's member */
    struct memb *memb;
    int32_t n_memb;
    struct cls *cls;
    int32_t n_cls;
    struct hent *mheap; /* the classes' member heaps, n_memb entries in all */
    int32_t *cpath;
    struct group *groups;
    int32_t run_groups;
    int32_t *deps;
    int32_t *gstack;
    int32_t *act; /* the classes active on links, in no order */
    int32_t n_act;
    double makespan;
    struct rf_flowsim_stats stats;

    /* Event heaps: completions (lazy: stale entries are dropped when they surface, and the
     * heap is rebuilt when they outnumber the live ones) and group activations. */
    struct hent *cheap;
    size_t n_cheap, cap_cheap, n_live;
    struct hent *aheap;
    size_t n_aheap;

    /* Solve scratch, kept between events. */
    uint32_t sstamp, lstamp, fstamp;
    struct smem *mem;
    size_t nS, capS;
    int32_t *s_loc;
    size_t cap_loc;
    struct slink *sl;
    size_t n_sl, cap_sl;
    int32_t *csr;
    size_t cap_csr;
    struct hent *heap;
    size_t n_heap, cap_heap;
    struct hent *caps;
    size_t cap_caps;
    int32_t *freed;
    size_t n_freed, cap_freed;
};

/* Frees what a run built (members, classes, groups, heaps, the solve's tables). */
void flowsim_free_run(struct rf_flowsim *fs);
/* Builds the run's members (identical flows of a group merged), its rate classes (members
 * with one path and cap) and its groups (members in latency order, barriers as
 * dependents). */
int flowsim_build(struct rf_flowsim *fs, struct rf_error *err);
/* Sorts by key, ties in input order; tmp holds n entries. */
void flowsim_sort_hents(struct hent *a, size_t n, struct hent *tmp);

#endif
