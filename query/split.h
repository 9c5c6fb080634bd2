/* split.h — new stored traces derived from stored ones: copying a selection
 * of a trace's rows into a builder (used by graph-replay merging,
 * query/graph_replay.h) and cutting an inference trace into per-step or
 * steady-state windows along its step annotations (`tracelens split`,
 * spec/diff-compare-phases.md C8). Each window becomes its own trace with
 * labels (step kind, batch size, parent id), so phases can be compared with
 * `tracelens compare` and queried across runs like any other trace. */
#ifndef TL_SPLIT_H
#define TL_SPLIT_H

#include <stddef.h>
#include <stdint.h>
#include "trace.h"
#include "../ingest/builder.h"

/* Copies rows of t into b (keep NULL: all rows), re-interning strings.
 * corr (may be NULL): per row a replacement correlation (TL_NONE: keep).
 * Flows are copied when their id is the correlation of a kept event (all
 * flows when keep is NULL), metadata events always, and the catalog's
 * top-level metadata (deviceProperties, ...) as top-level keys. */
/* Fills e from row i of t, strings re-interned into b (caller may change
 * fields before tl_build_event). */
void tl_event_in(tl_build *b, const tl_trace *t, size_t i, tl_ev_in *e);
/* Interns string id sid of t into b. */
uint32_t tl_restr(tl_build *b, const tl_trace *t, uint32_t sid);
void tl_copy_rows(tl_build *b, const tl_trace *t, const uint8_t *keep, const int64_t *corr);

typedef struct tl_window {
    int64_t host_lo, host_hi; /* ns: host rows fully inside are kept */
    int64_t gpu_lo, gpu_hi;   /* ns: GPU rows starting inside are kept */
    int kind;                 /* tl_step_kind of its steps */
    int64_t bs, tokens;       /* batch size / tokens (mean over steps for steady windows) */
    size_t first_step, nsteps;
} tl_window;

/* Windows of a trace: one per step annotation, or (steady) for each step kind
 * the run of consecutive same-kind steps with the highest mean batch size
 * (the steady state: highest concurrency; ties: the longer run). Returns the
 * count (0: no step annotations); *out is malloc'd. */
size_t tl_split_windows(const tl_trace *t, int steady, tl_window **out);

/* Stores window w of t as a new trace; its id is derived from t's id and the
 * window, so splitting twice is a no-op. *id_out gets the id, *existed 1
 * when it was already stored. */
int tl_split_store(tl_store *s, const tl_trace *t, const tl_window *w, int steady,
                   uint64_t *id_out, int *existed, tl_err *err);

#endif
