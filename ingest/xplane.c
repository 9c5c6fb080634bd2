/* xplane.c — reads JAX/XLA profiler XSpace files (*.xplane.pb) into a
 * tl_build, reproducing what TraceLens sees after xprof's "trace_viewer@"
 * conversion (spec formats.md §2.4-§2.6), and decodes the HLO modules of the
 * /host:metadata plane into the records TraceLens parses from HLO text
 * (§2.7). Decoding uses protobuf-c on our own schema (ingest/proto/); fields
 * unknown to that schema are skipped by protobuf-c, never fatal. Every
 * failure names the file; nothing here may crash on hostile input (fuzzed by
 * tests/fuzz/fuzz_xplane.c). */
#include "ingest/xplane.h"
#include "ingest/ingest.h"
#include "ingest/source.h"
#include "ingest/schema.h"
#include "xplane.pb-c.h"
#include "hlo.pb-c.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdint.h>
#include <inttypes.h>
#include <math.h>

/* xprof pid numbering (§2.5). */
#define XP_HOST_PID 701
#define XP_CUSTOM_PID 501
#define XP_MAX_DEVICE_PID 500
#define XP_LONG_NAME_MAX 10000

/* ------------------------------------------------------------------ sniff */

static int rd_varint(const unsigned char *p, size_t n, size_t *pos, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && *pos < n; shift += 7) {
        unsigned char c = p[(*pos)++];
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) { *v = r; return 0; }
    }
    return -1;
}

int tl_xplane_sniff(const char *head, size_t n)
{
    const unsigned char *p = (const unsigned char *)head;
    size_t pos = 0;
    uint64_t len;
    if (n < 3 || p[0] != 0x0a) return 0; /* XSpace.planes: field 1, wire type 2 */
    pos = 1;
    if (rd_varint(p, n, &pos, &len) || len < 2 || pos >= n) return 0;
    /* First field of the XPlane: id (varint), name, lines, event/stat
     * metadata, stats (length-delimited). */
    switch (p[pos]) {
    case 0x08: case 0x12: case 0x1a: case 0x22: case 0x2a: case 0x32: break;
    default: return 0;
    }
    if (p[pos] == 0x12) { /* a plane name: "/host:...", "/device:...", "Task Environment" */
        size_t q = pos + 1;
        uint64_t sl;
        if (rd_varint(p, n, &q, &sl)) return 0;
        if (q < n && sl > 0 && p[q] < 0x20) return 0;
    }
    return 1;
}

/* ------------------------------------------------- wire-level depth check */

/* protobuf-c recurses once per nested message; ShapeProto.tuple_shapes is
 * the only recursive field of our schemas, so a hostile Hlo Proto could nest
 * shapes deep enough to exhaust the stack. Walk the wire format along the
 * schema's message fields (cheap: each byte is visited once) and refuse
 * nesting beyond a sane depth before handing the bytes to protobuf-c. */
enum { W_NONE, W_HLO, W_MODULE, W_COMP, W_INSTR, W_SHAPE };

static int w_child(int type, uint32_t field)
{
    switch (type) {
    case W_HLO: return field == 1 ? W_MODULE : W_NONE;
    case W_MODULE: return field == 3 ? W_COMP : W_NONE;
    case W_COMP: return field == 2 ? W_INSTR : W_NONE;
    case W_INSTR: return field == 3 ? W_SHAPE : W_NONE;
    case W_SHAPE: return field == 4 ? W_SHAPE : W_NONE;
    }
    return W_NONE;
}

/* Returns 0 when the wire data is well-formed enough and nests at most
 * max_depth schema levels; -1 otherwise (protobuf-c would reject or the
 * nesting is hostile). */
static int wire_check(const unsigned char *p, size_t n, int type, int depth, int max_depth)
{
    size_t pos = 0;
    if (depth > max_depth) return -1;
    while (pos < n) {
        uint64_t key, v;
        if (rd_varint(p, n, &pos, &key)) return -1;
        uint32_t field = (uint32_t)(key >> 3);
        switch (key & 7) {
        case 0: if (rd_varint(p, n, &pos, &v)) return -1; break;
        case 1: if (n - pos < 8) return -1; pos += 8; break;
        case 5: if (n - pos < 4) return -1; pos += 4; break;
        case 2: {
            if (rd_varint(p, n, &pos, &v) || v > n - pos) return -1;
            int ct = w_child(type, field);
            if (ct != W_NONE && wire_check(p + pos, (size_t)v, ct, depth + 1, max_depth)) return -1;
            pos += (size_t)v;
            break;
        }
        default: return -1; /* groups (3/4) are not used by these schemas */
        }
    }
    return 0;
}

/* ------------------------------------------------------ small utilities */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int starts_with(const char *s, const char *pre) { return strncmp(s, pre, strlen(pre)) == 0; }

/* Appends s with every control byte (and TAB/newline) replaced by '?',
 * keeping the HLO blob's line/field structure intact. */
static void buf_field(tl_buf *b, const char *s, size_t n)
{
    tl_buf_reserve(b, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        b->p[b->n++] = c < 0x20 ? '?' : (char)c;
    }
}

/* ------------------------------------------------------------- HLO records */

static const char *prim_name(int t)
{
    switch (t) {
    case 1: return "pred";
    case 2: return "s8";
    case 3: return "s16";
    case 4: return "s32";
    case 5: return "s64";
    case 6: return "u8";
    case 7: return "u16";
    case 8: return "u32";
    case 9: return "u64";
    case 10: return "f16";
    case 11: return "f32";
    case 12: return "f64";
    case 13: return "tuple";
    case 14: return "opaque";
    case 15: return "c64";
    case 16: return "bf16";
    case 17: return "token";
    case 18: return "c128";
    case 19: return "f8e5m2";
    case 20: return "f8e4m3fn";
    case 21: return "s4";
    case 22: return "u4";
    case 23: return "f8e4m3b11fnuz";
    case 24: return "f8e5m2fnuz";
    case 25: return "f8e4m3fnuz";
    case 26: return "s2";
    case 27: return "u2";
    case 28: return "f8e4m3";
    case 29: return "f8e3m4";
    case 30: return "s1";
    case 31: return "u1";
    case 32: return "f4e2m1fn";
    case 33: return "f8e8m0fnu";
    }
    return "invalid";
}

