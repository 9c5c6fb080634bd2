/* test_xplane.c — the XPlane reader (ingest/xplane.c) and the JAX report's
 * building blocks: a hand-made XSpace packed with our own schema checks the
 * xprof conversion rules (pids, tids, ps -> ns, display names, internal
 * events and stats); the shared samples check counts, timestamps and HLO
 * extraction; corrupt, truncated and foreign inputs must fail with a
 * message naming the file. Skips the sample part (77) without shared data. */
#include "tests/unit/tl_test.h"
#include "ingest/builder_internal.h"
#include "ingest/xplane.h"
#include "ingest/ingest.h"
#include "query/jax/jax.h"
#include "xplane.pb-c.h"

#include <stdlib.h>
#include <string.h>

static const char *args_of(tl_build *b, size_t row)
{
    /* args of row `row` in the current (unsealed) chunk */
    static char buf[4096];
    const blob_acc *a = &b->args;
    size_t base = (size_t)b->args_rows, i = row - base;
    if (row < base || i + 1 >= a->off.n) return "";
    size_t s = a->off.v[i], e = a->off.v[i + 1];
    size_t n = e - s < sizeof buf - 1 ? e - s : sizeof buf - 1;
    memcpy(buf, a->bytes.p + s, n);
    buf[n] = 0;
    return buf;
}

/* Row i of an event column in the builder's current (first) chunk. */
#define ROW(b, T, col, i) (((const T *)(b)->hot[col].buf)[i])

static long find_row(tl_build *b, const char *name)
{
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(tl_build_strget(b, ROW(b, uint32_t, HOT_NAME, i), NULL), name)) return (long)i;
    return -1;
}

/* A small XSpace: a GPU plane (id 2) with a kernel line, a host plane with
 * a launch and an internal MemoryAllocation event, and the metadata plane. */
