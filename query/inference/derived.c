/* derived.c — the common end of a derived trace that keeps every event of
 * its source (SGLang names, pseudo ops): the source's flows, metadata and
 * steps copied over, the tree built, and the catalog facts set. */
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int inf_derived_finish(const tl_trace *t, tl_build *b, uint32_t uid_end, uint64_t id, const char *suffix,
                       const char *labels_open, tl_derived *out, tl_err *err)
{
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
    snprintf(out->labels, sizeof out->labels, "%s,\"uid_end\":\"%u\",\"parent\":\"%016llx\"}", labels_open, uid_end,
             (unsigned long long)t->id);
    const char *pp = t->catalog ? strstr(t->catalog, "\"path\":\"") : NULL;
    size_t k = 0;
    if (pp)
        for (pp += 8; pp[k] && pp[k] != '"' && k + 32 < sizeof out->path; k++) out->path[k] = pp[k];
    snprintf(out->path + k, sizeof out->path - k, "#%s", suffix);
    out->info = (tl_build_info){.id = id, .path = out->path, .format = "kineto", .rank = -1,
                                .labels_json = out->labels};
    return 0;
}
