/* inference_attention.c — the reference's InferenceAttention model of
 * serving-engine attention calls (vllm::unified_attention_with_output,
 * aiter::mha_varlen_fwd, pseudo_mla_decode_fwd; with d_h_v read from the
 * v tensor: aiter::fmha_v3_varlen_fwd, aiter::mha_batch_prefill,
 * pseudo_mla_prefill_fwd; paged, below: aiter_paged_attention_ragged of
 * sglang_profiler::attention_paged_attention_ragged). A call covers a whole batch of requests, so its
 * cost comes from the step annotation around it (tl_pm_args.annotation),
 * which carries the batch's sums over context (prefill) and generation
 * (decode) requests: sq, sk, sq·sq and sq·sk. Three annotation forms carry
 * them (the first that matches wins):
 *
 *   vLLM   execute_<n>_context_<c>(sq<>sk<>sqsq<>sqsk<>)_generation_<g>(sq<>sk<>sqsq<>sqsk<>)
 *   SGLang step[EXTEND|DECODE|MIXED ... c_sq=<> ... g_sqsk=<> ...] (with sqsq=<digits>)
 *   ATOM   prefill[... tok=<> sk=<> sqsq=<> sqsk=<>] / decode[...]
 *
 * With q = Input Dims[0] = (N_Q, H_Q, d_qk), k = Input Dims[1] (last three:
 * N_KV, H_KV, d_v), H = H_Q:
 *   FLOPs = H·(2·c_sqsk·d_qk + 2·c_sqsk·d_v − c_sqsq·d_qk − c_sqsq·d_v)
 *         + H·(2·g_sqsk·d_qk + 2·g_sqsk·d_v)
 *   bytes = (c_sq + g_sq)·(H·d_qk + H·d_v + H_KV·d_qk + H_KV·d_v)·bpe(Q)
 *         + ((c_sk − c_sq) + (g_sk − g_sq))·H_KV·(d_qk + d_v)·bpe(KV)
 * (bpe of Input type[0], 2 when unknown; KV: Input type[1], else Q's).
 * No annotation with sq/sk, or args that do not fit: the model fails (the
 * reference's returns None and its row keeps empty metrics); c_sq = g_sq =
 * 0: "not implemented" (the reference drops the row). Compute Spec
 * matrix_<precision of Q>. No backward formulas.
 *
 * The paged call (SGLang's aiter::paged_attention_ragged) reads q from
 * Input Dims[2] (N_Q, H_Q, d_qk) and its type from Input type[2], the
 * paged caches [pages, page_size, H_KV, d] from Input Dims[3] (H_KV) and
 * [4] (d_v); N_KV = c_sk + g_sk, and the cached K/V are counted at Q's
 * bytes per element (no dtype_KV parameter). */
#include "query/perfmodel/pm_internal.h"

#include <ctype.h>
#include <string.h>

typedef struct chunk_stats {
    int64_t c_sq, c_sk, c_sqsq, c_sqsk, g_sq, g_sk, g_sqsq, g_sqsk;
} chunk_stats;

static int64_t safe_int(const char *s, size_t n)
{
    char buf[64];
    int64_t v;
    if (n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    return pm_py_int_text(buf, &v) == 0 ? v : 0;
}

static const char *digits(const char *s)
{
    const char *p = s;
    while (isdigit((unsigned char)*p)) p++;
    return p > s ? p : NULL;
}

static const char *lit(const char *s, const char *l)
{
    size_t n = strlen(l);
    return s && !strncmp(s, l, n) ? s + n : NULL;
}

/* "(sq<d>sk<d>sqsq<d>sqsk<d>)" */
static const char *sq_group(const char *p)
{
    static const char *const keys[] = {"(sq", "sk", "sqsq", "sqsk"};
    for (int i = 0; i < 4 && p; i++) p = digits(lit(p, keys[i]) ? lit(p, keys[i]) : "");
    return lit(p, ")");
}

static int vllm_detailed(const char *s)
{
    const char *p = digits(lit(s, "execute_") ? lit(s, "execute_") : "");
    p = p ? lit(p, "_context_") : NULL;
    p = p ? digits(p) : NULL;
    p = p ? sq_group(p) : NULL;
    p = p ? lit(p, "_generation_") : NULL;
    p = p ? digits(p) : NULL;
    return p && sq_group(p);
}

/* The vLLM form's fields by position: "(" and ")" become "_", so does every
 * run of s/q/k letters, and the text is split at "_"; each of those
 * separators ends one field (adjacent ones leave an empty field). */
static int vllm_fill(const char *s, chunk_stats *st)
{
    const char *tok[17];
    size_t len[17], nt = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        int sep = *p == '_' || *p == '(' || *p == ')';
        int run = *p == 's' || *p == 'q' || *p == 'k';
        if (!sep && !run && *p) continue;
        if (nt < 17) {
            tok[nt] = start;
            len[nt] = (size_t)(p - start);
        }
        nt++;
        if (!*p) break;
        if (run)
            while (p[1] == 's' || p[1] == 'q' || p[1] == 'k') p++;
        start = p + 1;
    }
    if (nt <= 16) return -1; /* the reference's p[16] raises IndexError */
    int64_t *f[] = {&st->c_sq, &st->c_sk, &st->c_sqsq, &st->c_sqsk, &st->g_sq, &st->g_sk, &st->g_sqsq, &st->g_sqsk};
    const int at[] = {5, 6, 7, 8, 13, 14, 15, 16};
    for (int i = 0; i < 8; i++) *f[i] = safe_int(tok[at[i]], len[at[i]]);
    return 0;
}

