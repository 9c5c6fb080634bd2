/* tracediff_internal.h — state shared by the TraceDiff sources
 * (tracediff.c: tree view, merge, printing; tracediff_stats.c: diff_stats,
 * summary, maps, files, the report hook). Not part of the query API. */
#ifndef TL_TRACEDIFF_INTERNAL_H
#define TL_TRACEDIFF_INTERNAL_H

#include "query/diff/diff.h"

/* Per-row flags of the tree view. */
enum {
    TD_CPU = 1,     /* cpu_op */
    TD_HOST = 2,    /* nested on a host thread (cpu_op, runtime, python if on) */
    TD_RT = 4,      /* "runtime node": runtime/driver call that is not a graph launch */
    TD_GPU = 8,     /* kernel, memcpy or memset */
    TD_KERNEL = 16, /* cat kernel */
    TD_KLIKE = 32,  /* kernel-like for LCAs: kernel or memcpy (not memset) */
    TD_ON = 64,     /* on the GPU path: a GPU event, or gpu_events non-empty */
};

#define TD_UNSEEN (-2) /* UID map: node never visited by the merge */

enum { TD_COMBINED = 0, TD_TRACE1 = 1, TD_TRACE2 = 2 };

typedef struct td_strtab {
    TL_VEC(char *) strs; /* id -> text, in arena */
    tl_smap ids;         /* text -> id */
    tl_arena arena;
} td_strtab;

/* One trace seen as the reference's tree (A1). Rows are event rows of the
 * stored trace; -1 means "no node". */
typedef struct td_side {
    const tl_trace *t;
    size_t n;
    int python;
    int32_t *parent;          /* copy of the stored parent column, rewired by A3 */
    const int32_t **kids;     /* children lists (A3 may point one at another's) */
    uint32_t *nkids;
    int32_t *kpool;
    const int32_t **ge;       /* gpu_events per node */
    uint32_t *nge;
    int32_t *gpool;
    uint8_t *fl;              /* TD_* flags */
    double *ts_us, *end_us;   /* the reference's doubles (µs) */
    int32_t *roots;           /* top-level roots after A3, de-duplicated */
    size_t nroots, roots_cap, ncpu_roots;
    size_t dict_n;
    int32_t *nrm[2];          /* name string id -> interned norm name (strip 0/1) */
    int32_t *map;             /* UID map by row: other side's row, -1 one-sided, TD_UNSEEN */
} td_side;

typedef struct td_op {
    char op;                  /* 'M' match, 'D' delete (trace1 only), 'I' insert */
    int32_t i, j;
} td_op;
typedef TL_VEC(td_op) td_ops;

typedef struct td_mnode {
    int32_t u1, u2;           /* rows after a Phase-1 replacement (what is printed) */
    uint8_t type;             /* TD_COMBINED / TD_TRACE1 / TD_TRACE2 */
    uint32_t koff, nk;        /* children in tl_diff.mkids */
    int32_t o1, o2;           /* the rows the node was created for */
} td_mnode;

typedef struct td_stats td_stats;

struct tl_diff {
    tl_diff_opts opts;
    FILE *log;
    td_side s[2];
    td_strtab names;
    tl_buf tmp;
    TL_VEC(td_mnode) nodes;
    TL_VEC(int32_t) mkids;
    TL_VEC(int32_t) mroots;
    tl_imap memo;             /* (u1 + 1, u2 + 1) -> merged node (A4) */
    tl_arena arena;
    td_stats *st;
};

int32_t td_intern(td_strtab *st, const char *s, size_t n);
/* Display name of a row: its name, or the UID in decimal when empty. Both
 * the merge and the report tables print it; inline here so that the report
 * tables need nothing from the merge's source. */
static inline const char *td_name(const td_side *s, int32_t r, char buf[24])
{
    const char *nm = tl_trace_str(s->t, s->t->name[r]);
    if (nm && *nm) return nm;
    snprintf(buf, 24, "%u", s->t->uid[r]);
    return buf;
}
int32_t td_norm(tl_diff *d, const td_side *s, int32_t r, int strip);
int32_t td_row_of_uid(const td_side *s, int64_t uid);

/* tracediff_stats.c */
int td_build_stats(tl_diff *d, tl_err *err);
void td_stats_free(tl_diff *d);

#endif
