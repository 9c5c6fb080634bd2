/* gemm.c — GEMM-family models (perf-models.md §5.1 core, §5.11 extension
 * GEMMs): shape parsing per op signature, F = 2·M·N·K (+M·N bias), bytes
 * Y = M·K·a + K·N·b + M·N·o + N·c with the per-model element widths, and
 * the shared tail every GEMM gets: B = 1 appended when missing, then the
 * transpose flags read from the first Tensile/hipBLASLt or nvjet kernel. */
#include "query/perfmodel/pm_internal.h"

#include <string.h>

/* bytes-per-element slots: NULL means unknown (-> bytes unknown) */
typedef struct bpe_slot {
    int known;
    pnum v;
} bpe_slot;

static bpe_slot bpe_of(const char *dtype)
{
    bpe_slot s = {0, PN_I(0)};
    int b = pm_bpe(dtype);
    if (b) { s.known = 1; s.v = PN_I(b); }
    return s;
}
static bpe_slot bpe_int(int b) { bpe_slot s = {1, PN_I(b)}; return s; }
static bpe_slot bpe_half(void) { bpe_slot s = {1, PN_F(0.5)}; return s; }

static pnum gemm_F(pnum M, pnum N, pnum K, int bias)
{
    pnum f = pn_mul(pn_mul(pn_mul(PN_I(2), M), N), K);
    return pn_add(f, bias ? pn_mul(M, N) : PN_I(0));
}

/* Bytes moved: A (M·K), B (K·N), the output (M·N) and an added operand C
 * of c_rows × N elements (1 row: a bias vector; M rows: an accumulated
 * matrix), each at its own width. Returns 0 when any width is unknown. */
static int gemm_bytes_rows(pnum *out, pnum M, pnum N, pnum K, pnum c_rows, bpe_slot a, bpe_slot b, bpe_slot c,
                           bpe_slot o)
{
    if (!a.known || !b.known || !c.known || !o.known) return 0;
    pnum y = pn_mul(pn_mul(M, K), a.v);
    y = pn_add(y, pn_mul(pn_mul(K, N), b.v));
    y = pn_add(y, pn_mul(pn_mul(M, N), o.v));
    y = pn_add(y, pn_mul(pn_mul(c_rows, N), c.v));
    *out = y;
    return 1;
}

/* Y(M,N,K,bias,a,b,c,o) of the spec: the bias is a vector of N elements. */
static int gemm_Y(pnum *out, pnum M, pnum N, pnum K, int bias, bpe_slot a, bpe_slot b, bpe_slot c,
                  bpe_slot o)
{
    return gemm_bytes_rows(out, M, N, K, PN_I(bias ? 1 : 0), a, b, c, o);
}

static void set_bytes(pm_out *out, int known, pnum v)
{
    out->has_bytes = known;
    if (known) out->bytes = v;
}

/* ---- transpose detection (§5.1) ------------------------------------------ */

static int tensile_match(const char *name)
{
    /* ^.*C[a-z]{3}_A[a-z]{3}_B[a-z]{3}.*$ : a substring test */
    size_t n = strlen(name);
    for (size_t i = 0; i + 15 <= n; i++) {
        const char *p = name + i;
        if (p[0] != 'C' || p[4] != '_' || p[5] != 'A' || p[9] != '_' || p[10] != 'B') continue;
        int ok = 1;
        static const int lows[] = {1, 2, 3, 6, 7, 8, 11, 12, 13};
        for (size_t k = 0; k < 9; k++)
            if (!(p[lows[k]] >= 'a' && p[lows[k]] <= 'z')) ok = 0;
        if (ok) return 1;
    }
    return 0;
}

static void gemm_transpose(pm_in *in, pm_out *out)
{
    const tl_pm_args *a = in->args;
    for (size_t i = 0; a && i < a->nkernels; i++) {
        const char *k = a->kernel_names[i];
        if (!k) continue;
        if (tensile_match(k)) {
            tl_pv *ta = strstr(k, "_Ailk_") ? pm_v_bool(in, 0) : strstr(k, "_Alik_") ? pm_v_bool(in, 1) : NULL;
            tl_pv *tb = strstr(k, "_Bljk_") ? pm_v_bool(in, 0) : strstr(k, "_Bjlk_") ? pm_v_bool(in, 1) : NULL;
            pm_param(in, out, "transpose", pm_v_tup(in, 2, ta, tb));
            return;
        }
        if (strncmp(k, "nvjet", 5) == 0) {
            const char *tail = strrchr(k, '_');
            tail = tail ? tail + 1 : k;
            /* the reference indexes tail[0] and tail[1]: a shorter tail raises */
            if (strlen(tail) < 2) pm_raise(in, "nvjet kernel name without layout suffix");
            pm_param(in, out, "transpose",
                     pm_v_tup(in, 2, pm_v_bool(in, tail[0] == 'T'), pm_v_bool(in, tail[1] == 'T')));
            return;
        }
    }
}

