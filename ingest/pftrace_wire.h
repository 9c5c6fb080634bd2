/* pftrace_wire.h — the protobuf wire format as the Perfetto reader walks
 * it: one field at a time over a message's bytes, in place (no copies, no
 * allocation). Varints up to 10 bytes, fixed 64/32-bit values and
 * length-delimited values (a span of the message); groups and wire types 6
 * and 7 are malformed. Private to ingest/pftrace*.c. */
#ifndef TL_PFTRACE_WIRE_H
#define TL_PFTRACE_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PF_VARINT = 0, PF_I64 = 1, PF_LEN = 2, PF_I32 = 5 };

/* What went wrong with a field (pf_next's result when negative). */
enum {
    PF_E_VARINT_CUT = -1,  /* the message ends inside a varint */
    PF_E_VARINT_LONG = -2, /* a varint of more than 10 bytes */
    PF_E_LEN_PAST = -3,    /* a length runs past the end of the message */
    PF_E_FIXED_CUT = -4,   /* the message ends inside a fixed-size value */
    PF_E_WIRETYPE = -5,    /* a group or wire type 6/7 */
};

/* One field: its number, wire type and value. */
typedef struct pf_field {
    uint32_t num;
    unsigned wt;
    uint64_t v;                /* varint and fixed values */
    const unsigned char *s;    /* PF_LEN: the value's bytes */
    size_t n;                  /* PF_LEN: their length */
    const unsigned char *at;   /* where the field (its tag) starts */
} pf_field;

/* Reads a varint from *p (before end); 0 ok, else PF_E_VARINT_*. */
static inline int pf_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    const unsigned char *q = *p;
    if (q < end && *q < 0x80) {
        *v = *q;
        *p = q + 1;
        return 0;
    }
    uint64_t acc = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) { /* 10 bytes at most */
        if (q >= end) return PF_E_VARINT_CUT;
        unsigned char c = *q++;
        acc |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = acc;
            *p = q;
            return 0;
        }
    }
    return PF_E_VARINT_LONG;
}

/* The next field of the message *p..end into *f: 1 one read (*p moves
 * past it), 0 at the end of the message, or a negative PF_E_* with *p at
 * the field that failed. */
static inline int pf_next(const unsigned char **p, const unsigned char *end, pf_field *f)
{
    const unsigned char *q = *p;
    uint64_t tag, len;
    int rc;
    if (q >= end) return 0;
    f->at = q;
    if ((rc = pf_varint(&q, end, &tag))) return rc;
    f->num = (uint32_t)(tag >> 3);
    f->wt = (unsigned)(tag & 7);
    switch (f->wt) {
    case PF_VARINT:
        if ((rc = pf_varint(&q, end, &f->v))) return rc;
        break;
    case PF_LEN:
        if ((rc = pf_varint(&q, end, &len))) return rc;
        if (len > (uint64_t)(end - q)) return PF_E_LEN_PAST;
        f->s = q;
        f->n = (size_t)len;
        q += len;
        break;
    case PF_I64:
        if (end - q < 8) return PF_E_FIXED_CUT;
        memcpy(&f->v, q, 8);
        q += 8;
        break;
    case PF_I32: {
        uint32_t w;
        if (end - q < 4) return PF_E_FIXED_CUT;
        memcpy(&w, q, 4);
        f->v = w;
        q += 4;
        break;
    }
    default: return PF_E_WIRETYPE;
    }
    *p = q;
    return 1;
}

/* A string field's text: up to its first NUL byte, as a C string of it
 * reads (the stored texts are NUL-terminated). */
static inline size_t pf_strlen(const unsigned char *s, size_t n)
{
    const void *z = memchr(s, 0, n);
    return z ? (size_t)((const unsigned char *)z - s) : n;
}

#endif
