/* test_collective.c — the multi-rank collective analysis (spec formats.md
 * §3): the formulas one by one (collective types, dtype sizes, message MB,
 * algorithm bandwidth, the bus-bandwidth factors 2(n-1)/n and (n-1)/n, the
 * implicit-sync metrics with their tie rules, pandas' rounding), then
 * small hand-written rank traces through the store:
 * matching by process group and index, simplified mode, strict metadata
 * mismatch (the reference's ValueError text) vs the non-strict mode, the
 * summaries, straggler and node labels, all_to_allv and the heatmap. */
#include "ingest/ingest.h"
#include "query/multirank/multirank.h"
#include "query/multirank/multirank.h"
#include "tests/unit/tl_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];
static tl_store *g_store;

/* ---- formulas ---------------------------------------------------------- */

static void test_formulas(void)
{
    CHECK_EQ_I(tl_coll_type_of("allreduce"), TL_COLL_ALLREDUCE);
    CHECK_EQ_I(tl_coll_type_of("allreduce_coalesced"), TL_COLL_ALLREDUCE);
    CHECK_EQ_I(tl_coll_type_of("_reduce_scatter_base"), TL_COLL_REDUCESCATTER);
    CHECK_EQ_I(tl_coll_type_of("reduce_scatter_tensor_coalesced"), TL_COLL_REDUCESCATTER);
    CHECK_EQ_I(tl_coll_type_of("reducescatter"), TL_COLL_REDUCESCATTER);
    CHECK_EQ_I(tl_coll_type_of("_allgather_base"), TL_COLL_ALLGATHER);
    CHECK_EQ_I(tl_coll_type_of("all_gather_into_tensor_coalesced"), TL_COLL_ALLGATHER);
    CHECK_EQ_I(tl_coll_type_of("allgather_into_tensor_coalesced"), TL_COLL_ALLGATHER);
    CHECK_EQ_I(tl_coll_type_of("all_gather"), TL_COLL_ALLGATHER);
    CHECK_EQ_I(tl_coll_type_of("all_to_all"), TL_COLL_ALLTOALL);
    CHECK_EQ_I(tl_coll_type_of("all_to_allv"), TL_COLL_ALLTOALLV);
    CHECK_EQ_I(tl_coll_type_of("broadcast"), TL_COLL_UNKNOWN);
    CHECK_EQ_I(tl_coll_type_of("AllReduce"), TL_COLL_UNKNOWN); /* names compare exactly */
    CHECK_EQ_I(tl_coll_type_of(NULL), TL_COLL_UNKNOWN);
    CHECK(tl_coll_type_is_implicit_sync(TL_COLL_ALLTOALL));
    CHECK(!tl_coll_type_is_implicit_sync(TL_COLL_ALLTOALLV));
    CHECK(!tl_coll_type_is_implicit_sync(TL_COLL_UNKNOWN));

    static const struct { const char *d; int b; } DT[] = {
        {"Float", 4}, {"Int", 4}, {"Long", 8}, {"BFloat16", 2}, {"Bool", 1}, {"Byte", 1},
        {"Double", 8}, {"Half", 2}, {"Short", 2}, {"ComplexFloat", 0}, {"float", 0},
    };
    for (size_t i = 0; i < sizeof DT / sizeof *DT; i++) CHECK_EQ_I(tl_coll_dtype_bytes(DT[i].d), DT[i].b);

    CHECK(tl_coll_is_comm_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    CHECK(tl_coll_is_comm_kernel("void RCCL_kernel<1>()"));
    CHECK(tl_coll_is_comm_kernel("cross_device_reduce_1stage<bf16>"));
    CHECK(!tl_coll_is_comm_kernel("Cijk_Ailk_Bljk_BBS_BH"));

    /* §3.4: In msg size (MB) = nelems x bytes / 1024^2 (resnet reference) */
    CHECK(tl_coll_msg_mb(8816192, 2) == 16.8155517578125);
    CHECK(tl_coll_msg_mb(20, 8) == 0.000152587890625);
    CHECK(isnan(tl_coll_msg_mb(20, 0)));

    /* §3.5 bus-bandwidth factors */
    CHECK(tl_coll_busbw_factor(TL_COLL_ALLREDUCE, 8) == 1.75);
    CHECK(tl_coll_busbw_factor(TL_COLL_ALLREDUCE, 2) == 1.0);
    CHECK(tl_coll_busbw_factor(TL_COLL_ALLREDUCE, 1) == 0.0);
    CHECK(tl_coll_busbw_factor(TL_COLL_ALLREDUCE, 3) == 4.0 / 3.0);
    CHECK(tl_coll_busbw_factor(TL_COLL_REDUCESCATTER, 8) == 0.875);
    CHECK(tl_coll_busbw_factor(TL_COLL_ALLGATHER, 4) == 0.75);
    CHECK(tl_coll_busbw_factor(TL_COLL_ALLTOALL, 64) == 63.0 / 64.0);
    CHECK(tl_coll_busbw_factor(TL_COLL_ALLGATHER, 3) == 2.0 / 3.0);
    CHECK(isnan(tl_coll_busbw_factor(TL_COLL_ALLTOALLV, 8)));
    CHECK(isnan(tl_coll_busbw_factor(TL_COLL_UNKNOWN, 8)));
    CHECK(isnan(tl_coll_busbw_factor(TL_COLL_ALLREDUCE, 0)));

    /* algo bw = (MB / 1024) / (latency_us / 1e6) */
    CHECK(tl_coll_algo_bw(1024.0, 1e6) == 1.0);
    CHECK(tl_coll_algo_bw(16.8155517578125, 8932.626) == (16.8155517578125 / 1024) / (8932.626 / 1e6));
    CHECK(isnan(tl_coll_algo_bw(1.0, 0.0)));
    CHECK(isnan(tl_coll_algo_bw(NAN, 5.0)));

    /* implicit sync: waits, skews, tie rules */
    {
        double ts[] = {100.0, 103.0, 100.0, 103.0}, dur[] = {20.0, 17.5, 21.0, 17.0}, w[4];
        int rk[] = {0, 1, 2, 3};
        tl_coll_sync m;
        tl_coll_sync_metrics(ts, dur, rk, 4, w, &m);
        CHECK(m.comm_latency == 17.0);
        CHECK(m.skew_start == 3.0);
        CHECK(w[0] == 3.0 && w[1] == 0.0 && w[2] == 3.0 && w[3] == 0.0);
        CHECK(m.avg_wait == 1.5);
        CHECK_EQ_I(m.earliest_rank, 2); /* largest wait, tie -> higher rank */
        CHECK_EQ_I(m.last_rank, 1);     /* smallest wait, tie -> lower rank */
        CHECK(m.skew_end == 121.0 - 120.0);
    }
    {
        double ts[] = {5.0}, dur[] = {2.0};
        int rk[] = {3};
        tl_coll_sync m;
        tl_coll_sync_metrics(ts, dur, rk, 1, NULL, &m);
        CHECK(m.skew_start == 0 && m.skew_end == 0 && m.avg_wait == 0 && m.comm_latency == 2.0);
        CHECK_EQ_I(m.earliest_rank, 3);
        CHECK_EQ_I(m.last_rank, 3);
    }

    /* pandas round(1): x*10, round half even, /10 */
    CHECK(tl_coll_round(0.25, 1) == 0.2);
    CHECK(tl_coll_round(0.35, 1) == 0.4);
    CHECK(tl_coll_round(1234.56, 1) == 1234.6);
    CHECK(tl_coll_round(-2.25, 1) == -2.2);
}

/* grouped_breakdown groups of the multi-configuration workbook: the
 * reference's launcher lists, by exact name */
static void test_groups(void)
{
    CHECK_EQ_S(tl_corpus_group_of("aten::mm"), "GEMM");
    CHECK(tl_corpus_group_of("aten::linear") == NULL);
    CHECK_EQ_S(tl_corpus_group_of("flash_attn::_flash_attn_forward"), "Attention");
    CHECK(tl_corpus_group_of("aten::_scaled_dot_product_flash_attention") == NULL);
    CHECK_EQ_S(tl_corpus_group_of("aten::cudnn_convolution"), "Conv");
    CHECK(tl_corpus_group_of("aten::convolution_backward") == NULL);
    CHECK_EQ_S(tl_corpus_group_of("aten::native_layer_norm"), "Norm");
    CHECK_EQ_S(tl_corpus_group_of("aten::upsample_nearest2d"), "UpSample");
    CHECK_EQ_S(tl_corpus_group_of("aten::replication_pad3d"), "Pad");
    CHECK_EQ_S(tl_corpus_group_of("aten::cat"), "Concat");
    CHECK_EQ_S(tl_corpus_group_of("vllm::moe_forward"), "MoE");
    CHECK_EQ_S(tl_corpus_group_of("triton_poi_fused_add_0"), "Triton");
    CHECK_EQ_S(tl_corpus_group_of("aten::add_"), "Elemwise");
    CHECK(tl_corpus_group_of("aten::sum") == NULL);
    CHECK(tl_corpus_group_of(NULL) == NULL);
}

/* ---- small corpora through the store ------------------------------------- */

static int g_nfile;

/* One kernel event line. */
static void kev(tl_buf *b, const char *name, double ts, double dur, int stream, const char *args)
{
    tl_buf_printf(b, "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                     "\"args\":{\"correlation\":%d,\"stream\":%d%s%s}}",
                  b->n > 1 && b->p[b->n - 2] == '[' ? "" : ",\n", name, stream, ts, dur, 100 + g_nfile, stream, args ? "," : "", args ? args : "");
}

static uint64_t ingest_text(const char *text, int rank)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rank_%d_%d.json", g_dir, rank, g_nfile++);
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
    tl_ingest_opts o = {.rank = rank, .config = "unit"};
    tl_ingest_result res;
    tl_err err = {0};
    if (tl_ingest_file(g_store, path, &o, &res, &err)) {
        fprintf(stderr, "ingest: %s\n", err.msg);
        return 0;
    }
    return res.id;
}

