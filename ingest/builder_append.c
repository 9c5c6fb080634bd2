/* builder_append.c — joining the parts of one trace parsed in parallel
 * (kineto_split.c): each later part of the document fills a shard builder
 * with its own string dictionary, and tl_build_append adds it, in document
 * order, to the main builder as if the main parser had read it itself:
 * string ids mapped to the main dictionary, event positions (uid) and
 * args_sel rows shifted, the shard's encoded args chunks moved after the
 * main builder's. */
#include "ingest/builder_internal.h"

#include <stdlib.h>
#include <string.h>

tl_build *tl_build_new_shard(void)
{
    tl_build *b = tl_build_new();
    b->shard = 1;
    return b;
}

/* pid/tid values that are string ids (flag bit) are mapped. */
static int64_t map_id(int64_t v, int is_str, const uint32_t *map)
{
    return is_str ? (int64_t)map[v] : v;
}

void tl_build_append(tl_build *b, tl_build *s, uint32_t uid_base)
{
    /* the shard's string ids in the main dictionary (0: absent stays 0) */
    size_t ns = s->soff.n;
    uint32_t *map = tl_xmalloc((ns ? ns : 1) * sizeof *map);
    map[0] = 0;
    for (size_t id = 1; id < ns; id++) {
        size_t n;
        const char *t = tl_build_strget(s, (uint32_t)id, &n);
        map[id] = tl_build_str(b, t, n);
    }

    /* Everything of b's so far goes into chunks first, so that the shard's
     * chunks follow them. */
    tl_build_flush_chunks(b);
    uint32_t row_base = (uint32_t)b->n;

    /* event rows, mapped, each column freed in the shard once added */
    for (size_t i = 0; i < s->n; i++) {
        uint8_t fl = s->idflags.v[i];
        tl_build_add_row(b, s->uid.v[i] + uid_base, s->ts.v[i], s->dur.v[i], map[s->name.v[i]], map[s->cat.v[i]],
                         s->kind.v[i], map_id(s->pid.v[i], fl & 1, map), map_id(s->tid.v[i], fl & 2, map), fl,
                         s->corr.v[i], s->ext_id.v[i]);
    }
    tl_vec_free(&s->uid); tl_vec_free(&s->ts); tl_vec_free(&s->dur); tl_vec_free(&s->name); tl_vec_free(&s->cat);
    tl_vec_free(&s->kind); tl_vec_free(&s->pid); tl_vec_free(&s->tid); tl_vec_free(&s->idflags);
    tl_vec_free(&s->corr); tl_vec_free(&s->ext_id);

    /* the string-id cold columns, mapped, chunked into b's write (the
     * shard's other cold columns are in its own write, moved below) */
    for (int c = 0; c < COLD_N; c++) {
        cold_col *col = &s->cold[c];
        if (col->type != TL_CT_U32) continue;
        uint32_t rows = col->n, *v = (uint32_t *)col->buf;
        for (uint32_t i = 0; i < rows; i++) v[i] = map[v[i]];
        for (uint32_t done = 0; done < rows;) {
            uint32_t k = rows - done > TL_CHUNK_ROWS ? TL_CHUNK_ROWS : rows - done;
            tl_wtrace_put_chunk(b->w, TL_T_EVENTS, col->name, col->type, v + done, k);
            done += k;
        }
        col->n = 0;
    }

    /* args: the shard's encoded chunks follow b's */
    tl_build_flush_chunks(s); /* its last cold and args chunks; its sel rows stay */
    tl_wtrace_append(b->w, s->w);
    b->args_rows += s->args_rows;

    /* args_sel rows, shifted */
    for (size_t i = 0; i < s->sel_row.n; i++) {
        uint64_t o = s->sel_args.off.v[i];
        tl_build_sel_add(b, s->sel_row.v[i] + row_base, s->sel_args.bytes.p + o,
                         (size_t)(s->sel_args.off.v[i + 1] - o - 1));
    }

    /* sub_ns rows, shifted */
    for (size_t i = 0; i < s->sub_row.n; i++) {
        tl_vec_push(&b->sub_row, s->sub_row.v[i] + row_base);
        tl_vec_push(&b->sub_ts, s->sub_ts.v[i]);
        tl_vec_push(&b->sub_dur, s->sub_dur.v[i]);
    }

    /* flows */
    for (size_t i = 0; i < s->nflows; i++) {
        uint8_t fl = s->f_idflags.v[i];
        int64_t id = s->f_id.v[i]; /* string flow ids are -(string id) - 1 */
        if (id < 0) id = -(int64_t)map[-id - 1] - 1;
        tl_build_flow(b, s->f_uid.v[i] + uid_base, (char)s->f_ph.v[i], map[s->f_cat.v[i]], map[s->f_name.v[i]], id,
                      map_id(s->f_pid.v[i], fl & 1, map), map_id(s->f_tid.v[i], fl & 2, map), fl & 1 ? 1 : 0,
                      fl & 2 ? 1 : 0, s->f_ts.v[i]);
    }

    /* metadata events */
    for (size_t i = 0; i < s->nmeta; i++) {
        uint8_t fl = s->m_idflags.v[i];
        uint64_t o = s->m_args.off.v[i];
        size_t n = (size_t)(s->m_args.off.v[i + 1] - o - 1);
        tl_build_meta(b, s->m_uid.v[i] + uid_base, map[s->m_name.v[i]], map_id(s->m_pid.v[i], fl & 1, map),
                      map_id(s->m_tid.v[i], fl & 2, map), fl & 1 ? 1 : 0, fl & 2 ? 1 : 0, fl & 4 ? 1 : 0,
                      n ? s->m_args.bytes.p + o : NULL, n);
    }
    b->n_other += s->n_other;
    b->n_instant += s->n_instant;
    b->time_text |= s->time_text;
    free(map);
}