static void gemm_tail(pm_in *in, pm_out *out)
{
    if (pm_find_param(out, "B") < 0) pm_param(in, out, "B", pm_v_int(in, 1));
    gemm_transpose(in, out);
}

/* ---- helpers -------------------------------------------------------------- */

static const char *type_or(pm_in *in, long i, const char *dflt)
{
    if (!tl_pv_is_seq(in->types) || i >= (long)tl_pv_len(in->types)) return dflt;
    const tl_pv *v = tl_pv_at(in->types, i);
    if (!v || v->kind != TL_PV_STR) return dflt;
    if (!*v->u.s.p && dflt) return dflt; /* Python `x or default` */
    return v->u.s.p;
}

static int dims_nonempty(pm_in *in, long i)
{
    const tl_pv *d = tl_pv_at(in->dims, i);
    return (long)tl_pv_len(in->dims) > i && tl_pv_is_seq(d) && tl_pv_len(d) > 0;
}

static void std_params(pm_in *in, pm_out *out, pnum M, pnum N, pnum K, int bias, long sa, long sb,
                       tl_pv *dtypes)
{
    pm_param(in, out, "M", pm_v_pn(in, M));
    pm_param(in, out, "N", pm_v_pn(in, N));
    pm_param(in, out, "K", pm_v_pn(in, K));
    pm_param(in, out, "bias", pm_v_bool(in, bias));
    pm_param(in, out, "stride_A", pm_v_tuple(in, pm_stride_opt(in, sa)));
    pm_param(in, out, "stride_B", pm_v_tuple(in, pm_stride_opt(in, sb)));
    pm_param(in, out, "dtype_A_B", dtypes);
}

/* mm / addmm / scaled_mm / tev2 / dynamic-quant: 2-D A and B */
static int gemm_2d(pm_in *in, pm_out *out)
{
    long ia = 0, ib = 1;
    int bias = 0;
    const tl_pv *A, *Bm;
    pnum M, N, K;
    const char *t0, *t1;
    bpe_slot a, b, c, o;
    switch (in->id) {
    case PM_ADDMM:
        ia = 1, ib = 2, bias = 1;
        break;
    case PM_SCALED_MM:
        bias = pm_ndims(in) == 3;
        break;
    default:
        break;
    }
    if (in->id == PM_GEMM_DYNQ) {
        /* first two 2-element entries of Dims are A and B */
        long found[2] = {-1, -1};
        int nf = 0;
        for (size_t i = 0; i < pm_ndims(in) && nf < 2; i++) {
            const tl_pv *d = tl_pv_at(in->dims, (long)i);
            if (tl_pv_is_seq(d) && tl_pv_len(d) == 2) found[nf++] = (long)i;
        }
        A = pm_dims(in, nf == 2 ? found[0] : 0);
        Bm = pm_dims(in, nf == 2 ? found[1] : 1);
        if (pm_len(in, A) != 2 || pm_len(in, Bm) != 2) pm_raise(in, "dynamic-quant GEMM needs 2-D operands");
        if (pm_ntypes(in) < 2) pm_raise(in, "dynamic-quant GEMM needs two dtypes");
        M = PN_I(pm_dim(in, A, 0));
        K = PN_I(pm_dim(in, A, 1));
        N = PN_I(pm_dim(in, Bm, 0));
    } else {
        A = pm_dims(in, ia);
        Bm = pm_dims(in, ib);
        M = PN_I(pm_dim(in, A, 0));
        K = PN_I(pm_dim(in, A, 1));
        N = PN_I(pm_dim(in, Bm, 1));
    }
    t0 = pm_type(in, ia);
    t1 = pm_type(in, ib);
    a = bpe_of(t0);
    if (in->id == PM_SCALED_MM) {
        if (!pm_bpe(t0) || !pm_bpe(t1)) pm_raise(in, "scaled_mm with unknown dtype");
        b = c = a;
        int w = pm_bpe(t0);
        o = w == 1 ? bpe_int(2) : (w == 2 || w == 4) ? a : bpe_of(NULL);
    } else if (in->id == PM_TEV2_PSEUDO) {
        if (strcmp(t0, t1) != 0) pm_raise(in, "TE pseudo GEMM with mixed dtypes");
        b = c = a;
        o = bpe_int(2);
    } else {
        /* mixed dtypes only warn: the first one is charged for every operand */
        b = c = o = a;
    }
    std_params(in, out, M, N, K, bias, ia, ib, pm_v_tup(in, 2, pm_v_str(in, t0), pm_v_str(in, t1)));
    out->flops = gemm_F(M, N, K, bias);
    pnum y;
    set_bytes(out, gemm_Y(&y, M, N, K, bias, a, b, c, o), y);
    out->maf = "matrix";
    out->cs_dtype = t0;
    return PM_OK;
}

