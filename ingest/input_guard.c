/* input_guard.c — SIGBUS in a mapped input file becomes a per-file error
 * (see input_guard.h).
 *
 * The handler only reads the slot table through lock-free atomics and
 * calls mmap, so it is safe in a signal context. It maps anonymous zero
 * pages over the mapping from the faulting page to its end: a page that
 * raises SIGBUS lies wholly past the file's end, and so does every page
 * after it. The faulting read then runs again and sees zeros; the parser
 * fails or finishes on them, and the caller reports the file as changed.
 * A SIGBUS outside every registered mapping goes to the disposition that
 * was in place before (the store's fault guard, a sanitizer, or the
 * default: the process dies). */
#include "ingest/input_guard.h"
#include "base/base.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS 256

typedef struct guard_slot {
    atomic_int used;         /* claimed by an open source */
    atomic_uintptr_t base;   /* 0 while the slot is being set up or torn down */
    atomic_size_t len;
    atomic_uint_fast64_t fault; /* first missing page's offset, UINT64_MAX none */
} guard_slot;

static guard_slot slots[SLOTS];
static struct sigaction prev_bus;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t base = atomic_load(&slots[i].base);
        size_t len = atomic_load(&slots[i].len);
        if (!base || a < base || a - base >= len) continue;
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t from = a & ~(page - 1);
        if (from < base) from = base;
        void *p = mmap((void *)from, base + len - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
        if (p == MAP_FAILED) break;
        uint_fast64_t off = from - base, was = atomic_load(&slots[i].fault);
        while (off < was && !atomic_compare_exchange_weak(&slots[i].fault, &was, off)) {
        }
        return;
    }
    tl_sig_pass_on(&prev_bus, sig, si, uc);
}

static void install(void) { tl_sig_install(SIGBUS, on_bus, &prev_bus); }

int tl_input_guard_add(const void *base, size_t len)
{
    pthread_once(&installed, install);
    for (int i = 0; i < SLOTS; i++) {
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&slots[i].used, &free_slot, 1)) continue;
        atomic_store(&slots[i].len, len);
        atomic_store(&slots[i].fault, UINT64_MAX);
        atomic_store(&slots[i].base, (uintptr_t)base);
        return i;
    }
    return -1;
}

void tl_input_guard_remove(int slot)
{
    if (slot < 0) return;
    atomic_store(&slots[slot].base, 0);
    atomic_store(&slots[slot].used, 0);
}

uint64_t tl_input_guard_fault(int slot)
{
    return slot < 0 ? UINT64_MAX : (uint64_t)atomic_load(&slots[slot].fault);
}
