/* pftrace.h — the Perfetto trace reader (rocprofv3 --output-format pftrace):
 * a protobuf Trace read one TracePacket at a time (decoded in place by
 * our own wire reader, for the fields ingest/proto/pftrace.proto lists)
 * and turned into the events that Perfetto's `traceconv json` conversion
 * of the same trace holds, so that a .pftrace and its traceEvents JSON
 * (read by the Kineto reader) give the same stored trace.
 *
 * What lands in the store (format "pftrace"):
 *   a slice (TrackEvent SLICE_BEGIN ... SLICE_END on one track) is one
 *     complete event, stored when it ends: ts = the begin packet's
 *     timestamp (ns), dur = end - begin, name and category (several
 *     categories joined by ","), from the event or interned by iid in its
 *     packet sequence; kind from the category as for JSON (kernel_dispatch
 *     -> kernel, memory_copy -> memcpy, hip_api -> runtime, hsa_api ->
 *     driver); pid/tid from the track's ThreadDescriptor, else the pid of
 *     the nearest ProcessDescriptor among its ancestors and tid 0; args =
 *     the debug annotations of begin and end as one compact JSON object
 *     (`{"corr_id":42,"kernel_name":"k"}`: ints and uints in decimal,
 *     doubles as Python's repr, pointers as "0x..." strings, legacy JSON
 *     values verbatim, dict/array annotations nested); the args' corr_id is
 *     the correlation column.
 *   a process or thread descriptor with a name: a process_name /
 *     thread_name metadata row ({"name":"..."}).
 *   instants and counters: counted as other events (as the Kineto reader
 *     counts ph i / C).
 * Interned names, categories, annotation names and annotation strings are
 * per trusted_packet_sequence_id and dropped when a packet of the sequence
 * says its incremental state was cleared. A slice still open at the end of
 * the file is dropped. */
#ifndef TL_PFTRACE_H
#define TL_PFTRACE_H

#include <stddef.h>
#include "ingest/builder.h"

/* 1 if the head of a file looks like a Perfetto Trace: a length-delimited
 * field 1 (TracePacket) whose first fields include one numbered 8 or more
 * (XSpace's planes, also field 1, only have fields 1-7). */
int tl_pftrace_sniff(const char *head, size_t n);

/* Same as tl_read_pftrace over a complete in-memory file. */
int tl_pftrace_parse_buf(const void *buf, size_t len, const char *path, tl_build *b, tl_err *err);

#endif