/* Shape text as XLA prints it with layouts, tuples without spaces (§2.7). */
static void shape_text(tl_buf *b, const Tlhlo__ShapeProto *s)
{
    if (!s) return;
    if (s->element_type == 13 || s->n_tuple_shapes) {
        tl_buf_putc(b, '(');
        for (size_t i = 0; i < s->n_tuple_shapes; i++) {
            if (i) tl_buf_putc(b, ',');
            shape_text(b, s->tuple_shapes[i]);
        }
        tl_buf_putc(b, ')');
        return;
    }
    tl_buf_puts(b, prim_name(s->element_type));
    tl_buf_putc(b, '[');
    for (size_t i = 0; i < s->n_dimensions; i++) tl_buf_printf(b, "%s%" PRId64, i ? "," : "", s->dimensions[i]);
    tl_buf_putc(b, ']');
    if (s->n_dimensions && s->layout && s->layout->n_minor_to_major) {
        tl_buf_putc(b, '{');
        for (size_t i = 0; i < s->layout->n_minor_to_major; i++)
            tl_buf_printf(b, "%s%" PRId64, i ? "," : "", s->layout->minor_to_major[i]);
        tl_buf_putc(b, '}');
    }
}

/* Characters TraceLens keeps of the printed metadata / backend_config
 * attributes (the text is cut at the first other character). */
static int meta_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           strchr("_=\"()/ @.-", c) != NULL;
}
static int bcfg_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           strchr("_=\"()/ @.,:[]{}-", c) != NULL;
}

/* Appends s to b while chars pass ok(); returns 1 if it stopped early. */
static int append_cut(tl_buf *b, const char *s, size_t n, int (*ok)(unsigned char))
{
    for (size_t i = 0; i < n; i++) {
        if (!s[i] || !ok((unsigned char)s[i])) return 1;
        tl_buf_putc(b, s[i]);
    }
    return 0;
}

/* metadata text: 'metadata={op_name="..." source_file="..." source_line=N'
 * cut at the first character outside the kept set; empty if XLA would not
 * print a metadata attribute. */
static void metadata_text(tl_buf *b, const Tlhlo__OpMetadata *m)
{
    if (!m || (!*m->op_type && !*m->op_name && !*m->source_file)) return;
    tl_buf_puts(b, "metadata={");
    int sep = 0;
    const char *keys[3] = {"op_type", "op_name", "source_file"};
    const char *vals[3] = {m->op_type, m->op_name, m->source_file};
    for (int k = 0; k < 3; k++) {
        if (!*vals[k]) continue;
        if (sep) tl_buf_putc(b, ' ');
        sep = 1;
        tl_buf_printf(b, "%s=\"", keys[k]);
        if (append_cut(b, vals[k], strlen(vals[k]), meta_char)) return;
        tl_buf_putc(b, '"');
    }
    if (m->source_line) tl_buf_printf(b, "%ssource_line=%d", sep ? " " : "", (int)m->source_line);
}

typedef struct hlo_ins {
    const Tlhlo__HloInstructionProto *p;
    int64_t id;
    int recorded;     /* has a record in the op dict */
    char *output;     /* shape text */
} hlo_ins;

static int cmp_ins_id(const void *a, const void *b)
{
    int64_t x = ((const hlo_ins *)a)->id, y = ((const hlo_ins *)b)->id;
    return x < y ? -1 : x > y;
}

static hlo_ins *find_ins(hlo_ins *v, size_t n, int64_t id)
{
    hlo_ins key = {.id = id};
    return bsearch(&key, v, n, sizeof *v, cmp_ins_id);
}

/* Does the printed HLO line qualify as a record (§2.7)? We do not print the
 * full line; the parts that can carry the trigger words are checked. */
static int line_qualifies(const char *line)
{
    static const char *const words[] = {"get-tuple-element", "bf16", "f8", "f16", "f32", "f64",
                                        "s32", "s64", "u32", "u64", "pred"};
    size_t n = strlen(line);
    if (strstr(line, "metadata") && !(n && line[n - 1] == ')')) return 1;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(line, words[i])) return 1;
    return 0;
}

/* TraceLens keeps operand shape texts matching [bfs][0-9[]{,a-z]*} — scan
 * for every non-overlapping match, left to right. */
static int opnd_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '[' || c == ']' || c == '{' || c == ',';
}

static size_t extract_operands(const char *s, tl_buf *out)
{
    size_t n = strlen(s), count = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == 'b' || s[i] == 'f' || s[i] == 's') {
            size_t j = i + 1;
            while (j < n && opnd_char((unsigned char)s[j])) j++;
            if (j < n && s[j] == '}') {
                if (count++) tl_buf_putc(out, TL_XPLANE_OPSEP);
                buf_field(out, s + i, j + 1 - i);
                i = j + 1;
                continue;
            }
        }
        i++;
    }
    return count;
}