static void test_synthetic(void)
{
    Tlxp__XStatMetadata sm_corr = TLXP__XSTAT_METADATA__INIT, sm_kd = TLXP__XSTAT_METADATA__INIT,
                        sm_ref = TLXP__XSTAT_METADATA__INIT, sm_hop = TLXP__XSTAT_METADATA__INIT;
    sm_corr.id = 1; sm_corr.name = "correlation_id";
    sm_kd.id = 2; sm_kd.name = "kernel_details";
    sm_ref.id = 3; sm_ref.name = " grid:4,2,1 block:64,1,1";
    sm_hop.id = 4; sm_hop.name = "hlo_op";
    Tlxp__XPlane__StatMetadataEntry se[4] = {TLXP__XPLANE__STAT_METADATA_ENTRY__INIT, TLXP__XPLANE__STAT_METADATA_ENTRY__INIT,
                                             TLXP__XPLANE__STAT_METADATA_ENTRY__INIT, TLXP__XPLANE__STAT_METADATA_ENTRY__INIT};
    Tlxp__XStatMetadata *sms[4] = {&sm_corr, &sm_kd, &sm_ref, &sm_hop};
    Tlxp__XPlane__StatMetadataEntry *sep[4];
    for (int i = 0; i < 4; i++) { se[i].key = sms[i]->id; se[i].value = sms[i]; sep[i] = &se[i]; }

    Tlxp__XEventMetadata em_k = TLXP__XEVENT_METADATA__INIT, em_l = TLXP__XEVENT_METADATA__INIT,
                         em_a = TLXP__XEVENT_METADATA__INIT;
    em_k.id = 7; em_k.name = "my_kernel_long_name"; em_k.display_name = "my_kernel";
    em_l.id = 8; em_l.name = "hipLaunchKernel";
    em_a.id = 9; em_a.name = "MemoryAllocation";
    Tlxp__XPlane__EventMetadataEntry ee[3] = {TLXP__XPLANE__EVENT_METADATA_ENTRY__INIT, TLXP__XPLANE__EVENT_METADATA_ENTRY__INIT,
                                              TLXP__XPLANE__EVENT_METADATA_ENTRY__INIT};
    ee[0].key = 7; ee[0].value = &em_k;
    ee[1].key = 8; ee[1].value = &em_l;
    ee[2].key = 9; ee[2].value = &em_a;
    Tlxp__XPlane__EventMetadataEntry *eep[3] = {&ee[0], &ee[1], &ee[2]};

    Tlxp__XStat st_c = TLXP__XSTAT__INIT, st_kd = TLXP__XSTAT__INIT, st_h = TLXP__XSTAT__INIT, st_c2 = TLXP__XSTAT__INIT;
    st_c.metadata_id = 1; st_c.value_case = TLXP__XSTAT__VALUE_UINT64_VALUE; st_c.uint64_value = 42;
    st_kd.metadata_id = 2; st_kd.value_case = TLXP__XSTAT__VALUE_REF_VALUE; st_kd.ref_value = 3;
    st_h.metadata_id = 4; st_h.value_case = TLXP__XSTAT__VALUE_STR_VALUE; st_h.str_value = "fusion.1";
    st_c2.metadata_id = 1; st_c2.value_case = TLXP__XSTAT__VALUE_INT64_VALUE; st_c2.int64_value = 42;
    Tlxp__XStat *kst[3] = {&st_c, &st_kd, &st_h}, *lst[1] = {&st_c2};

    /* Two kernels out of order: the reader sorts by start. */
    Tlxp__XEvent k1 = TLXP__XEVENT__INIT, k2 = TLXP__XEVENT__INIT, l1 = TLXP__XEVENT__INIT, a1 = TLXP__XEVENT__INIT;
    k1.metadata_id = 7; k1.data_case = TLXP__XEVENT__DATA_OFFSET_PS; k1.offset_ps = 5000000; k1.duration_ps = 2500000;
    k1.n_stats = 3; k1.stats = kst;
    k2.metadata_id = 7; k2.data_case = TLXP__XEVENT__DATA_OFFSET_PS; k2.offset_ps = 1000; k2.duration_ps = 0;
    l1.metadata_id = 8; l1.data_case = TLXP__XEVENT__DATA_OFFSET_PS; l1.offset_ps = 3000000; l1.duration_ps = 1000000;
    l1.n_stats = 1; l1.stats = lst;
    a1.metadata_id = 9; a1.data_case = TLXP__XEVENT__DATA_OFFSET_PS; a1.offset_ps = 0; a1.duration_ps = 0;
    Tlxp__XEvent *gev[2] = {&k1, &k2}, *hev[2] = {&l1, &a1};

    Tlxp__XLine gl = TLXP__XLINE__INIT, hl = TLXP__XLINE__INIT, empty = TLXP__XLINE__INIT;
    gl.id = 3; gl.name = "Stream #3(Kernel)"; gl.timestamp_ns = 1000; gl.n_events = 2; gl.events = gev;
    hl.id = -5; hl.name = "Host Threads/5"; hl.timestamp_ns = 1000; hl.n_events = 2; hl.events = hev;
    empty.id = 9; empty.name = "Stream #9(Kernel)";
    Tlxp__XLine *glines[2] = {&gl, &empty}, *hlines[1] = {&hl};

    Tlxp__XPlane gpu = TLXP__XPLANE__INIT, host = TLXP__XPLANE__INIT, meta = TLXP__XPLANE__INIT;
    gpu.id = 2; gpu.name = "/device:GPU:2"; gpu.n_lines = 2; gpu.lines = glines;
    gpu.n_event_metadata = 3; gpu.event_metadata = eep; gpu.n_stat_metadata = 4; gpu.stat_metadata = sep;
    host.name = "/host:CPU"; host.n_lines = 1; host.lines = hlines;
    host.n_event_metadata = 3; host.event_metadata = eep; host.n_stat_metadata = 4; host.stat_metadata = sep;
    meta.name = "/host:metadata";
    Tlxp__XPlane *planes[3] = {&host, &meta, &gpu};
    Tlxp__XSpace sp = TLXP__XSPACE__INIT;
    sp.n_planes = 3; sp.planes = planes;

    size_t n = tlxp__xspace__get_packed_size(&sp);
    uint8_t *buf = malloc(n);
    tlxp__xspace__pack(&sp, buf);
    CHECK(tl_xplane_sniff((const char *)buf, n));

    tl_build *b = tl_build_new();
    tl_err err = {0};
    CHECK_EQ_I(tl_xplane_parse(buf, n, "/x/myhost.xplane.pb", b, &err), 0);
    CHECK_EQ_I(b->n, 3); /* 2 kernels + 1 launch; MemoryAllocation dropped */
    /* pid order: GPU (1 + 2 = 3) before host (701). */
    CHECK_EQ_I(ROW(b, int64_t, HOT_PID, 0), 3);
    CHECK_EQ_I(ROW(b, int64_t, HOT_TID, 0), 3);
    CHECK_EQ_I(ROW(b, int64_t, HOT_TS, 0), 1001);      /* 1000 ns * 1000 + 1000 ps = 1001 ns */
    CHECK_EQ_I(ROW(b, int64_t, HOT_DUR, 0), 0);
    CHECK_EQ_I(ROW(b, int64_t, HOT_TS, 1), 6000);      /* 1000000 ps + 5000000 ps */
    CHECK_EQ_I(ROW(b, int64_t, HOT_DUR, 1), 2500);
    CHECK_EQ_S(tl_build_strget(b, ROW(b, uint32_t, HOT_NAME, 1), NULL), "my_kernel");
    CHECK_EQ_S(tl_build_strget(b, ROW(b, uint32_t, HOT_CAT, 1), NULL), "kernel");
    CHECK_EQ_I(ROW(b, uint8_t, HOT_KIND, 1), TL_K_KERNEL);
    CHECK_EQ_I(ROW(b, int64_t, HOT_CORR, 1), 42);
    CHECK_EQ_I(ROW(b, uint32_t, HOT_UID, 0), 0);
    CHECK_EQ_I(ROW(b, uint32_t, HOT_UID, 2), 2);
    const char *a = args_of(b, 1);
    CHECK(strstr(a, "\"long_name\":\"my_kernel_long_name\"") != NULL);
    CHECK(strstr(a, "\"hlo_op\":\"fusion.1\"") != NULL);
    CHECK(strstr(a, "kernel_details") == NULL); /* internal stat */
    CHECK_EQ_I(ROW(b, int64_t, HOT_PID, 2), 701);
    CHECK_EQ_I(ROW(b, int64_t, HOT_TID, 2), (uint32_t)-5);
    CHECK_EQ_S(tl_build_strget(b, ROW(b, uint32_t, HOT_CAT, 2), NULL), "Unknown");
    CHECK_EQ_I(ROW(b, uint8_t, HOT_KIND, 2), TL_K_RUNTIME);
    CHECK_EQ_I(ROW(b, int64_t, HOT_CORR, 2), 42);
    /* metadata: process_name, process_sort_index, thread_name, thread_sort_index per pid */
    CHECK_EQ_I(b->nmeta, 8);
    CHECK_EQ_I(b->m_uid.v[0], 3);
    tl_build_free(b);

    /* A space whose planes have no lines: clear error. */
    Tlxp__XPlane *only_meta[1] = {&meta};
    sp.n_planes = 1; sp.planes = only_meta;
    n = tlxp__xspace__get_packed_size(&sp);
    tlxp__xspace__pack(&sp, buf);
    b = tl_build_new();
    CHECK(tl_xplane_parse(buf, n, "/x/empty.xplane.pb", b, &err) != 0);
    CHECK(strstr(err.msg, "/x/empty.xplane.pb") && strstr(err.msg, "no trace events"));
    tl_build_free(b);
    free(buf);
}

