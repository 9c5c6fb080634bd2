/* xplane.h — the JAX/XLA profiler reader: XSpace protobuf (*.xplane.pb)
 * decoded with protobuf-c from our own schema (ingest/proto/xplane.proto)
 * and mapped onto the Kineto-like event model the way xprof's trace viewer
 * would (spec formats.md §2.4-§2.6): planes become pids, lines tids, events
 * rows with exact ns timestamps; stats become the args JSON plus promoted
 * columns. The HLO modules of the /host:metadata plane are decoded here too
 * (spec §2.7) and stored as the extra blob TL_XPLANE_HLO_EXTRA, so that the
 * JAX report needs no external tool and no side files.
 *
 * HLO blob format (text, one record per line, fields separated by TAB; no
 * field contains TAB or newline):
 *   TLHLO1
 *   M <TAB> program_id <TAB> module name <TAB> entry name        (one per module)
 *   R <TAB> %instr <TAB> output <TAB> custom_call_target <TAB> metadata
 *     <TAB> backend_config <TAB> operands joined by 0x1F        (records of
 *     the preceding module; an empty field means "key absent")
 * The R fields are already the texts TraceLens extracts from the HLO text
 * dump ("hlo op dict", §2.7): e.g. output "bf16[1,2]{1,0}", custom_call_target
 * 'custom_call_target="__cudnn$convForward"', metadata 'metadata={op_name="x"'. */
#ifndef TL_XPLANE_H
#define TL_XPLANE_H

#include <stddef.h>
#include "base/base.h"
#include "ingest/builder.h"

#define TL_XPLANE_HLO_EXTRA "hlo"
#define TL_XPLANE_HLO_MAGIC "TLHLO1"
#define TL_XPLANE_OPSEP '\x1f'

/* 1 if the first bytes look like a serialized XSpace (field 1 = planes,
 * length-delimited, holding an XPlane whose first field is one of its own). */
int tl_xplane_sniff(const char *head, size_t n);

/* Decodes a whole XSpace buffer into b. path names the file in messages and
 * gives the host name used in process names (file name minus .xplane.pb). */
int tl_xplane_parse(const void *buf, size_t len, const char *path, tl_build *b, tl_err *err);

/* Decodes only the HLO metadata of an XSpace buffer into the blob format
 * above (appended to out). Used by tl_xplane_parse and by tests. */
int tl_xplane_hlo_blob(const void *buf, size_t len, const char *path, tl_buf *out, tl_err *err);

#endif
