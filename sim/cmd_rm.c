/* `refit rm`: removes stored runs and every row that references them, in one transaction
 * (rf_store_remove_runs), and says what went and what space the next runs will reuse. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "store.h"

static const char usage[] =
    "usage: refit rm RUN... [--db FILE]\n"
    "       refit rm --label L [--db FILE]\n"
    "\n"
    "Removes runs RUN... (or every run labelled L) from FILE (default refit.db) with every row\n"
    "that references them: plan, prediction, link loads, rounds, phases, memory, measurements.\n"
    "One transaction: a run that does not exist, or a label no run has, removes nothing.\n"
    "The file keeps its size: the pages freed are reused by the next runs stored (sqlite3\n"
    "FILE VACUUM gives them back to the file system).\n"
    "  --label L      the runs a study or `refit sim --label L` stored under L\n";

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int cmd_rm(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"label", required_argument, NULL, 'l'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = "refit.db", *label = NULL;
    struct rf_store st;
    struct rf_store_removed r;
    struct rf_error err;
    int64_t *ids = NULL;
    size_t n = 0;
    int c, rc;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'l': label = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return 2;
        }
    }
    if (label && optind < argc)
        return cmd_usage_fail(argv[0], "give runs or --label, not both");
    if (!label && optind == argc)
        return cmd_usage_fail(argv[0], "rm takes one RUN or more, or --label L");
    n = (size_t)(argc - optind);
    if (n && !(ids = calloc(n, sizeof(*ids)))) {
        fputs("refit: out of memory\n", stderr);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = argv[optind + (int)i];
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (*s == '\0' || *end || errno == ERANGE || v < 1) {
            free(ids);
            return cmd_usage_fail(argv[0], "RUN %s: expected a run id (a positive integer)", s);
        }
        ids[i] = v;
    }
    /* A run named twice is removed once, and counted once ("rm 3 3" removes 1 run). */
    if (n > 1) /* --label: no ids (and qsort is not given NULL) */
        qsort(ids, n, sizeof(*ids), cmp_id);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || ids[i] != ids[u - 1])
            ids[u++] = ids[i];
    n = u;
    if (rf_store_open(&st, db, RF_STORE_EXISTING, &err) < 0) {
        free(ids);
        return cmd_fail(&err);
    }
    rc = rf_store_remove_runs(&st, ids, n, label, &r, &err);
    rf_store_close(&st);
    free(ids);
    if (rc < 0)
        return cmd_fail(&err);
    printf("removed %zu run%s from %s:", r.n_ids, r.n_ids == 1 ? "" : "s", db);
    for (size_t i = 0; i < r.n_ids; i++)
        printf(" %lld", (long long)r.ids[i]);
    printf("\nrows:");
    size_t k = 0;
    for (size_t t = 0; t < RF_STORE_RUN_TABLES; t++)
        if (r.tables[t].rows)
            printf("%s %s %lld", k++ ? "," : "", r.tables[t].table, (long long)r.tables[t].rows);
    /* The studies whose last runs these were went with them. */
    if (r.study_tables)
        printf("%s study_table %lld", k++ ? "," : "", (long long)r.study_tables);
    if (r.studies)
        printf("%s study %lld", k++ ? "," : "", (long long)r.studies);
    printf("\nfree: %lld pages (%.1f MB) the next runs stored reuse\n", (long long)r.free_pages,
           (double)r.free_pages * (double)r.page_size / 1e6);
    rf_store_removed_release(&r);
    return 0;
}