static void expect_fail(const void *buf, size_t n, const char *what)
{
    tl_build *b = tl_build_new();
    tl_err err = {0};
    int rc = tl_xplane_parse(buf, n, "/data/bad.xplane.pb", b, &err);
    tl_test_checks++;
    if (rc == 0 || !strstr(err.msg, "/data/bad.xplane.pb")) {
        tl_test_failures++;
        fprintf(stderr, "%s: expected an error naming the file, got rc %d \"%s\"\n", what, rc, err.msg);
    }
    tl_build_free(b);
}

static void test_bad_inputs(void)
{
    const char *json = "{\"traceEvents\": []}";
    expect_fail(json, strlen(json), "json");
    expect_fail("", 0, "empty");
    unsigned char junk[64];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 37 + 11);
    expect_fail(junk, sizeof junk, "junk");
    /* A well-formed protobuf of another message: field 1 holds a string
     * that is not an XPlane. */
    const unsigned char other[] = {0x0a, 0x05, 'h', 'e', 'l', 'l', 'o'};
    expect_fail(other, sizeof other, "other message");
    CHECK(!tl_xplane_sniff(json, strlen(json)));
}

static void test_report_helpers(void)
{
    CHECK_EQ_S(tl_jax_kernel_category("Im3d2Col", "cudnn-conv.1.0"), "Conv");
    CHECK_EQ_S(tl_jax_kernel_category("Cijk_Ailk_Bljk", "cudnn-conv.1.0"), "Conv");
    CHECK_EQ_S(tl_jax_kernel_category("Cijk_Ailk_Bljk", NULL), "GEMM");
    CHECK_EQ_S(tl_jax_kernel_category("ck_tile::FmhaBwdKernel", "gemm_fusion"), "FA BWD");
    CHECK_EQ_S(tl_jax_kernel_category("loop_transpose_fusion", "loop_transpose_fusion"), "Uncategorized Events/XLA");
    CHECK_EQ_I(tl_jax_event_class("CopyDeviceToDevice"), TL_JAX_MEMCPY);
    CHECK_EQ_I(tl_jax_event_class("__amd_rocclr_copyBuffer.kd"), TL_JAX_COMP);
    CHECK_EQ_I(tl_jax_event_class("ncclAllReduce"), TL_JAX_COMM);
    /* comp [0,10] [5,12]; comm [11,20]; memcpy [19,30] */
    double s[4] = {0, 5, 11, 19}, e[4] = {10, 12, 20, 30}, m[8];
    unsigned char c[4] = {TL_JAX_COMP, TL_JAX_COMP, TL_JAX_COMM, TL_JAX_MEMCPY};
    CHECK_EQ_I(tl_jax_timeline(s, e, c, 4, m), 0);
    CHECK_NEAR(m[0], 12, 1e-12); /* computation */
    CHECK_NEAR(m[1], 8, 1e-12);  /* exposed comm: [12,20] */
    CHECK_NEAR(m[2], 10, 1e-12); /* exposed memcpy: [20,30] */
    CHECK_NEAR(m[3], 30, 1e-12);
    CHECK_NEAR(m[4], 0, 1e-12);
    CHECK_NEAR(m[5], 30, 1e-12);
    CHECK_NEAR(m[0] + m[1] + m[2] + m[4], m[5], 1e-9);
    CHECK(tl_jax_timeline(s, e, c, 0, m) != 0);
}