static void hlo_module_records(const Tlhlo__HloModuleProto *m, int64_t program_id, tl_buf *out)
{
    size_t nins = 0;
    for (size_t c = 0; c < m->n_computations; c++)
        if (m->computations[c]) nins += m->computations[c]->n_instructions;
    hlo_ins *ins = tl_xcalloc(nins ? nins : 1, sizeof *ins);
    size_t k = 0;
    tl_buf line = {0}, tmp = {0};

    tl_buf_puts(out, "M\t");
    tl_buf_printf(out, "%" PRId64 "\t", program_id);
    buf_field(out, m->name, strlen(m->name));
    tl_buf_putc(out, '\t');
    buf_field(out, m->entry_computation_name, strlen(m->entry_computation_name));
    tl_buf_putc(out, '\n');

    /* Pass 1: output texts and which instructions get a record. */
    for (size_t c = 0; c < m->n_computations; c++) {
        const Tlhlo__HloComputationProto *cp = m->computations[c];
        if (!cp) continue;
        for (size_t i = 0; i < cp->n_instructions; i++) {
            const Tlhlo__HloInstructionProto *ip = cp->instructions[i];
            if (!ip) continue;
            hlo_ins *h = &ins[k++];
            h->p = ip;
            h->id = ip->id;
            tmp.n = 0;
            shape_text(&tmp, ip->shape);
            h->output = tl_xstrndup(tmp.p ? tmp.p : "", tmp.n);
            /* ROOT lines are never recorded; other lines by the words they hold. */
            if (ip->id == cp->root_id && cp->n_instructions) continue;
            line.n = 0;
            tl_buf_printf(&line, "%%%s = %s %s(", ip->name, h->output, ip->opcode);
            for (size_t o = 0; o < ip->n_operand_ids; o++) tl_buf_printf(&line, "%s#%" PRId64, o ? ", " : "", ip->operand_ids[o]);
            tl_buf_putc(&line, ')');
            if (*ip->custom_call_target) tl_buf_printf(&line, ", custom_call_target=\"%s\"", ip->custom_call_target);
            size_t before = line.n;
            if (ip->metadata) {
                tl_buf_puts(&line, ", ");
                metadata_text(&line, ip->metadata);
                if (line.n == before + 2) line.n = before;
                else tl_buf_putc(&line, '}');
            }
            tl_buf_putc(&line, '\0');
            h->recorded = line_qualifies(line.p);
        }
    }
    nins = k;
    qsort(ins, nins, sizeof *ins, cmp_ins_id);

    /* Pass 2: the records, in text order (computation by computation). */
    for (size_t c = 0; c < m->n_computations; c++) {
        const Tlhlo__HloComputationProto *cp = m->computations[c];
        if (!cp) continue;
        for (size_t i = 0; i < cp->n_instructions; i++) {
            const Tlhlo__HloInstructionProto *ip = cp->instructions[i];
            if (!ip) continue;
            hlo_ins *h = find_ins(ins, nins, ip->id);
            if (!h || h->p != ip || !h->recorded) continue;
            tl_buf_puts(out, "R\t%");
            buf_field(out, ip->name, strlen(ip->name));
            tl_buf_putc(out, '\t');
            buf_field(out, h->output, strlen(h->output));
            tl_buf_putc(out, '\t');
            if (*ip->custom_call_target) {
                tl_buf_puts(out, "custom_call_target=\"");
                buf_field(out, ip->custom_call_target, strlen(ip->custom_call_target));
                tl_buf_putc(out, '"');
            }
            tl_buf_putc(out, '\t');
            tmp.n = 0;
            metadata_text(&tmp, ip->metadata);
            if (tmp.n) buf_field(out, tmp.p, tmp.n);
            tl_buf_putc(out, '\t');
            if (ip->backend_config.len) {
                tmp.n = 0;
                tl_buf_puts(&tmp, "backend_config=");
                append_cut(&tmp, (const char *)ip->backend_config.data, ip->backend_config.len, bcfg_char);
                buf_field(out, tmp.p, tmp.n);
            }
            tl_buf_putc(out, '\t');
            /* Operands: the referenced op's output text when it has a record,
             * else its bare name; then TraceLens' shape pattern, falling back
             * to the raw comma-split texts when nothing matches. */
            tmp.n = 0;
            for (size_t o = 0; o < ip->n_operand_ids; o++) {
                hlo_ins *oh = find_ins(ins, nins, ip->operand_ids[o]);
                if (o) tl_buf_puts(&tmp, ", ");
                if (oh && oh->recorded) tl_buf_puts(&tmp, oh->output);
                else if (oh) tl_buf_printf(&tmp, "%%%s", oh->p->name);
                else tl_buf_printf(&tmp, "%%%" PRId64, ip->operand_ids[o]);
            }
            tl_buf_putc(&tmp, '\0');
            if (ip->n_operand_ids && !extract_operands(tmp.p, out)) {
                const char *s = tmp.p;
                int first = 1;
                while (*s) {
                    const char *e = strchr(s, ',');
                    size_t len = e ? (size_t)(e - s) : strlen(s);
                    const char *a = s, *z = s + len;
                    while (a < z && *a == ' ') a++;
                    while (z > a && z[-1] == ' ') z--;
                    if (!first) tl_buf_putc(out, TL_XPLANE_OPSEP);
                    first = 0;
                    buf_field(out, a, (size_t)(z - a));
                    s = e ? e + 1 : s + len;
                }
            }
            tl_buf_putc(out, '\n');
        }
    }
    for (size_t i = 0; i < nins; i++) free(ins[i].output);
    free(ins);
    tl_buf_free(&line);
    tl_buf_free(&tmp);
}

static const char *stat_meta_name(const Tlxp__XPlane *p, int64_t id);

/* HLO modules of the /host:metadata plane: one event metadata entry per
 * program, named "<module>(<program_id>)", holding stat "Hlo Proto". A
 * module that fails to decode is reported on stderr and skipped: the
 * timeline is still worth having. */
