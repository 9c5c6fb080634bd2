/* input_guard.h — mapped input files that shrink while they are read.
 *
 * A plain input is read through a shared mapping (source.c). Should the
 * file be truncated meanwhile (another process rewriting it, a copy still
 * in progress), touching a page past its new end raises SIGBUS, which
 * would end the process. The guard turns that into an error of the one
 * input: its SIGBUS handler replaces the missing pages of a registered
 * mapping with zero pages and records the fault, and the reader, when
 * done with the file, asks whether it stayed as it was opened. */
#ifndef TL_INPUT_GUARD_H
#define TL_INPUT_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* Registers the mapping [base, base + len) of an input; returns its slot
 * (>= 0), or -1 when every slot is taken (the mapping is then unguarded:
 * a fault in it ends the process as before). Installs the handler once. */
int tl_input_guard_add(const void *base, size_t len);
/* Unregisters a slot (before its mapping is unmapped). -1 is ignored. */
void tl_input_guard_remove(int slot);
/* The offset in the mapping of the first page found missing, or
 * UINT64_MAX when none was. */
uint64_t tl_input_guard_fault(int slot);

#endif
