/* `refit clusters`: the cluster presets refit knows (models/clusters/), with the figures a
 * scenario's prediction rests on: GPUs, NVLink domain and bandwidth, NICs, HBM. */
#include <jansson.h>
#include <stdio.h>

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

static int cluster_row(struct cmd_env *env, const char *path, FILE *tf, json_t **json,
                       struct rf_error *err)
{
    struct rf_cluster cl = {0};
    if (rf_lua_load_cluster(env->L, path, &cl, err) < 0) /* cl released */
        return -1;
    if (json)
        *json = json_pack("{so sI sI sf sI sf sf sf sI}", "name", rf_json_text(cl.name),
                          "gpus_per_node", (json_int_t)cl.gpus_per_node, "nvlink_domain_gpus",
                          (json_int_t)cl.nvlink.domain_gpus, "nvlink_gbps", cl.nvlink.gbps,
                          "nics_per_node", (json_int_t)cl.nic.per_node, "nic_gbps", cl.nic.gbps,
                          "hbm_gb", cl.hbm_gb, "pcie_gbps", cl.pcie_gbps, "nodes_per_leaf",
                          (json_int_t)cl.fabric.nodes_per_leaf);
    else
        fprintf(tf, "%-14s %9lld %8lld %12g %9lld %9g %7g %10g %10lld\n", cl.name,
                (long long)cl.gpus_per_node, (long long)cl.nvlink.domain_gpus, cl.nvlink.gbps,
                (long long)cl.nic.per_node, cl.nic.gbps, cl.hbm_gb, cl.pcie_gbps,
                (long long)cl.fabric.nodes_per_leaf);
    rf_cluster_release(&cl);
    return 0;
}

int cmd_clusters(int argc, char **argv)
{
    static const struct cmd_list list = {
        .command = "clusters",
        .usage = usage_clusters,
        .what = "cluster presets",
        .subdir = "clusters",
        .header = "cluster        gpus/node nvl_gpus nvlink(GB/s) nics/node "
                  "nic(GB/s) hbm(GB) pcie(GB/s) nodes/leaf",
        .row = cluster_row};
    return cmd_list_run(&list, argc, argv);
}
