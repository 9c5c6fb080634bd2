/* cmd_check.c — the store's upkeep commands: check (verify every trace,
 * optionally removing the damaged ones) and compact (give the space of
 * removed traces back to the file system). */
#include "tools/cli.h"

#include <stdlib.h>
#include <string.h>

static const char *CHECK_HELP =
    "Usage: tracelens check [--db DIR] [--repair]\n"
    "\n"
    "Verifies the store: data.mdb's meta pages and length, then every catalog\n"
    "record (checksum, JSON) and every column chunk of every trace (checksum,\n"
    "header, a full decode, chunk numbering). Prints one line per damaged trace,\n"
    "tab-separated: id (0000000000000000 for a record whose key names no trace)\n"
    "and the first problem found; then a summary line.\n"
    "\n"
    "Options:\n"
    "  --db DIR    the store directory (see tracelens --help)\n"
    "  --repair    delete the damaged traces whole (catalog record and chunks), in\n"
    "              one transaction; each line then starts with \"removed\". Ingest\n"
    "              those traces again to get them back.\n"
    "\n"
    "Exit codes: 0 the store is sound, or --repair removed all damage; 3 damage\n"
    "found (and not repaired), or the store could not be opened or walked.\n"
    "The check only reads (it works on a read-only store); --repair writes.";

static const char *COMPACT_HELP =
    "Usage: tracelens compact [--db DIR] [--into DIR2]\n"
    "\n"
    "Gives disk space back: `rm` frees a trace's pages for reuse by later\n"
    "ingests, but data.mdb never shrinks. compact writes a copy holding only the\n"
    "pages in use (LMDB's compacting copy, pages in key order).\n"
    "\n"
    "Options:\n"
    "  --db DIR     the store directory (see tracelens --help)\n"
    "  --into DIR2  write the compacted store to DIR2 (a new folder, or one without\n"
    "               a store) and leave the store as it is; readers and writers of\n"
    "               the store go on meanwhile (the copy is one snapshot)\n"
    "\n"
    "Without --into the store is compacted in place: with the writer lock held,\n"
    "the copy is written into a folder inside DIR, made durable and renamed over\n"
    "data.mdb, so a crash leaves either the old or the new file. This needs the\n"
    "store to itself: when another process has it open, compact refuses (exit 1)\n"
    "and changes nothing; a process that opens it while compact runs waits, and\n"
    "fails once (\"not an LMDB file\") if it started before the rename — run it\n"
    "again. The disk must hold the copy until the rename.\n"
    "\n"
    "Prints data.mdb's size before and after. Exit codes: 0 done; 1 the copy\n"
    "failed (full disk, store in use) and nothing changed; 3 no store.";

enum { C_HELP, C_DB, C_REPAIR, C_INTO };
static const tl_cli_opt CHECK_OPTS[] = {
    [C_HELP] = {"-h|--help", TL_CLI_FLAG},
    [C_DB] = {"--db", TL_CLI_VALUE},
    [C_REPAIR] = {"--repair", TL_CLI_FLAG},
    [C_INTO] = {"--into", TL_CLI_VALUE},
};

typedef struct upkeep_args {
    const char *db, *into;
    int repair;
} upkeep_args;

/* Parses check's or compact's command line (compact: --into, check:
 * --repair); -1 when --help was printed, else 0 or an exit code. */
static int parse_upkeep(int argc, char **argv, int compact, upkeep_args *a)
{
    const char *name = compact ? "compact" : "check";
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, CHECK_OPTS, sizeof CHECK_OPTS / sizeof *CHECK_OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        if (k == C_HELP) {
            puts(compact ? COMPACT_HELP : CHECK_HELP);
            return -1;
        }
        if (k == C_DB) a->db = p.val;
        else if (k == C_REPAIR && !compact) a->repair = 1;
        else if (k == C_INTO && compact) a->into = p.val;
        else if (k == TL_CLI_BAD) {
            fprintf(stderr, "tracelens %s: %s\n", name, p.msg);
            return TL_EXIT_USAGE;
        } else {
            fprintf(stderr, "tracelens %s: unknown argument %s%s (see --help)\n", name, p.arg, tl_cli_hint(&p));
            return TL_EXIT_USAGE;
        }
    }
    return 0;
}

typedef struct check_tally {
    uint64_t traces, chunks, damaged, removed;
} check_tally;

static void check_line(void *ctx, const tl_check_finding *f)
{
    check_tally *t = ctx;
    t->traces += f->id != 0;
    t->chunks += f->chunks;
    if (f->ok) return;
    t->damaged++;
    t->removed += f->removed != 0;
    char hex[17];
    tl_id_format(f->id, hex);
    printf("%s%s\t%s\n", f->removed ? "removed " : "", hex, f->problem);
}

int tl_cmd_check(int argc, char **argv)
{
    upkeep_args a = {0};
    int rc = parse_upkeep(argc, argv, 0, &a);
    if (rc) return rc < 0 ? TL_EXIT_OK : rc;
    tl_store *s = tl_cli_store_read(a.db);
    if (!s) return TL_EXIT_STORE;
    check_tally t = {0};
    tl_err err = {0};
    rc = tl_store_check(s, a.repair, check_line, &t, &err);
    printf("checked %llu trace(s), %llu chunk(s): %llu damaged%s\n", (unsigned long long)t.traces,
           (unsigned long long)t.chunks, (unsigned long long)t.damaged,
           t.removed ? ", removed (ingest them again)" : "");
    if (rc) fprintf(stderr, "tracelens: %s\n", err.msg);
    tl_store_close(s);
    return rc ? TL_EXIT_STORE : TL_EXIT_OK;
}

int tl_cmd_compact(int argc, char **argv)
{
    upkeep_args a = {0};
    int rc = parse_upkeep(argc, argv, 1, &a);
    if (rc) return rc < 0 ? TL_EXIT_OK : rc;
    tl_store *s = tl_cli_store_read(a.db);
    if (!s) return TL_EXIT_STORE;
    tl_err err = {0};
    uint64_t before = 0, after = 0;
    if (a.into) {
        rc = tl_store_compact(s, a.into, &err);
        if (!rc) printf("compacted %s into %s\n", tl_store_dir(s), a.into);
    } else {
        rc = tl_store_compact_replace(s, &before, &after, &err);
        if (!rc)
            printf("compacted %s: data.mdb %.1f MB -> %.1f MB\n", tl_store_dir(s), (double)before / 1e6,
                   (double)after / 1e6);
    }
    if (rc) fprintf(stderr, "tracelens: %s\n", err.msg);
    tl_store_close(s);
    return rc ? TL_EXIT_FAIL : TL_EXIT_OK;
}
