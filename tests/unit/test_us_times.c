/* test_us_times.c — µs values as the reference reads them: tl_ns_us (the
 * double nearest ns / 1000) against strtod of the same decimal text at
 * every magnitude (around 2^53 ns, epoch timestamps, the int64 ends,
 * negative times, halfway cases); tl_json_us_to_ns's sub-ns double for
 * texts with more than 3 decimals (up to 18, exponents, digits past the
 * 19th); and a trace with such times end to end: the sub_ns table, the
 * trace's µs accessors and the host nesting (spec §4.2) on those doubles. */
#include "tests/unit/tl_test.h"
#include "query/core/trace.h"
#include "ingest/ingest.h"
#include "ingest/json.h"

#include <inttypes.h>
#include <stdlib.h>

/* strtod of ns written as decimal µs with 3 decimals */
static double text_us(int64_t ns)
{
    char buf[64];
    uint64_t m = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", m / 1000, (unsigned)(m % 1000));
    return strtod(buf, NULL);
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0 || (a == 0 && b == 0); }

static void check_ns_us(int64_t ns)
{
    double got = tl_ns_us(ns), want = text_us(ns);
    tl_test_checks++;
    if (!same_double(got, want)) {
        tl_test_failures++;
        fprintf(stderr, "tl_ns_us(%" PRId64 ") = %.17g, the text's double is %.17g\n", ns, got, want);
    }
}

static void test_ns_us(void)
{
    const int64_t p53 = (int64_t)1 << 53;
    const int64_t edges[] = {0, 1, 999, 1000, 1001, p53 - 1, p53, p53 + 1, p53 + 125, p53 + 375, p53 + 500,
                             p53 + 625, p53 + 875, 1712195495519689047, 1712195495519689125,
                             1712195495519689375, 1683564901548726000, 9007199254740993000,
                             9007199254740993500, 9007199254740994500, 9007199254740995999, INT64_MAX,
                             INT64_MAX - 500, INT64_MAX - 1500};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        check_ns_us(edges[i]);
        check_ns_us(-edges[i]);
    }
    check_ns_us(INT64_MIN + 1);
    /* (double)ns / 1000.0 rounds twice here: the text says ...495.8 is off */
    CHECK(tl_ns_us(1682725898348495807) == 1682725898348495.75);
    CHECK(tl_ns_us(1712195495519689047) == 1712195495519689.0);
    /* random values at every magnitude */
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t ns = (int64_t)(x >> (i % 64)) >> 1;
        check_ns_us(i & 1 ? -ns : ns);
    }
}

/* tl_json_us_to_ns of txt: ns, and the sub-ns double (NaN when not set) */
static int64_t us_parse(const char *txt, double *sub)
{
    tl_err err = {0};
    tl_json j;
    char buf[320];
    snprintf(buf, sizeof buf, "%s%64s", txt, "");
    tl_json_init_buf(&j, buf, strlen(buf), "t", &err);
    int64_t v = -1;
    *sub = NAN;
    int rc = tl_json_us_to_ns(&j, &v, sub);
    CHECK_EQ_I(rc, 0);
    return v;
}

static void check_sub(const char *txt, int64_t ns, int has_sub)
{
    double sub;
    int64_t v = us_parse(txt, &sub);
    CHECK_EQ_I(v, ns);
    if (has_sub) {
        tl_test_checks++;
        if (!same_double(sub, strtod(txt, NULL))) {
            tl_test_failures++;
            fprintf(stderr, "%s: sub-ns µs %.17g, expected %.17g\n", txt, sub, strtod(txt, NULL));
        }
    } else {
        CHECK(isnan(sub));
    }
}

static void test_sub_ns_parse(void)
{
    check_sub("63.813", 63813, 0);
    check_sub("63.813000000", 63813, 0);
    check_sub("1712195495519689.047", 1712195495519689047, 0);
    check_sub("-5.25", -5250, 0);
    check_sub("12e3", 12000000, 0);
    /* digits below the ns: the ns rounds half to even, the double is strtod's */
    check_sub("63.813000000000002387", 63813, 1);       /* 18 decimals */
    check_sub("0.123456789012345678", 123, 1);
    check_sub("1.0005", 1000, 1);                      /* a tie: even */
    check_sub("1.0015", 1002, 1);
    check_sub("-5.0001", -5000, 1);                    /* negative */
    check_sub("1712195495519689.0474999", 1712195495519689047, 1); /* 23 digits */
    check_sub("1712195495519689.0475", 1712195495519689048, 1);
    check_sub("1712195495519689.0465000000001", 1712195495519689047, 1);
    check_sub("-1712195495519689.0485", -1712195495519689048, 1);
    check_sub("1e-4", 0, 1);
    check_sub("2.5e-7", 0, 1);
    check_sub("1234567890.12345678901234", 1234567890123, 1); /* digits past the 19th */
    check_sub("0.00000000000000000000001", 0, 1);
    /* a text longer than any buffer: 150 decimals */
    char longtxt[200] = "2.5";
    for (int i = 0; i < 150; i++) strcat(longtxt, i == 149 ? "1" : "0");
    check_sub(longtxt, 2500, 1);
}

