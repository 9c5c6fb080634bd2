/* rocprof.h — the rocprofv3 JSON reader (rocprofiler-sdk-tool output,
 * spec/formats.md §1). tl_read_rocprof (declared in ingest.h) streams the
 * document through the JSON scanner and hands every kernel dispatch, memory
 * copy and HIP/HSA API call to the builder as a Kineto-like complete event;
 * this header adds the content sniffer the format detector calls and a
 * fixed-buffer entry point for the fuzzer and unit tests.
 *
 * What lands in the store (format "rocprof"):
 *   kernel dispatches: kind TL_K_KERNEL, cat "kernel", name resolved from
 *     kernel_symbols (first non-empty of truncated_kernel_name,
 *     formatted_kernel_name, else kernel_name, else "unknown_kernel_<id>"),
 *     pid = device = agent handle, tid = stream = stream handle,
 *     corr/ext_id = correlation_id.internal/.external, grid/block as
 *     "[x, y, z]" text (absent components 1); args JSON (what has no
 *     column): kernel_id, dispatch_id, thread_id, queue_id,
 *     private_segment_size, group_segment_size. Absent agent / stream /
 *     correlation ids are TL_NONE in their columns.
 *   memory copies: kind TL_K_MEMCPY, cat "gpu_memcpy", name from
 *     strings.buffer_records (e.g. MEMORY_COPY_DEVICE_TO_HOST), device =
 *     dst agent (else src), tid = stream; args: kind, operation, bytes,
 *     src_agent_id, dst_agent_id, thread_id.
 *   hip_api / hsa_api: kind TL_K_RUNTIME / TL_K_DRIVER, cat "hip_api" /
 *     "hsa_api", name = the API function, pid = metadata.pid, tid = thread;
 *     args: kind, operation.
 *   extras: "rocprof_metadata" (raw metadata object), "rocprof_agents" (raw
 *     agents array), "rocprof_warnings" (text, only when something was
 *     defaulted, e.g. dispatches naming kernel ids absent from
 *     kernel_symbols). */
#ifndef TL_ROCPROF_H
#define TL_ROCPROF_H

#include <stddef.h>
#include "ingest/builder.h"

/* 1 if the head of a decompressed document looks like rocprofiler-sdk-tool
 * JSON: an object whose key "rocprofiler-sdk-tool" appears in the head. */
int tl_rocprof_sniff(const char *head, size_t n);

/* Same as tl_read_rocprof over a complete in-memory document. */
int tl_rocprof_parse_buf(const char *buf, size_t len, const char *path, tl_build *b, tl_err *err);

/* Names of the extra blobs written by the reader. */
#define TL_ROCPROF_X_METADATA "rocprof_metadata"
#define TL_ROCPROF_X_AGENTS "rocprof_agents"
#define TL_ROCPROF_X_WARNINGS "rocprof_warnings"

#endif
