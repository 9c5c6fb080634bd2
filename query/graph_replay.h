/* graph_replay.h — kernels replayed from CUDA/HIP graphs, attributed to the
 * CPU ops that captured them (spec/diff-compare-phases.md C8, graph mode;
 * spec/pytorch-report.md §4.3 for how a graph launch owns its kernels).
 *
 * A replay trace shows one `hipGraphLaunch`/`cudaGraphLaunch` owning hundreds
 * of kernels, so ops_summary and the roofline sheets see one opaque row. The
 * graph-capture traces (--capture_folder) recorded the CPU ops, shapes and
 * launch calls while the graph was captured. Each graph launch's kernel
 * sequence is matched against the capture windows (StreamBeginCapture ..
 * StreamEndCapture) by kernel names, and a merged trace is stored: the replay
 * unchanged except that every matched kernel is re-linked to a copy of its
 * capturing launch call, nested in copies of the capturing CPU ops (on a
 * synthetic thread per graph launch, times shifted to the launch). GPU events
 * and their times are untouched, so every GPU total is unchanged; the report
 * then runs on the merged trace as on any trace. */
#ifndef TL_GRAPH_REPLAY_H
#define TL_GRAPH_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include "trace.h"
#include "table.h"

/* C8 classification of a capture trace: FULL if it has at most one
 * StreamBeginCapture runtime call, else PIECEWISE; batch size from a
 * `capture_<bs>_<kind>` annotation, else the most common first dimension of
 * cpu-op inputs (-1 if none). */
void tl_gr_classify(const tl_trace *cap, int64_t *batch_size, int *full);

/* One capture trace handed to the merge. */
typedef struct tl_gr_source {
    const tl_trace *t;
    const char *file;     /* for the summary */
    int64_t batch_size;   /* from execution_details.json or tl_gr_classify */
    int full;
} tl_gr_source;

/* Merges and stores; *merged_id = the derived trace (an existing one is
 * reused: the id hashes the replay and capture ids). *summary (may be NULL)
 * gets the `graph_launches` table with the resolution of every launch. */
int tl_gr_merge(tl_store *s, const tl_trace *replay, const tl_gr_source *caps, size_t ncap,
                uint64_t *merged_id, tl_table **summary, tl_err *err);

/* `graph_launches` for a trace without capture traces: every graph launch
 * with its kernel count, kernel time and share of GPU kernel time, and a note
 * that --capture_folder would resolve them. NULL when there is none. */
tl_table *tl_gr_launch_table(const tl_trace *t);

/* execution_details.json of a capture folder: entries {file, batch_size,
 * mode}. Without that file every *.json / *.json.gz in dir is listed with
 * batch_size -1 and mode unknown (-1: classify from the trace). Returns the
 * count; the files, bs and full arrays are malloc'd (files: malloc'd full paths). */
int tl_gr_read_folder(const char *dir, char ***files, int64_t **bs, int **full, tl_err *err);

/* CLI side (implemented in tools/cmd_split.c, since it ingests the capture
 * files into the store): ingest the folder, merge with replay_id, store.
 * Prints its errors; returns a TL_EXIT_* code. summary may be NULL. */
int tl_cli_graph_merge(tl_store *s, uint64_t replay_id, const char *capture_dir,
                       uint64_t *merged_id, tl_table **summary);

#endif