/* findall of key=value pairs: \w+ then "=" then, for SGLang, \d+; for ATOM
 * a bracketed list (optionally "...+N") or a run of non-space. Last key wins. */
static void kv_scan(const char *b, size_t n, int atom, const char *const *keys, int64_t *vals, int *seen, int nk)
{
    size_t i = 0;
    while (i < n) {
        if (!(isalnum((unsigned char)b[i]) || b[i] == '_')) { i++; continue; }
        size_t j = i;
        while (j < n && (isalnum((unsigned char)b[j]) || b[j] == '_')) j++;
        if (j >= n || b[j] != '=' || j + 1 >= n) { i = j; continue; }
        size_t v = j + 1, e = v;
        if (!atom) {
            while (e < n && isdigit((unsigned char)b[e])) e++;
        } else if (b[v] == '[' && memchr(b + v, ']', n - v)) {
            e = (size_t)((const char *)memchr(b + v, ']', n - v) - b) + 1;
            if (e + 4 < n && !strncmp(b + e, "...+", 4) && isdigit((unsigned char)b[e + 4]))
                for (e += 4; e < n && isdigit((unsigned char)b[e]); e++) {}
        } else {
            while (e < n && !isspace((unsigned char)b[e])) e++;
        }
        if (e == v) { i = j; continue; }
        for (int k = 0; k < nk; k++)
            if (strlen(keys[k]) == j - i && !strncmp(keys[k], b + i, j - i)) {
                vals[k] = safe_int(b + v, e - v);
                seen[k] = 1;
            }
        i = e;
    }
}

static int sglang_detailed(const char *s, chunk_stats *st)
{
    const char *p = lit(s, "step[");
    if (!p) return -1;
    const char *w = lit(p, "EXTEND") ? lit(p, "EXTEND") : lit(p, "DECODE") ? lit(p, "DECODE") : lit(p, "MIXED");
    if (!w || isalnum((unsigned char)*w) || *w == '_') return -1;
    const char *close = strchr(w, ']'), *q = w;
    int found = 0;
    while (close && (q = strstr(q, "sqsq=")) && q < close) {
        if (isdigit((unsigned char)q[5])) { found = 1; break; }
        q++;
    }
    if (!found) return -1;
    const char *open = strchr(s, '['), *last = strrchr(s, ']');
    static const char *const keys[] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk"};
    int64_t v[8] = {0};
    int seen[8] = {0};
    kv_scan(open + 1, (size_t)(last - open - 1), 0, keys, v, seen, 8);
    chunk_stats r = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    *st = r;
    return 0;
}

/* ATOM: prefill[...] fills the context sums, decode[...] the generation
 * ones; sq/sk present only with both sqsq= and sqsk= keys. */
static int atom(const char *s, chunk_stats *st)
{
    int prefill = lit(s, "prefill[") != NULL;
    const char *p = prefill ? lit(s, "prefill[") : lit(s, "decode[");
    const char *last = p ? strrchr(p, ']') : NULL;
    if (!last) return -1;
    static const char *const keys[] = {"tok", "sk", "sqsq", "sqsk"};
    int64_t v[4] = {0};
    int seen[4] = {0};
    kv_scan(p, (size_t)(last - p), 1, keys, v, seen, 4);
    if (!seen[2] || !seen[3]) return -1;
    memset(st, 0, sizeof *st);
    if (prefill) { st->c_sq = v[0]; st->c_sk = v[1]; st->c_sqsq = v[2]; st->c_sqsk = v[3]; }
    else { st->g_sq = v[0]; st->g_sk = v[1]; st->g_sqsq = v[2]; st->g_sqsk = v[3]; }
    return 0;
}

/* 0 and the sums when the annotation carries sq/sk, else -1. */
static int chunk_stats_of(const char *ann, chunk_stats *st)
{
    if (!ann) return -1;
    memset(st, 0, sizeof *st);
    if (lit(ann, "execute_")) return vllm_detailed(ann) ? vllm_fill(ann, st) : -1;
    if (lit(ann, "step[")) return sglang_detailed(ann, st);
    if (lit(ann, "prefill[") || lit(ann, "decode[")) return atom(ann, st);
    return -1;
}