static int gemm_bmm(pm_in *in, pm_out *out)
{
    long ia = in->id == PM_BADDBMM ? 1 : 0, ib = ia + 1;
    int bias = in->id == PM_BADDBMM;
    const tl_pv *A = pm_dims(in, ia), *Bm = pm_dims(in, ib);
    if (pm_len(in, A) != 3) pm_raise(in, "bmm operand is not 3-D");
    pnum Bt = PN_I(pm_dim(in, A, 0)), M = PN_I(pm_dim(in, A, 1)), K = PN_I(pm_dim(in, A, 2));
    pnum N = PN_I(pm_dim(in, Bm, 2));
    const char *t0 = pm_type(in, ia), *t1 = pm_type(in, ib);
    bpe_slot a = bpe_of(t0);
    pm_param(in, out, "B", pm_v_pn(in, Bt));
    std_params(in, out, M, N, K, bias, ia, ib, pm_v_tup(in, 2, pm_v_str(in, t0), pm_v_str(in, t1)));
    out->flops = pn_mul(Bt, gemm_F(M, N, K, bias));
    pnum y;
    int known = gemm_Y(&y, M, N, K, bias, a, a, a, a);
    set_bytes(out, known, known ? pn_mul(Bt, y) : y);
    out->maf = "matrix";
    out->cs_dtype = t0;
    return PM_OK;
}

static int gemm_te_ts(pm_in *in, pm_out *out)
{
    const tl_pv *A = pm_dims(in, 0), *Bm = pm_dims(in, 5);
    int ta = strcmp(pm_ci(in, 4), "1") == 0, tb = strcmp(pm_ci(in, 9), "1") == 0;
    pnum M = PN_I(pm_dim(in, A, ta ? 0 : 1)), K = PN_I(pm_dim(in, A, ta ? 1 : 0));
    pnum N = PN_I(pm_dim(in, Bm, tb ? 1 : 0));
    int bias = strcmp(pm_ci(in, 14), "") != 0;
    const char *t0 = pm_type(in, 0), *t5 = pm_type(in, 5), *t10 = pm_type(in, 10), *t18 = pm_type(in, 18);
    std_params(in, out, M, N, K, bias, 0, 5,
               pm_v_tup(in, 4, pm_v_str(in, t0), pm_v_str(in, t5), pm_v_str(in, t10), pm_v_str(in, t18)));
    out->flops = gemm_F(M, N, K, bias);
    pnum y;
    set_bytes(out, gemm_Y(&y, M, N, K, bias, bpe_of(t0), bpe_of(t5), bpe_of(t18), bpe_of(t10)), y);
    out->maf = "matrix";
    out->cs_dtype = t0;
    return PM_OK;
}

/* fp4 bytes: packed operands plus one scale per 32 elements of K */
static pnum fp4_bytes(pnum M, pnum N, pnum K, int wa, int wb, const char *sa_t, const char *sb_t)
{
    pnum k2 = pn_fdiv(K, PN_I(2));
    pnum s = pn_fdiv(pn_add(K, PN_I(31)), PN_I(32)); /* ceil(K / 32), K >= 0 */
    if (pn_cmp(K, PN_I(0)) < 0) s = pn_sub(PN_I(0), pn_fdiv(pn_sub(PN_I(0), K), PN_I(32)));
    int sa = pm_bpe(sa_t) ? pm_bpe(sa_t) : 1, sb = pm_bpe(sb_t) ? pm_bpe(sb_t) : 1;
    pnum y = pn_mul(pn_mul(M, k2), PN_I(wa));
    y = pn_add(y, pn_mul(pn_mul(N, k2), PN_I(wb)));
    y = pn_add(y, pn_mul(pn_mul(M, s), PN_I(sa)));
    y = pn_add(y, pn_mul(pn_mul(N, s), PN_I(sb)));
    y = pn_add(y, pn_mul(pn_mul(PN_I(2), M), N));
    return y;
}

