/* zip_write.h — a zip archive written front to back, entries deflated as
 * they are streamed in (report/zip_write.c). Internal to report/: the
 * SpreadsheetML writer (xlsx_ooxml.c) packages workbooks with it. */
#ifndef TL_REPORT_ZIP_WRITE_H
#define TL_REPORT_ZIP_WRITE_H

#include "base/base.h"

#include <stddef.h>

typedef struct tl_zipw tl_zipw;

/* Creates (truncates) path. */
int tl_zipw_open(const char *path, tl_zipw **out, tl_err *err);
/* Starts an entry. big: the entry may exceed 4 GiB, so its local header
 * carries zip64 sizes (readers need zip 4.5 then; most entries are small). */
int tl_zipw_begin(tl_zipw *z, const char *name, int big, tl_err *err);
int tl_zipw_write(tl_zipw *z, const void *p, size_t n, tl_err *err);
int tl_zipw_end(tl_zipw *z, tl_err *err);
/* Ends the entry's deflate segment (a byte-aligned sync flush) and starts
 * a fresh one that refers to nothing before: the bytes an entry deflated
 * apart in segments makes (tl_zdef_cut, tl_zdef_append), fed the same
 * blocks. */
int tl_zipw_cut(tl_zipw *z, tl_err *err);
/* An entry deflated apart from the archive, on any thread, into memory
 * (the same bytes as streaming it into the archive in the same blocks),
 * then added whole with tl_zipw_add_deflated. */
typedef struct tl_zdef tl_zdef;
tl_zdef *tl_zdef_new(const char *name);
int tl_zdef_write(tl_zdef *d, const void *p, size_t n, tl_err *err);
int tl_zdef_finish(tl_zdef *d, tl_err *err);
/* Ends a segment as tl_zipw_cut does: a segment deflated apart that is
 * not the entry's last ends with it, and its successor is a new tl_zdef. */
int tl_zdef_cut(tl_zdef *d, tl_err *err);
/* Appends next's bytes, CRC and sizes to d's, and frees next: segments
 * deflated apart (each cut, the last finished), joined in order. */
void tl_zdef_append(tl_zdef *d, tl_zdef *next);
void tl_zdef_free(tl_zdef *d);
/* Adds a finished entry as the next one (big: as in tl_zipw_begin). */
int tl_zipw_add_deflated(tl_zipw *z, const tl_zdef *d, int big, tl_err *err);
/* The same in two steps, so that entries are written on several threads:
 * tl_zipw_reserve makes d the next entry and returns its offset (one
 * caller at a time, in entry order, with no other call on z in between);
 * tl_zipw_put_at then writes its header and data there (pwrite: any
 * thread, several at once). The next other call on z waits for none of
 * them: every put_at must have returned before it. */
int tl_zipw_reserve(tl_zipw *z, const tl_zdef *d, int big, uint64_t *off, tl_err *err);
int tl_zipw_put_at(tl_zipw *z, const tl_zdef *d, int big, uint64_t off, tl_err *err);
/* Writes the central directory and closes the file; frees z either way. */
int tl_zipw_close(tl_zipw *z, tl_err *err);
/* Closes and frees without finishing (the caller removes the file). */
void tl_zipw_abort(tl_zipw *z);

#endif