static void hlo_from_space(const Tlxp__XSpace *x, const char *path, tl_buf *out)
{
    tl_buf_puts(out, TL_XPLANE_HLO_MAGIC "\n");
    for (size_t i = 0; i < x->n_planes; i++) {
        const Tlxp__XPlane *p = x->planes[i];
        if (!p || strcmp(p->name, "/host:metadata")) continue;
        for (size_t j = 0; j < p->n_event_metadata; j++) {
            const Tlxp__XPlane__EventMetadataEntry *e = p->event_metadata[j];
            if (!e || !e->value) continue;
            for (size_t s = 0; s < e->value->n_stats; s++) {
                const Tlxp__XStat *st = e->value->stats[s];
                if (!st || st->value_case != TLXP__XSTAT__VALUE_BYTES_VALUE) continue;
                if (strcmp(stat_meta_name(p, st->metadata_id), "Hlo Proto")) continue;
                const unsigned char *d = st->bytes_value.data;
                size_t dn = st->bytes_value.len;
                Tlhlo__HloProto *h = NULL;
                if (wire_check(d, dn, W_HLO, 0, 64) == 0) h = tlhlo__hlo_proto__unpack(NULL, dn, d);
                if (!h || !h->hlo_module) {
                    fprintf(stderr, "warning: %s: HLO module %s: cannot decode its Hlo Proto; "
                                    "its kernels get no HLO metadata\n", path, e->value->name);
                    if (h) tlhlo__hlo_proto__free_unpacked(h, NULL);
                    continue;
                }
                hlo_module_records(h->hlo_module, e->key, out);
                tlhlo__hlo_proto__free_unpacked(h, NULL);
            }
        }
    }
}

/* ------------------------------------------------------------ the events */

typedef struct xp_ev {
    int64_t start_ps, dur_ps;
    const char *name;
    const Tlxp__XEvent *ev;
    const Tlxp__XEventMetadata *md;
} xp_ev;

typedef struct xp_line {
    uint32_t tid;
    const Tlxp__XLine *line;
    const char *name;    /* effective name */
    size_t order;        /* position in the plane (stable sort) */
} xp_line;

typedef struct xp_plane {
    int64_t pid;
    const Tlxp__XPlane *p;
    /* metadata lookups: sorted by key */
    const Tlxp__XPlane__EventMetadataEntry **em;
    size_t nem;
    const Tlxp__XPlane__StatMetadataEntry **sm;
    size_t nsm;
    xp_line *lines;
    size_t nlines;
} xp_plane;

static int cmp_em(const void *a, const void *b)
{
    int64_t x = (*(const Tlxp__XPlane__EventMetadataEntry *const *)a)->key;
    int64_t y = (*(const Tlxp__XPlane__EventMetadataEntry *const *)b)->key;
    return x < y ? -1 : x > y;
}
static int cmp_sm(const void *a, const void *b)
{
    int64_t x = (*(const Tlxp__XPlane__StatMetadataEntry *const *)a)->key;
    int64_t y = (*(const Tlxp__XPlane__StatMetadataEntry *const *)b)->key;
    return x < y ? -1 : x > y;
}

static const Tlxp__XEventMetadata *plane_em(const xp_plane *xp, int64_t id)
{
    size_t lo = 0, hi = xp->nem;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int64_t k = xp->em[mid]->key;
        if (k == id) return xp->em[mid]->value;
        if (k < id) lo = mid + 1; else hi = mid;
    }
    return NULL;
}
static const char *plane_sm(const xp_plane *xp, int64_t id)
{
    size_t lo = 0, hi = xp->nsm;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int64_t k = xp->sm[mid]->key;
        if (k == id) return xp->sm[mid]->value ? xp->sm[mid]->value->name : "";
        if (k < id) lo = mid + 1; else hi = mid;
    }
    return "";
}

/* Linear lookup for planes without an index (the metadata plane only). */
static const char *stat_meta_name(const Tlxp__XPlane *p, int64_t id)
{
    for (size_t i = 0; i < p->n_stat_metadata; i++)
        if (p->stat_metadata[i] && p->stat_metadata[i]->key == id && p->stat_metadata[i]->value)
            return p->stat_metadata[i]->value->name;
    return "";
}

static void plane_index(xp_plane *xp)
{
    const Tlxp__XPlane *p = xp->p;
    xp->em = tl_xcalloc(p->n_event_metadata + 1, sizeof *xp->em);
    for (size_t i = 0; i < p->n_event_metadata; i++)
        if (p->event_metadata[i]) xp->em[xp->nem++] = p->event_metadata[i];
    qsort(xp->em, xp->nem, sizeof *xp->em, cmp_em);
    xp->sm = tl_xcalloc(p->n_stat_metadata + 1, sizeof *xp->sm);
    for (size_t i = 0; i < p->n_stat_metadata; i++)
        if (p->stat_metadata[i]) xp->sm[xp->nsm++] = p->stat_metadata[i];
    qsort(xp->sm, xp->nsm, sizeof *xp->sm, cmp_sm);
}

static int cmp_line(const void *a, const void *b)
{
    const xp_line *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Within a thread: start ascending, duration descending, name ascending. */
static int cmp_ev(const void *a, const void *b)
{
    const xp_ev *x = a, *y = b;
    if (x->start_ps != y->start_ps) return x->start_ps < y->start_ps ? -1 : 1;
    if (x->dur_ps != y->dur_ps) return x->dur_ps > y->dur_ps ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_plane_pid(const void *a, const void *b)
{
    const xp_plane *x = a, *y = b;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp((*(const Tlxp__XPlane *const *)a)->name, (*(const Tlxp__XPlane *const *)b)->name);
}

/* xprof's internal host event types (dropped from the trace viewer). */
static int internal_event(const char *name)
{
    static const char *const names[] = {
        "MemoryAllocation", "MemoryDeallocation", "Prefetch::Produce", "Prefetch::Consume",
        "ParallelInterleave::Produce", "ParallelInterleave::Consume",
        "ParallelInterleave::InitializedInput", "ParallelMap::Produce", "ParallelMap::Consume",
        "MapAndBatch::Produce", "MapAndBatch::Consume", "ParseExample::Produce",
        "ParseExample::Consume"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i])) return 1;
    return 0;
}

/* Stats xprof keeps out of the args. program_id is kept (deviation, see
 * docs/CONFORMANCE.md): it picks the exact HLO module of a kernel. */
static int internal_stat(const char *name)
{
    static const char *const names[] = {"kernel_details", "_p", "_pt", "_c", "_ct", "flops",
                                        "bytes_accessed", "is_root", "symbol_id"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i])) return 1;
    return 0;
}