static const char *type_opt(pm_in *in, long i)
{
    if (!tl_pv_is_seq(in->types) || i >= (long)tl_pv_len(in->types)) return NULL;
    const tl_pv *v = tl_pv_at(in->types, i);
    return v && v->kind == TL_PV_STR ? v->u.s.p : NULL;
}

static int gemm_hipblaslt(pm_in *in, pm_out *out)
{
    const tl_pv *A, *Bm;
    int ta = 0, tb = 0;
    long ib = 2;
    if (in->id == PM_AITER_A4W4) {
        ib = 1;
        A = pm_dims(in, 0);
        Bm = pm_dims(in, 1);
    } else {
        A = pm_dims(in, 0);
        Bm = pm_dims(in, 2);
        ta = pm_parse_bool_text(pm_ci_opt(in, 5));
        tb = pm_parse_bool_text(pm_ci_opt(in, 6));
        int tc = pm_parse_bool_text(pm_ci_opt(in, 7));
        if (tc) {
            const tl_pv *t = A;
            A = Bm;
            Bm = t;
            int nta = !tb, ntb = !ta;
            ta = nta;
            tb = ntb;
        }
    }
    pnum M, N, K;
    if (in->id == PM_AITER_A4W4) {
        M = PN_I(pm_dim(in, A, 0));
        K = pn_mul(PN_I(2), PN_I(pm_dim(in, A, 1)));
        N = PN_I(pm_dim(in, Bm, 0));
    } else {
        M = PN_I(pm_dim(in, A, ta ? 1 : 0));
        K = PN_I(pm_dim(in, A, ta ? 0 : 1));
        if (in->id == PM_HIPBLASLT_FP4) K = pn_mul(PN_I(2), K);
        N = PN_I(pm_dim(in, Bm, tb ? 0 : 1));
    }
    const char *t0 = pm_type(in, 0), *tB = pm_type(in, ib);
    const char *sa_t = in->id == PM_AITER_A4W4 ? type_opt(in, 2) : type_opt(in, 1);
    const char *sb_t = type_opt(in, 3);
    std_params(in, out, M, N, K, 0, 0, ib, pm_v_tup(in, 2, pm_v_str(in, t0), pm_v_str(in, tB)));
    pm_param(in, out, "dtype_scaleA", pm_v_str(in, sa_t));
    pm_param(in, out, "dtype_scaleB", pm_v_str(in, sb_t));
    int wa = pm_bpe(t0), wb = pm_bpe(tB);
    if (!wa || !wb) pm_raise(in, "hipBLASLt GEMM with unknown dtype");
    out->flops = gemm_F(M, N, K, 0);
    if (in->id == PM_HIPBLASLT_FP8) {
        pnum y;
        set_bytes(out, gemm_Y(&y, M, N, K, 0, bpe_int(wa), bpe_int(wb), bpe_int(wa), bpe_int(wa == 1 ? 2 : wa)), y);
    } else {
        set_bytes(out, 1, fp4_bytes(M, N, K, wa, wb, sa_t, sb_t));
    }
    out->maf = "matrix";
    out->cs_dtype = t0;
    return PM_OK;
}

/* ---- extension GEMMs (§5.11) ------------------------------------------------ */

static tl_pv *ceil_div_or_none(pm_in *in, pnum num, const tl_pv *div)
{
    if (!div || div->kind != TL_PV_INT || div->u.i.big || div->u.i.v == 0) return NULL;
    pnum d = PN_I(div->u.i.v);
    /* math.ceil(num / d) */
    pnum q = pn_fdiv(num, d);
    if (pn_cmp(pn_mul(q, d), num) != 0) q = pn_add(q, PN_I(1));
    return pm_v_pn(in, q);
}

