/* The calibrated cluster as a Lua cluster file (sim/calibrate.h): every figure of the
 * original and the fitted knobs, each number exact, every string a quoted literal, replaced
 * atomically. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "fileio.h"
#include "json.h"

/* A string as a Lua literal, the way string.format("%q") quotes it, except that a newline
 * becomes \n rather than a backslash and a line break: the result is always one line, so it
 * is safe inside a `--` comment too. Bytes from 0x80 up pass as they are (Lua strings are
 * bytes); every other control byte is a three-digit decimal escape, which no following digit
 * can extend. */
static void put_lua_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\r')
            fputs("\\r", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\%03d", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* A number that reads back as exactly the same double: the shortest of 15, 16 and 17
 * significant digits that round-trips (17 always does), so that 0.96 stays 0.96. A
 * prediction from the written file is then calibrate's own, to the last bit. */
static void put_num(FILE *f, double v)
{
    rf_put_real(f, v, false);
}

/* "key = value," lines of the file. */
static void put_field(FILE *f, const char *indent, const char *key, double v)
{
    fprintf(f, "%s%s = ", indent, key);
    put_num(f, v);
    fputs(",\n", f);
}

int rf_calibration_write(const struct rf_calibration *cal, const char *name, const char *when,
                         FILE *f, struct rf_error *err)
{
    const struct rf_cluster *c = &cal->fitted;
    /* A cluster file is one preset: a mixed cluster's second part would be lost. */
    if (c->upper.present)
        return rf_error_set(err, RF_EINVAL,
                            "cluster %s mixes two presets and a cluster file holds one: set the "
                            "fitted constants printed above in the scenario's cluster.train",
                            c->name);
    /* Every number must read back as written: inf or nan would be read as Lua globals. */
    for (size_t i = 0; i < rf_cluster_n_fields; i++) {
        const struct rf_cluster_field *fl = &rf_cluster_fields[i];
        if (fl->integer)
            continue;
        double v = *(const double *)((const char *)c + fl->offset);
        if (!isfinite(v))
            return rf_error_set(err, RF_EINVAL,
                                "the calibrated cluster has a figure that is not finite (%g)", v);
    }
    /* Strings from the user (names, paths) are quoted wherever they appear, comments
     * included: a newline in a name must not end the comment and start code. */
    fputs("-- Cluster ", f);
    put_lua_string(f, name);
    fputs(": cluster ", f);
    put_lua_string(f, c->name);
    fprintf(f, " calibrated by `refit calibrate` on %s.\n", when);
    fprintf(f, "-- Fitted to %zu measurement(s) (least squares on relative errors) of run(s)",
            cal->n_points);
    for (size_t i = 0; i < cal->n_points; i++)
        if (i == 0 || cal->points[i].run_id != cal->points[i - 1].run_id)
            fprintf(f, " %lld", (long long)cal->points[i].run_id);
    fprintf(f, ";\n-- RMS relative error %.4g before, %.4g after. Fitted:", cal->rms_before,
            cal->rms_after);
    for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
        if (cal->used[p])
            fprintf(f, " %s", rf_cal_param_name((enum rf_cal_param)p));
    fputs(".\n-- Every other figure is the original's (", f);
    put_lua_string(f, c->source ? c->source : "?");
    fputs(").\n", f);
    fprintf(f, "return cluster.system{\n");
    fputs("    name = ", f);
    put_lua_string(f, name);
    fputs(",\n", f);
    fprintf(f, "    nodes = %lld,\n", (long long)c->nodes);
    fprintf(f, "    gpus_per_node = %lld,\n", (long long)c->gpus_per_node);
    put_field(f, "    ", "hbm_gb", c->hbm_gb);
    fprintf(f, "    nvlink = { domain_gpus = %lld, gbps = ", (long long)c->nvlink.domain_gpus);
    put_num(f, c->nvlink.gbps);
    fputs(", latency_us = ", f);
    put_num(f, c->nvlink.latency_us);
    fprintf(f, " },\n    nic = { per_node = %lld, gbps = ", (long long)c->nic.per_node);
    put_num(f, c->nic.gbps);
    fputs(", latency_us = ", f);
    put_num(f, c->nic.latency_us);
    fputs(" },\n    pcie = { gbps = ", f);
    put_num(f, c->pcie_gbps);
    fprintf(f, " },\n    fabric = { nodes_per_leaf = %lld, oversubscription = ",
            (long long)c->fabric.nodes_per_leaf);
    put_num(f, c->fabric.oversubscription);
    fputs(", switch_latency_us = ", f);
    put_num(f, c->fabric.switch_latency_us);
    fprintf(f, ", pxn = %s },\n", c->fabric.pxn ? "true" : "false");
    const char *in = "        ";
    fprintf(f, "    calibration = {\n");
    put_field(f, in, "nvlink_efficiency", c->cal.nvlink_efficiency);
    put_field(f, in, "nic_efficiency", c->cal.nic_efficiency);
    put_field(f, in, "message_latency_us", c->cal.message_latency_us);
    fprintf(f, "%snvl_channels_per_peer = %lld,\n", in, (long long)c->cal.nvl_channels_per_peer);
    if (c->cal.net_channels_per_peer > 0)
        fprintf(f, "%snet_channels_per_peer = %lld,\n", in,
                (long long)c->cal.net_channels_per_peer);
    fprintf(f, "%sp2p_channels = %lld,\n", in, (long long)c->cal.p2p_channels);
    put_field(f, in, "channel_gbps", c->cal.channel_gbps);
    fprintf(f, "%snvl_chunk_kib = %lld,\n", in, (long long)c->cal.nvl_chunk_kib);
    fprintf(f, "%snet_chunk_kib = %lld,\n", in, (long long)c->cal.net_chunk_kib);
    put_field(f, in, "memcpy_gbps", c->cal.memcpy_gbps);
    put_field(f, in, "quant_gbps", c->cal.quant_gbps);
    put_field(f, in, "tensor_overhead_us", c->cal.tensor_overhead_us);
    put_field(f, in, "bucket_overhead_us", c->cal.bucket_overhead_us);
    fprintf(f, "%sstreams = %lld,\n", in, (long long)c->cal.streams);
    put_field(f, in, "kernel_launch_us", c->cal.kernel_launch_us);
    put_field(f, in, "nccl_call_us", c->cal.nccl_call_us);
    put_field(f, in, "barrier_us", c->cal.barrier_us);
    put_field(f, in, "h2d_gbps", c->cal.h2d_gbps);
    put_field(f, in, "d2h_gbps", c->cal.d2h_gbps);
    put_field(f, in, "reg_region_us", c->cal.reg_region_us);
    put_field(f, in, "loader_scan_us", c->cal.loader_scan_us);
    fprintf(f, "    },\n}\n");
    if (ferror(f))
        return rf_error_set(err, RF_EIO, "writing the calibrated cluster failed");
    return 0;
}

int rf_calibration_save(const struct rf_calibration *cal, const char *name, const char *when,
                        const char *path, struct rf_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    rc = rf_calibration_write(cal, name, when, f, err);
    if (fclose(f) != 0 && rc == 0)
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
    if (rc == 0)
        rc = rf_write_file_atomic(path, buf, len, err);
    free(buf);
    return rc;
}