static void test_samples(const char *legacy, const char *v08, const char *te)
{
    size_t n;
    char *buf = tl_test_slurp(legacy, &n);
    CHECK(buf != NULL);
    if (!buf) return;
    CHECK(tl_xplane_sniff(buf, n));
    tl_build *b = tl_build_new();
    tl_err err = {0};
    CHECK_EQ_I(tl_xplane_parse(buf, n, legacy, b, &err), 0);
    /* 53 memcpys (pid 1), 25 kernels (pid 8), host events minus 460 internal */
    CHECK_EQ_I(b->n, 5564);
    size_t kernels = 0, memcpys = 0;
    for (size_t i = 0; i < b->n; i++) {
        kernels += ROW(b, uint8_t, HOT_KIND, i) == TL_K_KERNEL;
        memcpys += ROW(b, uint8_t, HOT_KIND, i) == TL_K_MEMCPY;
    }
    CHECK_EQ_I(kernels, 25);
    CHECK_EQ_I(memcpys, 53);
    long r = find_row(b, "loop_transpose_fusion");
    CHECK(r == 53);
    if (r >= 0) {
        CHECK_EQ_I(ROW(b, uint32_t, HOT_UID, r), 53);
        CHECK_EQ_I(ROW(b, int64_t, HOT_PID, r), 8);
        CHECK_EQ_I(ROW(b, int64_t, HOT_TID, r), 1);
        CHECK_EQ_I(ROW(b, int64_t, HOT_TS, r), 1635859993);
        CHECK_EQ_I(ROW(b, int64_t, HOT_DUR, r), 6890);
        CHECK_EQ_I(ROW(b, int64_t, HOT_CORR, r), 171);
        CHECK(strstr(args_of(b, (size_t)r), "\"hlo_module\":\"jit_forward_3d_conv\"") != NULL);
    }
    /* first runtime parent with correlation 171 is 20.942 µs earlier */
    for (size_t i = 0; i < b->n; i++)
        if (ROW(b, int64_t, HOT_PID, i) == 701 && ROW(b, int64_t, HOT_CORR, i) == 171) CHECK_EQ_I(ROW(b, int64_t, HOT_TS, i), 1635859993 - 20942);
    tl_build_free(b);

    tl_buf hb = {0};
    CHECK_EQ_I(tl_xplane_hlo_blob(buf, n, legacy, &hb, &err), 0);
    tl_buf_putc(&hb, 0);
    CHECK(strstr(hb.p, "M\t15\tjit_forward_3d_conv\tmain.4_spmd\n") != NULL);
    CHECK(strstr(hb.p, "R\t%cudnn-conv.1.0\t(bf16[1,5120,34,31,53]{4,3,2,1,0},u8[7150336]{0})\t"
                       "custom_call_target=\"__cudnn$convForward\"\tmetadata={op_name=\"jit(forward_3d_conv)/"
                       "jit(main)/conv_general_dilated\" source_file=\"/workspace/conv-jax/jax_conv_profiling.py\" "
                       "source_line=77\tbackend_config={") != NULL);
    CHECK(strstr(hb.p, "\tbf16[1,16,32,60,104]{4,3,2,1,0}\x1f" "bf16[5120,16,1,2,2]{4,3,2,1,0}\n") != NULL);
    CHECK(strstr(hb.p, "R\t%loop_transpose_fusion\tbf16[5120,16,4]{2,1,0}\t\tmetadata={op_name=\"kernel\"\t\t"
                       "bf16[1,2,2,16,5120]{4,3,2,1,0}\n") != NULL);
    CHECK(strstr(hb.p, "R\t%bitcast.32.0\t") == NULL); /* ROOT: never recorded */
    tl_buf_free(&hb);

    /* Truncations of a real file fail cleanly (or, cut at a message
     * boundary, still decode) — never crash. */
    size_t cuts[] = {1, 2, 10, 100, 1000, n / 2, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        tl_build *t = tl_build_new();
        tl_err e2 = {0};
        int rc = tl_xplane_parse(buf, cuts[i], "/data/cut.xplane.pb", t, &e2);
        CHECK(rc == 0 || strstr(e2.msg, "/data/cut.xplane.pb"));
        tl_build_free(t);
    }
    /* flipped bytes */
    for (size_t i = 0; i < 32; i++) {
        char *c = malloc(n);
        memcpy(c, buf, n);
        c[(i * 7919) % n] ^= (char)(0x5a + i);
        tl_build *t = tl_build_new();
        tl_err e2 = {0};
        int rc = tl_xplane_parse(c, n, "/data/flip.xplane.pb", t, &e2);
        CHECK(rc == 0 || strstr(e2.msg, "/data/flip.xplane.pb"));
        tl_build_free(t);
        free(c);
    }
    free(buf);

    const char *others[2] = {v08, te};
    for (int f = 0; f < 2; f++) {
        if (!others[f]) continue;
        buf = tl_test_slurp(others[f], &n);
        CHECK(buf != NULL);
        if (!buf) continue;
        b = tl_build_new();
        CHECK_EQ_I(tl_xplane_parse(buf, n, others[f], b, &err), 0);
        size_t k = 0;
        for (size_t i = 0; i < b->n; i++) k += ROW(b, uint8_t, HOT_KIND, i) == TL_K_KERNEL;
        CHECK(k > 0);
        tl_build_free(b);
        free(buf);
    }
}

int main(void)
{
    test_synthetic();
    test_bad_inputs();
    test_report_helpers();
    /* tl_test_data returns a static buffer: copy each path. */
    const char *p;
    char *legacy = (p = tl_test_data("jax/jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb")) ? strdup(p) : NULL;
    char *v08 = (p = tl_test_data("jax/jax_conv_minimal_08/tw003.xplane.pb")) ? strdup(p) : NULL;
    char *te = (p = tl_test_data("jax/te_fused_attn.xplane.pb")) ? strdup(p) : NULL;
    if (!legacy) {
        int rc = tl_test_done("test_xplane");
        fprintf(stderr, "test_xplane: shared data not found; sample checks skipped\n");
        return rc ? rc : 77;
    }
    test_samples(legacy, v08, te);
    free(legacy);
    free(v08);
    free(te);
    return tl_test_done("test_xplane");
}
