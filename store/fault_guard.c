/* fault_guard.c — the last line of defence of store reads: a SIGSEGV or
 * SIGBUS raised while a thread is inside a guarded read (STORE_GUARDED in
 * store_internal.h) returns that read as a TL_ESTORE error instead of
 * killing the process.
 *
 * The checks of env_check.c and of every chunk keep reads inside the file
 * and the values they decode; what remains is LMDB itself following a
 * damaged B-tree page (a node offset or key size pointing past its page).
 * Guarded regions only read: a read transaction holds no lock that a jump
 * out of LMDB could leave taken, and the cursor left behind is never used
 * again (the reader reports the fault; its transaction is aborted as
 * usual). Callbacks of the caller run unguarded, so that a fault in their
 * code is not mistaken for damage. A fault outside a guarded region goes
 * to the disposition that was in place before (default: the process dies;
 * sanitizers: their report). */
#include "store/store_internal.h"

#include <pthread.h>

static _Thread_local sigjmp_buf *guard;
static _Thread_local volatile sig_atomic_t fault_sig;
static struct sigaction prev_segv, prev_bus;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    if (guard) {
        fault_sig = sig;
        siglongjmp(*guard, 1);
    }
    /* not a guarded read: to the previous disposition (the input guard
     * of ingest/input_guard.c, a sanitizer, or the default), this handler
     * staying in place for later reads */
    tl_sig_pass_on(sig == SIGBUS ? &prev_bus : &prev_segv, sig, si, uc);
}

static void install(void)
{
    tl_sig_install(SIGSEGV, on_fault, &prev_segv);
    tl_sig_install(SIGBUS, on_fault, &prev_bus);
}

void tl_fault_guard_install(void) { pthread_once(&installed, install); }

sigjmp_buf *tl_fault_guard_get(void) { return guard; }

void tl_fault_guard_set(sigjmp_buf *g) { guard = g; }

int tl_fault_error(const char *dir, tl_err *err)
{
    int sig = fault_sig;
    return tl_errf(err, TL_ESTORE,
                   "store %s: reading data.mdb faulted (%s): the store is damaged; run `tracelens check` "
                   "(--repair removes the damaged traces, to be ingested again)",
                   dir, sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
}