static int gemm_ext(pm_in *in, pm_out *out)
{
    const tl_pv *d0 = pm_dims(in, 0), *d1 = pm_dims(in, 1);
    pnum Bt = PN_I(1), M, N, K;
    int bias = 0;
    bpe_slot a, b, c, o;
    const char *cs_dtype;
    out->maf = "matrix";
    switch (in->id) {
    case PM_A8W8_BLOCKSCALE: {
        M = PN_I(pm_dim(in, d0, 0));
        K = PN_I(pm_dim(in, d0, 1));
        N = PN_I(pm_dim(in, d1, 0));
        const char *t0 = type_or(in, 0, ""), *t1 = type_or(in, 1, "");
        a = bpe_of(t0), b = bpe_of(t1), c = o = bpe_int(2);
        pm_param(in, out, "B", pm_v_int(in, 1));
        pm_param(in, out, "M", pm_v_pn(in, M));
        pm_param(in, out, "N", pm_v_pn(in, N));
        pm_param(in, out, "K", pm_v_pn(in, K));
        pm_param(in, out, "bias", pm_v_bool(in, 0));
        pm_param(in, out, "dtype_A_B",
                 pm_v_tup(in, 3, pm_v_str(in, t0), pm_v_str(in, t1), pm_v_str(in, "c10::bfloat16")));
        if (pm_ndims(in) > 3) {
            const tl_pv *d2 = pm_dims(in, 2), *d3 = pm_dims(in, 3);
            pm_param(in, out, "quant_scheme", pm_v_str(in, "a8w8_blockscale"));
            pm_param(in, out, "quant_granularity", pm_v_str(in, "per_block"));
            pm_param(in, out, "block_k", ceil_div_or_none(in, K, tl_pv_at(d2, -1)));
            pm_param(in, out, "block_n", ceil_div_or_none(in, N, tl_pv_at(d3, 0)));
            pm_param(in, out, "scale_dtype", pm_v_str(in, type_or(in, 2, "float32")));
        }
        pm_param(in, out, "output_shape", pm_v_tup(in, 2, pm_v_pn(in, M), pm_v_pn(in, N)));
        pm_param(in, out, "output_dtype", pm_v_str(in, "c10::bfloat16"));
        cs_dtype = t0;
        break;
    }
    case PM_ROCM_UNQUANT: {
        M = PN_I(pm_dim(in, d0, 0));
        N = PN_I(pm_dim(in, d1, 0));
        K = PN_I(pm_dim(in, d0, 1));
        bias = pm_ndims(in) > 2 && dims_nonempty(in, 2);
        const char *t0 = pm_type(in, 0), *t1 = pm_type(in, 1);
        const char *t2 = pm_ntypes(in) > 2 ? pm_type(in, 2) : "";
        a = bpe_of(t0), b = bpe_of(t1), c = o = bias ? bpe_of(t2) : bpe_of(t1);
        pm_param(in, out, "M", pm_v_pn(in, M));
        pm_param(in, out, "N", pm_v_pn(in, N));
        pm_param(in, out, "K", pm_v_pn(in, K));
        pm_param(in, out, "bias", pm_v_bool(in, bias));
        pm_param(in, out, "dtype_A_B", pm_v_tup(in, 3, pm_v_str(in, t0), pm_v_str(in, t1), pm_v_str(in, t2)));
        cs_dtype = t0;
        break;
    }
    case PM_A16W16_ATOMIC:
    case PM_A16W16:
    case PM_A16W16_ASM: {
        M = PN_I(pm_dim(in, d0, 0));
        N = PN_I(pm_dim(in, d1, 0));
        K = PN_I(pm_dim(in, d0, 1));
        const char *t0 = pm_type(in, 0), *t1 = pm_type(in, 1), *t2;
        if (in->id == PM_A16W16) {
            bias = pm_ndims(in) > 2 && dims_nonempty(in, 2);
            t2 = t0;
        } else if (in->id == PM_A16W16_ATOMIC) {
            t2 = pm_ntypes(in) > 3 ? pm_type(in, 3) : "c10::bfloat16";
        } else {
            const char *x = type_opt(in, 2);
            t2 = pm_bpe(x) ? x : t0;
        }
        a = bpe_of(t0), b = bpe_of(t1), c = o = bpe_of(t2);
        pm_param(in, out, "B", pm_v_int(in, 1));
        pm_param(in, out, "M", pm_v_pn(in, M));
        pm_param(in, out, "N", pm_v_pn(in, N));
        pm_param(in, out, "K", pm_v_pn(in, K));
        pm_param(in, out, "bias", pm_v_bool(in, bias));
        pm_param(in, out, "dtype_A_B", pm_v_tup(in, 3, pm_v_str(in, t0), pm_v_str(in, t1), pm_v_str(in, t2)));
        cs_dtype = t0;
        break;
    }
    case PM_AFP4WFP4:
    case PM_BATCHED_A16WFP4:
    case PM_SGL_BATCHED_A8W8: {
        const char *t0 = pm_type(in, 0), *t1 = pm_type(in, 1);
        if (in->id == PM_AFP4WFP4) {
            M = PN_I(pm_dim(in, d0, 0));
            N = PN_I(pm_dim(in, d1, 0));
            K = pn_mul(PN_I(2), PN_I(pm_dim(in, d0, 1)));
            a = b = bpe_half();
            c = o = bpe_int(2);
            out->cs_prec = "fp4";
        } else if (in->id == PM_BATCHED_A16WFP4) {
            Bt = PN_I(pm_dim(in, d0, 0));
            M = PN_I(pm_dim(in, d0, 1));
            N = PN_I(pm_dim(in, d1, 1));
            K = PN_I(pm_dim(in, d0, 2));
            a = bpe_of(t0), b = bpe_half(), c = o = bpe_int(2);
            out->cs_prec = "fp4";
        } else {
            Bt = PN_I(pm_dim(in, d1, 0));
            N = PN_I(pm_dim(in, d1, 1));
            K = PN_I(pm_dim(in, d0, 2));
            M = PN_I(pm_dim(in, d0, 0));
            if (pn_cmp(M, Bt) == 0) M = PN_I(pm_dim(in, d0, 1));
            a = bpe_of(t0), b = bpe_of(t1), c = o = bpe_int(2);
        }
        pm_param(in, out, "B", pm_v_pn(in, Bt));
        pm_param(in, out, "M", pm_v_pn(in, M));
        pm_param(in, out, "N", pm_v_pn(in, N));
        pm_param(in, out, "K", pm_v_pn(in, K));
        pm_param(in, out, "bias", pm_v_bool(in, 0));
        pm_param(in, out, "dtype_A_B",
                 pm_v_tup(in, 3, pm_v_str(in, t0), pm_v_str(in, t1), pm_v_str(in, "c10::bfloat16")));
        cs_dtype = in->id == PM_SGL_BATCHED_A8W8 ? t1 : t0;
        break;
    }
    default:
        pm_raise(in, "unknown GEMM model");
    }
    out->flops = pn_mul(Bt, gemm_F(M, N, K, bias));
    pnum y;
    int known = gemm_Y(&y, M, N, K, bias, a, b, c, o);
    set_bytes(out, known, known ? pn_mul(Bt, y) : y);
    out->cs_dtype = cs_dtype;
    return PM_OK;
}