static const char *cell(const tl_table *t, const char *col, size_t row)
{
    static char buf[8][256];
    static int k;
    long c = tl_table_col(t, col);
    if (c < 0 || row >= t->nrows) return "(absent)";
    k = (k + 1) % 8;
    return tl_table_cell_text(t, (size_t)c, row, buf[k], sizeof buf[k]);
}

#define AR(pg, ranks, n, nel)                                                                     \
    "\"Collective name\":\"allreduce\",\"Process Group Name\":\"" pg "\",\"Process Group Ranks\":\"" \
    ranks "\",\"Group size\":" #n ",\"dtype\":\"Float\",\"In msg nelems\":" #nel                \
    ",\"Out msg nelems\":" #nel ",\"In split size\":\"[]\",\"Out split size\":\"[]\""

static void test_regular(void)
{
    /* two ranks, world group "0" on stream 7 and a 2-rank group "5" on
     * stream 9; rank 1 arrives late to every world collective */
    uint64_t ids[2];
    for (int r = 0; r < 2; r++) {
        tl_buf b = {0};
        tl_buf_puts(&b, "{\"deviceProperties\":[{\"id\":0}],\"traceEvents\":[\n");
        double late = r ? 4.0 : 0.0;
        kev(&b, "ncclDevKernel_AllReduce", 1000.0 + late, 30.0 - late, 7, AR("0", "[0, 1]", 2, 262144));
        kev(&b, "ncclDevKernel_AllReduce", 2000.0 + late, 20.0 - late + (r ? 0.5 : 0), 7, AR("0", "[0, 1]", 2, 262144));
        kev(&b, "ncclDevKernel_AllReduce", 1500.0 + 2 * r, 10.0, 9, AR("5", "[0, 1]", 2, 1024));
        /* a kernel without correlation/External id is not a collective */
        tl_buf_printf(&b, ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_X\",\"pid\":0,\"tid\":7,"
                          "\"ts\":3000,\"dur\":1,\"args\":{\"stream\":7}}");
        /* compute kernels: rank 1 computes 10 us more */
        tl_buf_printf(&b, ",\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":3,\"ts\":100,"
                          "\"dur\":%d,\"args\":{\"correlation\":5,\"stream\":3}}", r ? 60 : 50);
        tl_buf_puts(&b, "\n]}\n");
        ids[r] = ingest_text(b.p, r);
        tl_buf_free(&b);
    }
    CHECK(ids[0] && ids[1]);
    tl_coll_opts o;
    tl_coll_opts_default(&o);
    o.quiet = 1;
    tl_coll_sheets sh;
    tl_coll_summary sum;
    tl_err err = {0};
    int rc = tl_coll_report(g_store, ids, 2, &o, &sh, &sum, &err);
    CHECK_EQ_I(rc, 0);
    if (rc) { fprintf(stderr, "%s\n", err.msg); return; }
    static const char *const ORDER[] = {"nccl_summary_implicit_sync", "nccl_summary_long", "nccl_long",
                                        "nccl_implicit_sync", "straggler_summary", "imbalance_ranks",
                                        "imbalance_collectives"};
    CHECK_EQ_I(sh.n, 7);
    for (size_t i = 0; i < sh.n && i < 7; i++) CHECK_EQ_S(sh.v[i]->name, ORDER[i]);
    CHECK(!sum.simplified);
    CHECK_EQ_I(sum.n_long, 6);
    CHECK_EQ_I(sum.gpus_per_node, 1);

    const tl_table *lng = tl_coll_sheet(&sh, "nccl_long");
    CHECK_EQ_I(lng->nrows, 6);
    /* rank 0 in trace order: 0_0, 0_1, 5_0 */
    CHECK_EQ_S(cell(lng, "collective_id", 0), "0_0");
    CHECK_EQ_S(cell(lng, "collective_id", 1), "0_1");
    CHECK_EQ_S(cell(lng, "collective_id", 2), "5_0");
    CHECK_EQ_S(cell(lng, "index_in_group", 2), "0");
    CHECK_EQ_S(cell(lng, "In msg size (MB)", 0), "1.0");
    CHECK_EQ_S(cell(lng, "Process Group Ranks", 0), "[0, 1]");
    CHECK_EQ_S(cell(lng, "ts", 3), "1004.0");
    CHECK_EQ_S(cell(lng, "node_id", 3), "1"); /* gpus_per_node = 1 device */
    CHECK_EQ_S(cell(lng, "node_span", 3), "inter_node");

    const tl_table *s = tl_coll_sheet(&sh, "nccl_implicit_sync");
    CHECK_EQ_I(s->nrows, 3);
    CHECK_EQ_S(cell(s, "collective_id", 0), "0_0");
    CHECK_EQ_S(cell(s, "comm_latency", 0), "26.0");
    CHECK_EQ_S(cell(s, "skew in start time", 0), "4.0");
    CHECK_EQ_S(cell(s, "earliest arrival rank", 0), "0");
    CHECK_EQ_S(cell(s, "avg_wait_time", 0), "2.0");
    CHECK_EQ_S(cell(s, "skew in end time", 0), "0.0");
    CHECK_EQ_S(cell(s, "Full msg size (MB)", 0), "1.0");
    /* algo = (1 MB / 1024) / (26 us / 1e6); bus = algo x 2(2-1)/2 */
    double algo = (1.0 / 1024) / (26.0 / 1e6);
    CHECK(tl_table_num(s, (size_t)tl_table_col(s, "algo bw (GB/s)"), 0) == algo);
    CHECK(tl_table_num(s, (size_t)tl_table_col(s, "bus bw (GB/s)"), 0) == algo * 1.0);
    CHECK_EQ_S(cell(s, "rank_1_wait_time", 0), "0.0");
    CHECK_EQ_S(cell(s, "rank_0_wait_time", 0), "4.0");
    CHECK_EQ_S(cell(s, "skew in end time", 1), "0.5");
    CHECK_EQ_S(cell(s, "collective_id", 2), "5_0");
    CHECK_EQ_S(cell(s, "skew in start time", 2), "2.0");
    CHECK_EQ_S(cell(s, "node_span", 2), "inter_node");

    const tl_table *ss = tl_coll_sheet(&sh, "nccl_summary_implicit_sync");
    CHECK_EQ_I(ss->nrows, 2);
    CHECK_EQ_S(cell(ss, "In msg nelems", 0), "262144"); /* larger total first */
    CHECK_EQ_S(cell(ss, "count", 0), "2");
    CHECK_EQ_S(cell(ss, "comm_latency_mean", 0), "21.25");
    CHECK_EQ_S(cell(ss, "comm_latency_median", 0), "21.25");
    CHECK_EQ_S(cell(ss, "comm_latency_min", 0), "16.5");
    CHECK_EQ_S(cell(ss, "comm_latency_max", 0), "26.0");
    CHECK_EQ_S(cell(ss, "Total comm latency (ms)", 0), "0.0425");
    CHECK_EQ_S(cell(ss, "Process Group Name", 1), "5");

    const tl_table *sl = tl_coll_sheet(&sh, "nccl_summary_long");
    CHECK_EQ_I(sl->nrows, 4); /* (rank, size) groups */
    CHECK_EQ_S(cell(sl, "rank", 0), "0");
    CHECK_EQ_S(cell(sl, "dur_sum", 0), "50.0");
    CHECK_EQ_S(cell(sl, "dur_std", 0), "7.0710678118654755");
    CHECK_EQ_S(cell(sl, "operation_count", 0), "2");

    const tl_table *st = tl_coll_sheet(&sh, "straggler_summary");
    CHECK_EQ_I(st->nrows, 2);
    CHECK_EQ_S(cell(st, "rank", 0), "1"); /* waits least: the straggler */
    CHECK_EQ_S(cell(st, "total_wait_time_us", 0), "0.0");
    CHECK_EQ_S(cell(st, "times_arrived_last", 0), "3");
    CHECK_EQ_S(cell(st, "pct_arrived_last", 0), "100.0");
    CHECK_EQ_S(cell(st, "total_wait_time_us", 1), "10.0");
    CHECK_EQ_S(cell(st, "times_arrived_first", 1), "3");
    CHECK_EQ_S(cell(st, "total_nccl_dur_us", 1), "60.0");

    const tl_table *ir = tl_coll_sheet(&sh, "imbalance_ranks");
    CHECK_EQ_S(cell(ir, "compute_time_ms", 1), "0.06");
    CHECK_EQ_S(cell(ir, "most_compute", 1), "True");
    CHECK_NEAR(tl_table_num(ir, (size_t)tl_table_col(ir, "compute_vs_mean_pct"), 0), -100.0 / 11, 1e-9);
    const tl_table *ic = tl_coll_sheet(&sh, "imbalance_collectives");
    CHECK_EQ_I(ic->nrows, 2);
    CHECK_EQ_S(cell(ic, "slowest_rank", 0), "1");
    CHECK_EQ_S(cell(ic, "total_skew_us", 0), "8.0");
    CHECK_EQ_S(cell(ic, "slowest_rank_pct_last", 0), "100.0");
    tl_coll_sheets_free(&sh);
    tl_coll_summary_free(&sum);

    /* stored configuration lookup */
    uint64_t *cids;
    size_t world;
    char *dir;
    rc = tl_coll_config_ids(g_store, "unit", 0, 1, &cids, &world, &dir, &err);
    CHECK_EQ_I(rc, 0);
    if (!rc) {
        CHECK_EQ_I(world, 2);
        CHECK(cids[0] == ids[0] && cids[1] == ids[1]);
        CHECK_EQ_S(dir, g_dir);
        free(cids);
        free(dir);
    }
    rc = tl_coll_config_ids(g_store, "unit", 3, 1, &cids, &world, NULL, &err);
    CHECK_EQ_I(rc, TL_ENOTFOUND);
    CHECK(strstr(err.msg, "Missing ranks") && strstr(err.msg, "[2]"));
}