/* Category from the thread name (§2.6). */
static const char *event_cat(const char *thread, const char *name, uint8_t *kind)
{
    if (!strcmp(thread, "Framework Name Scope") || strstr(thread, "py_xla")) {
        *kind = TL_K_CPU_OP;
        return "cpu_op";
    }
    if (!strcmp(thread, "XLA Ops")) {
        *kind = TL_K_PYTHON;
        return "python function";
    }
    if (starts_with(thread, "Stream")) {
        if (!strncasecmp(name, "copy", 4) || !strncasecmp(name, "memcpy", 6)) {
            *kind = TL_K_MEMCPY;
            return "memcpy";
        }
        if (!strncasecmp(name, "memset", 6)) {
            *kind = TL_K_MEMSET;
            return "memset";
        }
        *kind = TL_K_KERNEL;
        return "kernel";
    }
    *kind = TL_K_OTHER;
    return "Unknown";
}

/* " grid:1280,1,1 block:256,1,1 ..." -> "[1280, 1, 1]" for key "grid:". */
static uint32_t dims_from_details(tl_build *b, const char *details, const char *key, tl_buf *tmp)
{
    const char *s = strstr(details, key);
    if (!s) return 0;
    s += strlen(key);
    tmp->n = 0;
    tl_buf_putc(tmp, '[');
    int any = 0;
    while (*s >= '0' && *s <= '9') {
        const char *e = s;
        while (*e >= '0' && *e <= '9') e++;
        if (any) tl_buf_puts(tmp, ", ");
        tl_buf_append(tmp, s, (size_t)(e - s));
        any = 1;
        s = e;
        if (*s == ',') s++;
    }
    tl_buf_putc(tmp, ']');
    return any ? tl_build_str(b, tmp->p, tmp->n) : 0;
}

typedef struct arg_kv {
    const char *name;
    size_t off, len; /* JSON value text in the value buffer */
} arg_kv;

/* Renders one stat value as JSON into vals; returns 0 if it is not exported. */
static int stat_json(const xp_plane *xp, const Tlxp__XStat *st, tl_buf *vals, const char **sval, int64_t *ival,
                     int *has_ival)
{
    char num[64];
    *sval = NULL;
    *has_ival = 0;
    switch (st->value_case) {
    case TLXP__XSTAT__VALUE_DOUBLE_VALUE:
        if (isfinite(st->double_value)) {
            snprintf(num, sizeof num, "%.17g", st->double_value);
            tl_buf_puts(vals, num);
        } else {
            tl_buf_puts(vals, "null");
        }
        return 1;
    case TLXP__XSTAT__VALUE_UINT64_VALUE:
        tl_buf_printf(vals, "%" PRIu64, st->uint64_value);
        *ival = (int64_t)st->uint64_value;
        *has_ival = st->uint64_value <= (uint64_t)INT64_MAX;
        return 1;
    case TLXP__XSTAT__VALUE_INT64_VALUE:
        tl_buf_printf(vals, "%" PRId64, st->int64_value);
        *ival = st->int64_value;
        *has_ival = 1;
        return 1;
    case TLXP__XSTAT__VALUE_STR_VALUE:
        tl_buf_json_str(vals, st->str_value, strlen(st->str_value));
        *sval = st->str_value;
        return 1;
    case TLXP__XSTAT__VALUE_REF_VALUE: {
        const char *s = plane_sm(xp, (int64_t)st->ref_value);
        tl_buf_json_str(vals, s, strlen(s));
        *sval = s;
        return 1;
    }
    default:
        return 0; /* bytes values are never exported; unset oneof: nothing */
    }
}

typedef struct xp_ctx {
    tl_build *b;
    const char *path;
    tl_buf args, vals, tmp;
    TL_VEC(arg_kv) kv;
    uint32_t uid;
    uint32_t s_long_name;
} xp_ctx;