static char dir[256];
static tl_store *store;

/* Ingests a trace of complete events given as "cat,name,ts,dur" text
 * (all on pid 1, tid 1) and returns it loaded (NULL on failure). */
static tl_trace *ingest(const char *name, const char *const *ev, size_t n, tl_reader **r)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs("{\"traceEvents\":[\n", f);
    for (size_t i = 0; i < n; i++) {
        char cat[32], nm[32], ts[64], dur[64];
        if (sscanf(ev[i], "%31[^,],%31[^,],%63[^,],%63s", cat, nm, ts, dur) != 4) return NULL;
        fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%s,\"dur\":%s}\n",
                i ? "," : "", cat, nm, ts, dur);
    }
    fputs("]}\n", f);
    fclose(f);
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result res;
    tl_err err = {0};
    tl_trace *t = NULL;
    int rc = tl_ingest_file(store, path, &o, &res, &err);
    if (!rc) rc = tl_reader_open(store, r, &err);
    if (!rc) rc = tl_trace_load(*r, res.id, &t, &err);
    if (rc) fprintf(stderr, "%s: %s\n", name, err.msg);
    CHECK(rc == 0 && t && t->n == n);
    return t && t->n == n ? t : NULL;
}

static void test_trace_times(void)
{
    /* row 1's dur has 10 decimals: its end passes row 0's by 1e-10 µs
     * (the ns columns say they end together), so the reference drops it
     * from the tree (an overlap >= 1 µs); row 2 nests under row 0 */
    static const char *const small[] = {
        "cpu_op,outer,100,10",
        "cpu_op,bleeds,105,5.0000000001",
        "cpu_op,inner,106.5,0.000000000000000001",
    };
    tl_reader *r = NULL;
    tl_trace *t = ingest("small", small, 3, &r);
    if (t) {
        CHECK(t->dur_us_sub != NULL);
        CHECK(tl_trace_dur_us(t, 1) == strtod("5.0000000001", NULL));
        CHECK(tl_trace_dur_us(t, 2) == 1e-18);
        CHECK(tl_trace_dur_us(t, 0) == 10.0);
        CHECK(tl_trace_ts_us(t, 2) == 106.5);
        CHECK_EQ_I(t->dur[1], 5000);
        CHECK_EQ_I(t->parent[1], -1);
        CHECK_EQ_I(t->parent[2], 0);
        tl_sub_ns sub;
        tl_err err = {0};
        CHECK_EQ_I(tl_sub_ns_read(r, t->id, t->n, &sub, &err), 0);
        CHECK_EQ_I(sub.n, 2);
        if (sub.n == 2) CHECK(sub.row[0] == 1 && sub.row[1] == 2 && sub.ts_us[0] == 105.0);
    }
    tl_trace_free(t);
    tl_reader_close(r);

    /* epoch scale: 0.25 µs apart doubles. Row 1 ends at ...699.05 in ns,
     * past row 0 by more than the 1 µs bleed, but its doubles round to
     * ...695.0 + 3.95 = ...699.0, row 0's end, so it nests; rows 2 and 3
     * start at the same double (...700.0), so they keep UID order though
     * row 3's ns is earlier, and both end at ...700.25: row 3 nests in
     * row 2 (in ns order row 2 would come second, end past row 3 and be
     * dropped) */
    static const char *const epoch[] = {
        "cpu_op,outer,1712195495519689.000,10.000",
        "cpu_op,inner,1712195495519695.100,3.950",
        "cpu_op,a,1712195495519700.100,0.200",
        "cpu_op,b,1712195495519700.010,0.200",
    };
    t = ingest("epoch", epoch, 4, &r);
    if (t) {
        CHECK(t->ts_us_sub == NULL && t->dur_us_sub == NULL);
        CHECK(tl_trace_ts_us(t, 1) == 1712195495519695.0);
        CHECK_EQ_I(t->parent[1], 0);
        CHECK_EQ_I(t->parent[2], -1);
        CHECK_EQ_I(t->parent[3], 2);
    }
    tl_trace_free(t);
    tl_reader_close(r);
}

int main(void)
{
    test_ns_us();
    test_sub_ns_parse();
    store = tl_test_store_open("tl_test_us_", dir, sizeof dir);
    test_trace_times();
    tl_test_store_close(store, dir);
    return tl_test_done("test_us_times");
}
