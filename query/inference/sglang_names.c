/* sglang_names.c — SGLang's profiler op names without their volatile
 * suffix, as the reference's --enable_pseudo_ops does first
 * (Trace2Tree/extensions/pseudo_ops_utils.normalize_sglang_profiler_op_names):
 * a cpu op named "sglang_profiler::<name>_<digits>" is renamed
 * "sglang_profiler::<name>" (only the last "_<digits>" goes), so the calls
 * of one op group together and meet their category and perf model. The
 * renamed trace is a derived trace (inference.h), stored by the command. */
#include "query/inference/inference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PREFIX[] = "sglang_profiler::";

/* Length of the name without its trailing "_<digits>", or 0 when it keeps
 * its name (re.match(r"^(sglang_profiler::.+?)_\d+$")). */
static size_t stripped_len(const char *s)
{
    size_t n = strlen(s), p = sizeof PREFIX - 1;
    if (n <= p || strncmp(s, PREFIX, p)) return 0;
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k == n || k == 0 || s[k - 1] != '_') return 0;
    return k - 1 > p ? k - 1 : 0; /* at least one character of <name> */
}

size_t tl_sglang_names(const tl_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->kind[i] == TL_K_CPU_OP && stripped_len(tl_trace_str(t, t->name[i]))) n++;
    return n;
}

uint64_t tl_sglang_names_id(const tl_trace *t)
{
    return tl_hash64(&t->id, sizeof t->id, tl_hash64("sglang-names-1", 14, 0));
}

int tl_sglang_names_build(const tl_trace *t, tl_derived *out, tl_err *err)
{
    memset(out, 0, sizeof *out);
    tl_build *b = tl_build_new();
    tl_build_set_format(b, "kineto");
    for (size_t i = 0; i < t->n; i++) {
        tl_ev_in e;
        tl_event_in(b, t, i, &e);
        const char *nm = tl_trace_str(t, t->name[i]);
        size_t k = t->kind[i] == TL_K_CPU_OP ? stripped_len(nm) : 0;
        if (k) e.name = tl_build_str(b, nm, k);
        tl_build_event(b, &e);
    }
    for (size_t f = 0; f < t->nflows; f++) {
        uint8_t ps = t->f_idflags[f] & 1, ts = (t->f_idflags[f] >> 1) & 1;
        tl_build_flow(b, t->f_uid[f], (char)t->f_ph[f], tl_restr(b, t, t->f_cat[f]), tl_restr(b, t, t->f_name[f]),
                      t->f_id[f], ps ? tl_restr(b, t, (uint32_t)t->f_pid[f]) : t->f_pid[f],
                      ts ? tl_restr(b, t, (uint32_t)t->f_tid[f]) : t->f_tid[f], ps, ts, t->f_ts[f]);
    }
    /* metadata events and top-level keys: tl_copy_rows keeping no event */
    uint8_t *none = tl_xcalloc(t->n ? t->n : 1, 1);
    tl_copy_rows(b, t, none, NULL, 0);
    free(none);
    /* the steps travel with the trace (a merged trace's come from its blob) */
    tl_steps st;
    tl_steps_find(t, &st);
    if (st.n) {
        tl_buf sb = {0};
        tl_steps_serialise(&st, &sb);
        tl_build_extra(b, "inference_steps", sb.p ? sb.p : "", sb.n);
        tl_buf_free(&sb);
    }
    tl_steps_free(&st);
    int rc = tl_build_tree(b, err);
    if (rc) {
        tl_build_free(b);
        return rc;
    }
    out->build = b;
    snprintf(out->labels, sizeof out->labels, "{\"sglang_names\":\"normalized\",\"parent\":\"%016llx\"}",
             (unsigned long long)t->id);
    const char *pp = t->catalog ? strstr(t->catalog, "\"path\":\"") : NULL;
    size_t k = 0;
    if (pp)
        for (pp += 8; pp[k] && pp[k] != '"' && k + 32 < sizeof out->path; k++) out->path[k] = pp[k];
    snprintf(out->path + k, sizeof out->path - k, "#sglang-names");
    out->info = (tl_build_info){.id = tl_sglang_names_id(t), .path = out->path, .format = "kineto", .rank = -1,
                                .labels_json = out->labels};
    return 0;
}