static void emit_event(xp_ctx *c, const xp_plane *xp, const xp_line *ln, const xp_ev *e)
{
    tl_ev_in in;
    memset(&in, 0, sizeof in);
    in.uid = c->uid++;
    /* ns from ps: the samples (and CUPTI/roctracer) are whole ns; a sub-ns
     * remainder would be floored (docs/CONFORMANCE.md). */
    in.ts = e->start_ps >= 0 ? e->start_ps / 1000 : -((-e->start_ps + 999) / 1000);
    in.dur = e->dur_ps > 0 ? e->dur_ps / 1000 : 0;
    in.name = tl_build_str(c->b, e->name, strlen(e->name));
    const char *cat = event_cat(ln->name, e->name, &in.kind);
    in.cat = tl_build_str(c->b, cat, strlen(cat));
    in.pid = xp->pid;
    in.tid = ln->tid;
    in.corr = in.ext_id = in.stream = in.device = in.seq = in.fwd_tid = TL_NONE;
    if (in.kind == TL_K_KERNEL || in.kind == TL_K_MEMCPY || in.kind == TL_K_MEMSET) {
        in.stream = ln->tid;
        in.device = xp->p->id;
    }

    /* Args: metadata stats then event stats; a later stat of the same name
     * replaces the value but keeps the first position (Python dict). */
    c->vals.n = 0;
    c->kv.n = 0;
    if (e->md && *e->md->display_name) {
        arg_kv kv = {"long_name", c->vals.n, 0};
        size_t nl = strlen(e->md->name);
        if (nl > XP_LONG_NAME_MAX) {
            c->tmp.n = 0;
            tl_buf_append(&c->tmp, e->md->name, XP_LONG_NAME_MAX);
            tl_buf_puts(&c->tmp, "...<truncated>");
            tl_buf_json_str(&c->vals, c->tmp.p, c->tmp.n);
        } else {
            tl_buf_json_str(&c->vals, e->md->name, nl);
        }
        kv.len = c->vals.n - kv.off;
        tl_vec_push(&c->kv, kv);
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t ns = pass == 0 ? (e->md ? e->md->n_stats : 0) : e->ev->n_stats;
        Tlxp__XStat *const *sts = pass == 0 ? (e->md ? e->md->stats : NULL) : e->ev->stats;
        for (size_t i = 0; i < ns; i++) {
            const Tlxp__XStat *st = sts[i];
            if (!st) continue;
            const char *sname = plane_sm(xp, st->metadata_id);
            const char *sval;
            int64_t ival;
            int has_ival;
            if (!strcmp(sname, "kernel_details") && st->value_case != TLXP__XSTAT__VALUE_BYTES_VALUE) {
                size_t mark = c->vals.n;
                if (stat_json(xp, st, &c->vals, &sval, &ival, &has_ival) && sval) {
                    in.grid = dims_from_details(c->b, sval, "grid:", &c->tmp);
                    in.block = dims_from_details(c->b, sval, "block:", &c->tmp);
                }
                c->vals.n = mark;
                continue;
            }
            if (!*sname || internal_stat(sname)) continue;
            size_t off = c->vals.n;
            if (!stat_json(xp, st, &c->vals, &sval, &ival, &has_ival)) continue;
            if (!strcmp(sname, "correlation_id")) {
                if (has_ival) in.corr = ival;
                else if (sval) in.corr = strtoll(sval, NULL, 10);
            } else if (!strcmp(sname, "device_id") && has_ival && in.device == TL_NONE) {
                in.device = ival;
            }
            arg_kv kv = {sname, off, c->vals.n - off};
            size_t k;
            for (k = 0; k < c->kv.n; k++)
                if (!strcmp(c->kv.v[k].name, sname)) break;
            if (k < c->kv.n) c->kv.v[k] = kv;
            else tl_vec_push(&c->kv, kv);
        }
    }
    /* Host API calls carrying a correlation id launch GPU work: mark them
     * as runtime so generic launch analyses find them (cat stays xprof's). */
    if (in.corr != TL_NONE && xp->pid >= XP_HOST_PID && in.kind != TL_K_KERNEL) in.kind = TL_K_RUNTIME;

    if (c->kv.n) {
        c->args.n = 0;
        tl_buf_putc(&c->args, '{');
        for (size_t k = 0; k < c->kv.n; k++) {
            if (k) tl_buf_putc(&c->args, ',');
            tl_buf_json_str(&c->args, c->kv.v[k].name, strlen(c->kv.v[k].name));
            tl_buf_putc(&c->args, ':');
            tl_buf_append(&c->args, c->vals.p + c->kv.v[k].off, c->kv.v[k].len);
        }
        tl_buf_putc(&c->args, '}');
        in.args = c->args.p;
        in.args_len = c->args.n;
    }
    tl_build_event(c->b, &in);
}

static void meta_event(xp_ctx *c, uint32_t uid, const char *name, int64_t pid, int64_t tid, int has_tid,
                       const char *key, const char *sval, int64_t ival)
{
    c->args.n = 0;
    tl_buf_putc(&c->args, '{');
    tl_buf_json_str(&c->args, key, strlen(key));
    tl_buf_putc(&c->args, ':');
    if (sval) tl_buf_json_str(&c->args, sval, strlen(sval));
    else tl_buf_printf(&c->args, "%" PRId64, ival);
    tl_buf_putc(&c->args, '}');
    tl_build_meta(c->b, uid, tl_build_str(c->b, name, strlen(name)), pid, tid, 0, 0, (uint8_t)has_tid,
                  c->args.p, c->args.n);
}

/* Plane stats as a JSON object (device properties, profile times). */
static void plane_stats_json(const xp_plane *xp, tl_buf *o)
{
    const Tlxp__XPlane *p = xp->p;
    tl_buf_putc(o, '{');
    tl_buf_puts(o, "\"name\":");
    tl_buf_json_str(o, p->name, strlen(p->name));
    tl_buf_printf(o, ",\"id\":%" PRId64, p->id);
    if (xp->pid) tl_buf_printf(o, ",\"pid\":%" PRId64, xp->pid);
    tl_buf tmp = {0};
    for (size_t i = 0; i < p->n_stats; i++) {
        const Tlxp__XStat *st = p->stats[i];
        if (!st) continue;
        const char *sn = plane_sm(xp, st->metadata_id), *sval;
        int64_t iv;
        int hv;
        if (!*sn) continue;
        tmp.n = 0;
        if (!stat_json(xp, st, &tmp, &sval, &iv, &hv)) continue;
        tl_buf_putc(o, ',');
        tl_buf_json_str(o, sn, strlen(sn));
        tl_buf_putc(o, ':');
        tl_buf_append(o, tmp.p, tmp.n);
    }
    tl_buf_free(&tmp);
    tl_buf_putc(o, '}');
}

static int hostname_from_path(const char *path, const Tlxp__XSpace *x, tl_buf *out)
{
    const char *bn = base_name(path);
    size_t n = strlen(bn), sl = strlen(".xplane.pb");
    if (n > sl && !strcmp(bn + n - sl, ".xplane.pb")) {
        tl_buf_append(out, bn, n - sl);
    } else if (x->n_hostnames && x->hostnames[0]) {
        tl_buf_puts(out, x->hostnames[0]);
    } else {
        tl_buf_puts(out, bn);
    }
    tl_buf_putc(out, '\0');
    return 0;
}

/* The catalog's top-level keys: deviceProperties (one stats object per
 * device plane) and xspace (hostnames, error/warning counts, every plane). */