int pm_gemm(pm_in *in, pm_out *out)
{
    /* GEMM sheets are single-table: backward formulas are not implemented */
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    int rc;
    switch (in->id) {
    case PM_MM:
    case PM_ADDMM:
    case PM_SCALED_MM:
    case PM_TEV2_PSEUDO:
    case PM_GEMM_DYNQ:
        rc = gemm_2d(in, out);
        break;
    case PM_BMM:
    case PM_BADDBMM:
        rc = gemm_bmm(in, out);
        break;
    case PM_TE_GEMM_TS:
        rc = gemm_te_ts(in, out);
        break;
    case PM_HIPBLASLT_FP8:
    case PM_HIPBLASLT_FP4:
    case PM_AITER_A4W4:
        rc = gemm_hipblaslt(in, out);
        break;
    default:
        rc = gemm_ext(in, out);
        break;
    }
    if (rc == PM_OK) gemm_tail(in, out);
    return rc;
}

/* ---- plain shapes (perfmodel.h) ------------------------------------------- */

void tl_pm_gemm_counts(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t c_rows, int bpe,
                       tl_pm_counts *out)
{
    pnum B = PN_I(batch), M = PN_I(m), N = PN_I(n), K = PN_I(k);
    out->flops = pn_d(pn_mul(B, gemm_F(M, N, K, c_rows != 0)));
    pnum y;
    bpe_slot w = bpe ? bpe_int(bpe) : bpe_of(NULL);
    out->has_bytes = gemm_bytes_rows(&y, M, N, K, PN_I(c_rows), w, w, w, w);
    out->bytes = out->has_bytes ? pn_d(pn_mul(B, y)) : 0;
}