static pnum I(int64_t v) { return PN_I(v); }
static pnum mul3(pnum a, pnum b, pnum c) { return pn_mul(pn_mul(a, b), c); }

int pm_inference_attention(pm_in *in, pm_out *out)
{
    if (in->mode == TL_PM_BWD) return PM_NOTIMPL;
    chunk_stats st;
    if (chunk_stats_of(in->args->annotation, &st) != 0) pm_raise(in, "no sq/sk step annotation");
    int paged = in->id == PM_INF_ATTN_PAGED;
    const tl_pv *q = pm_dims(in, paged ? 2 : 0), *k = pm_dims(in, paged ? 3 : 1);
    if (pm_len(in, q) != 3 || pm_len(in, k) < (paged ? 2 : 3))
        pm_raise(in, "q is not (N_Q, H_Q, d) or k has too few dims");
    int64_t NQ = pm_dim(in, q, 0), HQ = pm_dim(in, q, 1), dqk = pm_dim(in, q, 2);
    int64_t NKV = paged ? st.c_sk + st.g_sk : pm_dim(in, k, -3), HKV = pm_dim(in, k, -2);
    int64_t dv = paged ? 0 : pm_dim(in, k, -1);
    const char *tq = pm_type(in, paged ? 2 : 0), *tkv = !paged && pm_ntypes(in) > 1 ? pm_type(in, 1) : tq;
    if (paged) {
        const tl_pv *v = pm_dims(in, 4);
        if (pm_len(in, v) < 1) pm_raise(in, "v has no dims");
        dv = pm_dim(in, v, -1);
    }
    if (in->id == PM_INF_ATTN_DV && pm_ndims(in) > 2 && pm_len(in, pm_dims(in, 2)) >= 1)
        dv = pm_dim(in, pm_dims(in, 2), -1);
    const struct { const char *k; int64_t v; } p[] = {
        {"B", 1}, {"N_Q", NQ}, {"H_Q", HQ}, {"H_V", HKV}, {"H_K", HKV}, {"N_KV", NKV}, {"H_KV", HKV},
        {"d_h_qk", dqk}, {"d_h_v", dv},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) pm_param(in, out, p[i].k, pm_v_int(in, p[i].v));
    pm_param(in, out, "dropout", pm_v_float(in, 0.0));
    pm_param(in, out, "causal", pm_v_bool(in, 0));
    pm_param(in, out, "flash_impl", pm_v_bool(in, 1));
    const struct { const char *k; int64_t v; } s[] = {
        {"c_sq", st.c_sq}, {"c_sk", st.c_sk}, {"c_sqsq", st.c_sqsq}, {"c_sqsk", st.c_sqsk},
        {"g_sq", st.g_sq}, {"g_sk", st.g_sk}, {"g_sqsq", st.g_sqsq}, {"g_sqsk", st.g_sqsk},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) pm_param(in, out, s[i].k, pm_v_int(in, s[i].v));
    pm_param(in, out, "dtype_Q", pm_v_str(in, tq));
    if (!paged) pm_param(in, out, "dtype_KV", pm_v_str(in, tkv));
    if (st.c_sq == 0 && st.g_sq == 0) return PM_NOTIMPL;
    pnum H = I(HQ), Dq = I(dqk), Dv = I(dv), Hk = I(HKV), two = I(2);
    pnum f = pn_add(mul3(H, pn_mul(two, I(st.c_sqsk)), Dq), mul3(H, pn_mul(two, I(st.c_sqsk)), Dv));
    f = pn_sub(f, pn_add(mul3(H, I(st.c_sqsq), Dq), mul3(H, I(st.c_sqsq), Dv)));
    f = pn_add(f, pn_add(mul3(H, pn_mul(two, I(st.g_sqsk)), Dq), mul3(H, pn_mul(two, I(st.g_sqsk)), Dv)));
    out->flops = f;
    int bq = pm_bpe(tq), bkv = pm_bpe(tkv);
    if (!bq) bq = 2;
    if (!bkv) bkv = bq;
    pnum per_q = pn_add(pn_add(pn_mul(H, Dq), pn_mul(H, Dv)), pn_add(pn_mul(Hk, Dq), pn_mul(Hk, Dv)));
    pnum per_kv = pn_add(pn_mul(Hk, Dq), pn_mul(Hk, Dv));
    pnum nq = I(st.c_sq + st.g_sq), nkv = pn_add(I(st.c_sk - st.c_sq), I(st.g_sk - st.g_sq));
    out->has_bytes = 1;
    out->bytes = pn_add(mul3(nq, per_q, I(bq)), mul3(nkv, per_kv, I(bkv)));
    out->maf = "matrix";
    out->cs_dtype = tq;
    return PM_OK;
}