static void catalog_toplevel(const Tlxp__XSpace *x, const xp_plane *planes, size_t nxp, tl_build *b)
{
    tl_buf o = {0};
    tl_buf_putc(&o, '[');
    int first = 1;
    for (size_t i = 0; i < nxp; i++) {
        if (!starts_with(planes[i].p->name, "/device:")) continue;
        if (!first) tl_buf_putc(&o, ',');
        first = 0;
        plane_stats_json(&planes[i], &o);
    }
    tl_buf_putc(&o, ']');
    tl_build_toplevel(b, "deviceProperties", strlen("deviceProperties"), o.p, o.n);
    o.n = 0;
    tl_buf_puts(&o, "{\"hostnames\":[");
    for (size_t i = 0; i < x->n_hostnames; i++) {
        if (i) tl_buf_putc(&o, ',');
        tl_buf_json_str(&o, x->hostnames[i], strlen(x->hostnames[i]));
    }
    tl_buf_printf(&o, "],\"errors\":%zu,\"warnings\":%zu,\"planes\":[", x->n_errors, x->n_warnings);
    for (size_t i = 0; i < nxp; i++) {
        if (i) tl_buf_putc(&o, ',');
        plane_stats_json(&planes[i], &o);
    }
    tl_buf_puts(&o, "]}");
    tl_build_toplevel(b, "xspace", strlen("xspace"), o.p, o.n);
    tl_buf_free(&o);
}

/* Complete events of the planes (sorted by pid), thread by thread: lines
 * sharing a tid form one thread, its events ordered by start/dur/name.
 * *nevents gets the count. */
static int complete_events(xp_ctx *c, xp_plane *planes, size_t nxp, size_t *nevents, tl_err *err)
{
    TL_VEC(xp_ev) evs = {0};
    *nevents = 0;
    for (size_t i = 0; i < nxp; i++) {
        xp_plane *xp = &planes[i];
        if (!xp->pid) continue;
        for (size_t l = 0; l < xp->nlines;) {
            size_t l2 = l;
            evs.n = 0;
            while (l2 < xp->nlines && xp->lines[l2].tid == xp->lines[l].tid) {
                const Tlxp__XLine *L = xp->lines[l2].line;
                for (size_t e = 0; e < L->n_events; e++) {
                    const Tlxp__XEvent *ev = L->events[e];
                    if (!ev) continue;
                    const Tlxp__XEventMetadata *md = plane_em(xp, ev->metadata_id);
                    const char *nm = md ? md->name : "";
                    if (internal_event(nm)) continue;
                    xp_ev xe;
                    int64_t base, off = ev->data_case == TLXP__XEVENT__DATA_OFFSET_PS ? ev->offset_ps : 0;
                    if (__builtin_mul_overflow(L->timestamp_ns, (int64_t)1000, &base) ||
                        __builtin_add_overflow(base, off, &xe.start_ps)) {
                        tl_vec_free(&evs);
                        return tl_errf(err, TL_EFORMAT,
                                       "%s: plane %s line %s: event time out of range "
                                       "(timestamp_ns %" PRId64 ", offset_ps %" PRId64 ")",
                                       c->path, xp->p->name, xp->lines[l2].name, L->timestamp_ns, off);
                    }
                    xe.dur_ps = ev->duration_ps;
                    int64_t end_ps;
                    if (tl_time_end(xe.start_ps, xe.dur_ps > 0 ? xe.dur_ps : 0, &end_ps)) {
                        tl_vec_free(&evs);
                        return tl_errf(err, TL_EFORMAT,
                                       "%s: plane %s line %s: event end time out of range "
                                       "(start_ps %" PRId64 ", duration_ps %" PRId64 ")",
                                       c->path, xp->p->name, xp->lines[l2].name, xe.start_ps, xe.dur_ps);
                    }
                    xe.name = md && *md->display_name ? md->display_name : nm;
                    xe.ev = ev;
                    xe.md = md;
                    tl_vec_push(&evs, xe);
                }
                l2++;
            }
            if (evs.n) qsort(evs.v, evs.n, sizeof *evs.v, cmp_ev);
            for (size_t e = 0; e < evs.n; e++) emit_event(c, xp, &xp->lines[l], &evs.v[e]);
            *nevents += evs.n;
            l = l2;
        }
    }
    tl_vec_free(&evs);
    return 0;
}

/* Metadata events: process name and sort index per plane, thread name and
 * sort index per thread. Numbered after the complete events (TraceLens'
 * UIDs count complete events only). */
static void metadata_events(xp_ctx *c, const xp_plane *planes, size_t nxp, const char *host)
{
    uint32_t muid = c->uid;
    tl_buf pname = {0};
    for (size_t i = 0; i < nxp; i++) {
        const xp_plane *xp = &planes[i];
        if (!xp->pid || !xp->nlines) continue;
        pname.n = 0;
        tl_buf_printf(&pname, "%s %s", host, xp->p->name);
        tl_buf_putc(&pname, '\0');
        meta_event(c, muid++, "process_name", xp->pid, 0, 0, "name", pname.p, 0);
        meta_event(c, muid++, "process_sort_index", xp->pid, 0, 0, "sort_index", NULL, xp->pid);
        for (size_t l = 0; l < xp->nlines; l++) {
            if (l && xp->lines[l].tid == xp->lines[l - 1].tid) continue;
            meta_event(c, muid++, "thread_name", xp->pid, xp->lines[l].tid, 1, "name", xp->lines[l].name, 0);
            meta_event(c, muid++, "thread_sort_index", xp->pid, xp->lines[l].tid, 1, "sort_index", NULL,
                       xp->lines[l].tid);
        }
    }
    tl_buf_free(&pname);
}