static void test_mismatch_and_simplified(void)
{
    /* group sizes disagree: strict mode fails with the reference's text */
    uint64_t ids[2];
    for (int r = 0; r < 2; r++) {
        tl_buf b = {0};
        tl_buf_puts(&b, "{\"traceEvents\":[\n");
        kev(&b, "ncclKernel_AllReduce", 10.0, 5.0, 7, r ? AR("0", "[0, 1]", 4, 8) : AR("0", "[0, 1]", 2, 8));
        tl_buf_puts(&b, "\n]}\n");
        ids[r] = ingest_text(b.p, r);
        tl_buf_free(&b);
    }
    tl_coll_opts o;
    tl_coll_opts_default(&o);
    o.quiet = 1;
    tl_coll_sheets sh;
    tl_err err = {0};
    int rc = tl_coll_report(g_store, ids, 2, &o, &sh, NULL, &err);
    CHECK_EQ_I(rc, TL_EFORMAT);
    CHECK_EQ_S(err.msg, "Metadata mismatch in 'Group size' for collective 0_0: [2, 4]");
    o.strict_metadata = 0;
    rc = tl_coll_report(g_store, ids, 2, &o, &sh, NULL, &err);
    CHECK_EQ_I(rc, 0);
    if (!rc) {
        CHECK_EQ_S(cell(tl_coll_sheet(&sh, "nccl_implicit_sync"), "Group size", 0), "2");
        /* no deviceProperties: no node labels */
        CHECK(tl_table_col(tl_coll_sheet(&sh, "nccl_long"), "node_id") < 0);
        tl_coll_sheets_free(&sh);
    }

    /* simplified mode: no process-group names, one stream per rank; the
     * unnamed kernel and the broadcast are matched by order and kept */
    for (int r = 0; r < 2; r++) {
        tl_buf b = {0};
        tl_buf_puts(&b, "{\"traceEvents\":[\n");
        kev(&b, "cross_device_reduce_2stage", 100.0 + r, 10.0, 3, NULL);
        kev(&b, "ncclDevKernel_Broadcast", 200.0, 10.0 + r, 3, "\"Collective name\":\"broadcast\"");
        kev(&b, "ncclDevKernel_AllToAllv", 300.0, 10.0, 3,
            "\"Collective name\":\"all_to_allv\",\"dtype\":\"Byte\",\"In msg nelems\":4,\"In split size\":[1, 3]");
        tl_buf_puts(&b, "\n]}\n");
        ids[r] = ingest_text(b.p, r);
        tl_buf_free(&b);
    }
    o.strict_metadata = 1;
    o.gpus_per_node = 1;
    o.all2allv_heatmap = 1;
    tl_coll_summary sum;
    rc = tl_coll_report(g_store, ids, 2, &o, &sh, &sum, &err);
    CHECK_EQ_I(rc, 0);
    if (rc) { fprintf(stderr, "%s\n", err.msg); return; }
    CHECK(sum.simplified);
    const tl_table *lng = tl_coll_sheet(&sh, "nccl_long");
    CHECK_EQ_S(cell(lng, "collective_id", 0), "0");
    CHECK_EQ_S(cell(lng, "Process Group Name", 0), "all");
    CHECK_EQ_S(cell(lng, "Collective name", 0), "allreduce"); /* cross_device_reduce fill-in */
    CHECK_EQ_S(cell(lng, "node_span", 0), "unknown");
    const tl_table *s = tl_coll_sheet(&sh, "nccl_implicit_sync");
    CHECK_EQ_I(s->nrows, 2); /* allreduce and broadcast; all_to_allv is never implicit-sync */
    CHECK_EQ_S(cell(s, "skew in start time", 0), "1.0");
    CHECK_EQ_S(cell(s, "earliest arrival rank", 0), "0");
    CHECK_EQ_S(cell(s, "Collective name", 1), "broadcast");
    CHECK_EQ_S(cell(s, "skew in end time", 1), "1.0");
    CHECK_EQ_S(cell(s, "bus bw (GB/s)", 0), ""); /* no group size */
    const tl_table *a = tl_coll_sheet(&sh, "nccl_all2allv");
    CHECK(a != NULL);
    if (a) {
        CHECK_EQ_S(cell(a, "total data communicated (MB)", 0), "7.62939453125e-06");
        CHECK_EQ_S(cell(a, "total nelems communicated", 0), "8");
        CHECK_EQ_S(cell(a, "rank_1_In split size", 0), "(1, 3)");
        CHECK_EQ_S(cell(a, "wall_time (us)", 0), "10.0");
    }
    const tl_table *h = tl_coll_sheet(&sh, "nccl_all2allv_heatmap");
    CHECK(h != NULL);
    if (h) {
        CHECK_EQ_I(h->nrows, 4);
        CHECK_EQ_S(cell(h, "src_rank", 1), "0");
        CHECK_EQ_S(cell(h, "dst_rank", 1), "1");
        CHECK_EQ_S(cell(h, "total_sent_MB", 1), "2.86102294921875e-06");
        CHECK_EQ_S(cell(h, "count", 1), "1");
    }
    CHECK(tl_coll_sheet(&sh, "nccl_summary_all2allv") != NULL);
    tl_coll_sheets_free(&sh);
    tl_coll_summary_free(&sum);
}

int main(void)
{
    test_formulas();
    test_groups();
    g_store = tl_test_store_open("tl_coll_", g_dir, sizeof g_dir);
    test_regular();
    test_mismatch_and_simplified();
    tl_test_store_close(g_store, g_dir);
    return tl_test_done("test_collective");
}
