/* `refit clusters`: the cluster presets refit knows (models/clusters/), with the figures a
 * scenario's prediction rests on: GPUs, NVLink domain and bandwidth, NICs, HBM. */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "scenario.h"
#include "topology.h"

static const char usage_clusters[] =
    "usage: refit clusters [--json]\n"
    "\n"
    "Lists the cluster presets of the models folder (clusters/) with their figures: GPUs per\n"
    "node, the NVLink domain (GPUs) and its bandwidth per GPU and direction, NICs per node and\n"
    "each one's bandwidth per direction, HBM per GPU, PCIe per GPU and the nodes under one\n"
    "rail leaf (GB/s are 1e9 bytes per second, before calibration's efficiencies). A\n"
    "scenario names one as cluster = { system = NAME, nodes = N }.\n";

static json_t *cluster_json(const struct rf_cluster *c)
{
    return json_pack("{so sI sI sf sI sf sf sf sI}", "name", rf_json_text(c->name), "gpus_per_node",
                     (json_int_t)c->gpus_per_node, "nvlink_domain_gpus",
                     (json_int_t)c->nvlink.domain_gpus, "nvlink_gbps", c->nvlink.gbps,
                     "nics_per_node", (json_int_t)c->nic.per_node, "nic_gbps", c->nic.gbps,
                     "hbm_gb", c->hbm_gb, "pcie_gbps", c->pcie_gbps, "nodes_per_leaf",
                     (json_int_t)c->fabric.nodes_per_leaf);
}

int cmd_clusters(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': fputs(usage_clusters, stdout); return 0;
        default: return 2;
        }
    }
    if (optind != argc)
        return cmd_usage_fail("clusters", "clusters takes no argument '%s'", argv[optind]);

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct cmd_env env = {0};
    char **names = NULL;
    size_t n = 0;
    json_t *list = json_array();
    /* The table is printed once every preset loaded, so a bad preset prints no part. */
    char *table = NULL;
    size_t table_len = 0;
    FILE *tf = open_memstream(&table, &table_len);
    int rc = 1;

    if (!list || !tf) {
        fputs("refit: out of memory\n", stderr);
        goto out;
    }
    /* Lua first: cmd_open finds the models folder, and the presets are its clusters/. */
    if (cmd_open(&env, NULL, 0) != 0)
        goto out;
    if (snprintf(dir, sizeof(dir), "%s/clusters", env.models) >= (int)sizeof(dir)) {
        fprintf(stderr, "refit: %s/clusters: path too long\n", env.models);
        goto out;
    }
    if (cmd_lua_names(dir, "cluster presets", &names, &n) != 0)
        goto out;
    if (!json)
        fprintf(tf, "%-14s %9s %8s %12s %9s %9s %7s %10s %10s\n", "cluster", "gpus/node",
                "nvl_gpus", "nvlink(GB/s)", "nics/node", "nic(GB/s)", "hbm(GB)", "pcie(GB/s)",
                "nodes/leaf");
    for (size_t i = 0; i < n; i++) {
        struct rf_cluster cl = {0};
        if (rf_lua_load_cluster(env.L, names[i], &cl, &err) < 0) { /* cl released */
            rc = cmd_fail(&err);
            goto out;
        }
        int bad = 0;
        if (json)
            bad = json_array_append_new(list, cluster_json(&cl));
        else
            fprintf(tf, "%-14s %9lld %8lld %12g %9lld %9g %7g %10g %10lld\n", cl.name,
                    (long long)cl.gpus_per_node, (long long)cl.nvlink.domain_gpus, cl.nvlink.gbps,
                    (long long)cl.nic.per_node, cl.nic.gbps, cl.hbm_gb, cl.pcie_gbps,
                    (long long)cl.fabric.nodes_per_leaf);
        rf_cluster_release(&cl);
        if (bad < 0) {
            rf_error_set(&err, RF_EINVAL, "%s: cannot build the JSON output", names[i]);
            rc = cmd_fail(&err);
            goto out;
        }
    }
    if (json) {
        if (rf_json_print(json_incref(list), stdout, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
    } else {
        bool bad = fclose(tf) != 0;
        tf = NULL;
        if (bad) {
            fputs("refit: out of memory\n", stderr);
            goto out;
        }
        fwrite(table, 1, table_len, stdout);
    }
    rc = 0;
out:
    if (tf)
        fclose(tf);
    free(table);
    json_decref(list);
    cmd_names_free(names, n);
    cmd_close(&env);
    return rc;
}