static int convert(const Tlxp__XSpace *x, const char *path, tl_build *b, tl_err *err)
{
    int rc = 0;
    size_t np = x->n_planes;
    xp_plane *planes = tl_xcalloc(np + 1, sizeof *planes);
    size_t nxp = 0;
    xp_ctx c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.path = path;
    tl_buf host = {0};
    hostname_from_path(path, x, &host);

    /* Host planes sorted by name get 701, 702, ...; GPUs 1 + id; custom 501 + id. */
    const Tlxp__XPlane **hosts = tl_xcalloc(np + 1, sizeof *hosts);
    size_t nh = 0;
    int recognised = 0;
    for (size_t i = 0; i < np; i++) {
        const Tlxp__XPlane *p = x->planes[i];
        if (!p) continue;
        if (p->name[0] == '/' || !strcmp(p->name, "Task Environment")) recognised = 1;
        if (starts_with(p->name, "/host:CPU")) hosts[nh++] = p;
    }
    if (!recognised) {
        rc = tl_errf(err, TL_EFORMAT,
                     "%s: not an XSpace protobuf (no profiler planes such as /host:CPU or /device:GPU:N; "
                     "first plane name \"%.60s\")", path, np && x->planes[0] ? x->planes[0]->name : "");
        goto out;
    }
    qsort(hosts, nh, sizeof *hosts, cmp_str_ptr);
    for (size_t i = 0; i < np; i++) {
        const Tlxp__XPlane *p = x->planes[i];
        if (!p) continue;
        int64_t pid = 0;
        if (starts_with(p->name, "/host:CPU")) {
            for (size_t h = 0; h < nh; h++)
                if (hosts[h] == p) pid = XP_HOST_PID + (int64_t)h;
        } else if (starts_with(p->name, "/device:GPU:")) {
            pid = (p->id >= 0 && p->id < XP_MAX_DEVICE_PID) ? 1 + p->id : 1;
        } else if (starts_with(p->name, "/device:CUSTOM:")) {
            pid = (p->id >= 0 && p->id < INT32_MAX) ? XP_CUSTOM_PID + p->id : XP_CUSTOM_PID;
        }
        xp_plane *xp = &planes[nxp++];
        xp->pid = pid;
        xp->p = p;
        plane_index(xp);
        if (!pid || !p->n_lines) continue;
        xp->lines = tl_xcalloc(p->n_lines, sizeof *xp->lines);
        for (size_t l = 0; l < p->n_lines; l++) {
            const Tlxp__XLine *L = p->lines[l];
            if (!L || !L->n_events || starts_with(L->name, "counters_")) continue;
            xp_line *xl = &xp->lines[xp->nlines++];
            xl->line = L;
            xl->tid = (uint32_t)(uint64_t)(L->display_id ? L->display_id : L->id);
            xl->name = *L->display_name ? L->display_name : L->name;
            xl->order = l;
        }
        qsort(xp->lines, xp->nlines, sizeof *xp->lines, cmp_line);
    }

    catalog_toplevel(x, planes, nxp, b);

    /* Complete events: pid ascending, tid ascending, then start/dur/name. */
    qsort(planes, nxp, sizeof *planes, cmp_plane_pid);
    size_t nevents;
    if ((rc = complete_events(&c, planes, nxp, &nevents, err))) goto out;
    if (!nevents) {
        rc = tl_errf(err, TL_EFORMAT,
                     "%s: XSpace has no trace events (no /host:CPU, /device:GPU:N or /device:CUSTOM "
                     "plane with a non-empty line)", path);
        goto out;
    }

    metadata_events(&c, planes, nxp, host.p);

    /* HLO module records. */
    {
        tl_buf hb = {0};
        hlo_from_space(x, path, &hb);
        tl_build_extra(b, TL_XPLANE_HLO_EXTRA, hb.p, hb.n);
        tl_buf_free(&hb);
    }

out:
    for (size_t i = 0; i < nxp; i++) {
        free(planes[i].em);
        free(planes[i].sm);
        free(planes[i].lines);
    }
    free(planes);
    free(hosts);
    tl_buf_free(&host);
    tl_buf_free(&c.args);
    tl_buf_free(&c.vals);
    tl_buf_free(&c.tmp);
    tl_vec_free(&c.kv);
    return rc;
}

/* Unpacks and validates an XSpace; *out must be freed with
 * tlxp__xspace__free_unpacked. */
static int unpack_space(const void *buf, size_t len, const char *path, Tlxp__XSpace **out, tl_err *err)
{
    *out = NULL;
    if (len == 0) return tl_errf(err, TL_EFORMAT, "%s: not an XSpace protobuf (empty file)", path);
    if (!tl_xplane_sniff(buf, len))
        return tl_errf(err, TL_EFORMAT,
                       "%s: not an XSpace protobuf (does not start with an XSpace.planes field; "
                       "first byte 0x%02x)", path, ((const unsigned char *)buf)[0]);
    Tlxp__XSpace *x = tlxp__xspace__unpack(NULL, len, buf);
    if (!x)
        return tl_errf(err, TL_EFORMAT,
                       "%s: not an XSpace protobuf, or truncated/corrupt (%zu bytes do not decode as "
                       "tensorflow.profiler.XSpace)", path, len);
    if (!x->n_planes) {
        tlxp__xspace__free_unpacked(x, NULL);
        return tl_errf(err, TL_EFORMAT, "%s: not an XSpace protobuf (no planes)", path);
    }
    *out = x;
    return 0;
}

int tl_xplane_parse(const void *buf, size_t len, const char *path, tl_build *b, tl_err *err)
{
    Tlxp__XSpace *x;
    int rc = unpack_space(buf, len, path, &x, err);
    if (rc) return rc;
    tl_build_set_format(b, "xplane");
    rc = convert(x, path, b, err);
    tlxp__xspace__free_unpacked(x, NULL);
    return rc;
}

int tl_xplane_hlo_blob(const void *buf, size_t len, const char *path, tl_buf *out, tl_err *err)
{
    Tlxp__XSpace *x;
    int rc = unpack_space(buf, len, path, &x, err);
    if (rc) return rc;
    hlo_from_space(x, path, out);
    tlxp__xspace__free_unpacked(x, NULL);
    return 0;
}

int tl_read_xplane(tl_source *src, const char *path, tl_build *b, tl_err *err)
{
    const char *buf;
    size_t len;
    int rc = tl_source_read_all(src, &buf, &len, err);
    if (rc) return rc;
    return tl_xplane_parse(buf, len, path, b, err);
}
