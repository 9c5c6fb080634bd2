/* test_json.c — the JSON scanner: exact µs→ns parsing, strings and
 * escapes, UTF-8 validation, nesting limit, error messages with byte
 * offsets, and the Kineto reader on small documents (good and bad). */
#include "tests/unit/tl_test.h"
#include "ingest/ingest.h"
#include "ingest/json.h"

#include <stdlib.h>
#include <string.h>

static int64_t ns_of(const char *txt, int *rc)
{
    tl_err err = {0};
    tl_json j;
    tl_json_init_buf(&j, txt, strlen(txt), "t", &err);
    int64_t v = -1;
    *rc = tl_json_us_to_ns(&j, &v, NULL);
    return v;
}

/* The same value with text around it, so that the scanner's fast paths
 * (which need slack before and after the token) are the ones taken. */
static char padded[512];
static tl_json *pad_init(tl_json *j, tl_err *err, const char *txt)
{
    snprintf(padded, sizeof padded, "{\"ts\": %s%64s", txt, "");
    tl_json_init_buf(j, padded, strlen(padded), "t", err);
    j->pos = 7;
    return j;
}
static int64_t ns_pad(const char *txt, int *rc)
{
    tl_err err = {0};
    tl_json j;
    int64_t v = -1;
    *rc = tl_json_us_to_ns(pad_init(&j, &err, txt), &v, NULL);
    return v;
}
static int64_t i64_pad(const char *txt, int *rc)
{
    tl_err err = {0};
    tl_json j;
    int64_t v = -1;
    *rc = tl_json_i64(pad_init(&j, &err, txt), &v);
    return v;
}
/* tl_json_skip_min of txt, padded; returns the minified text or NULL. */
static const char *min_pad(const char *txt)
{
    static tl_buf out;
    tl_err err = {0};
    tl_json j;
    if (tl_json_skip_min(pad_init(&j, &err, txt), &out) != 0) return NULL;
    return out.p;
}

/* Parses a Kineto document from memory; returns the reader's status. */
static int kineto(const char *doc, tl_err *err, size_t *nev)
{
    tl_source *src;
    int rc = tl_source_open_mem(doc, strlen(doc), "doc.json", &src, err);
    if (rc) return rc;
    tl_build *b = tl_build_new();
    rc = tl_read_kineto(src, "doc.json", b, err);
    if (!rc) rc = tl_build_tree(b, err);
    if (nev) *nev = tl_build_nevents(b);
    tl_build_free(b);
    tl_source_close(src);
    return rc;
}

static void bad(const char *doc, const char *want)
{
    tl_err err = {0};
    int rc = kineto(doc, &err, NULL);
    tl_test_checks++;
    if (rc == 0 || !strstr(err.msg, want) || !strstr(err.msg, "doc.json")) {
        tl_test_failures++;
        fprintf(stderr, "bad input %.60s: rc=%d msg='%s', wanted '%s'\n", doc, rc, err.msg, want);
    }
}

int main(void)
{
    int rc;
    CHECK_EQ_I(ns_of("2204338330237.582,", &rc), 2204338330237582LL);
    CHECK_EQ_I(ns_of("3.086}", &rc), 3086);
    CHECK_EQ_I(ns_of("0.5 ", &rc), 500);
    CHECK_EQ_I(ns_of("-1.25,", &rc), -1250);
    CHECK_EQ_I(ns_of("12,", &rc), 12000);
    CHECK_EQ_I(ns_of("1e3,", &rc), 1000000);
    CHECK_EQ_I(ns_of("1.0005,", &rc), 1000);   /* half to even */
    CHECK_EQ_I(ns_of("1.0015,", &rc), 1002);
    CHECK_EQ_I(ns_of("1.00151,", &rc), 1002);
    CHECK_EQ_I(ns_of("2.5e-3,", &rc), 2);
    ns_of("123456789012345678.5,", &rc);
    CHECK(rc != 0); /* out of int64 range in ns */
    ns_of("1.,", &rc);
    CHECK(rc != 0);
    ns_of("-,", &rc);
    CHECK(rc != 0);

    /* the fast paths agree with the general ones */
    const char *nums[] = {"2204338330237.582,", "3.086}", "0.5 ", "-1.25,", "12,", "1e3,", "1.0005,", "1.0015,",
                          "1.00151,", "2.5e-3,", "123456789012345.678,", "1234567890123456.5,", "0.000,",
                          "-0.001]", "7.12\n", "99999999.999,", "00.5,", "1.,", "-,", "123456789012345678.5,"};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        int r1, r2;
        int64_t a = ns_of(nums[i], &r1), b = ns_pad(nums[i], &r2);
        CHECK_EQ_I(r1 == 0, r2 == 0);
        if (r1 == 0) CHECK_EQ_I(a, b);
    }
    CHECK_EQ_I(ns_pad("123456789012345.678,", &rc), 123456789012345678LL);
    CHECK_EQ_I(i64_pad("0,", &rc), 0);
    CHECK_EQ_I(i64_pad("7}", &rc), 7);
    CHECK_EQ_I(i64_pad("-42]", &rc), -42);
    CHECK_EQ_I(i64_pad("123456789012345,", &rc), 123456789012345LL);
    CHECK_EQ_I(i64_pad("9223372036854775807,", &rc), INT64_MAX);
    CHECK_EQ_I(i64_pad("-9223372036854775808,", &rc), INT64_MIN);
    i64_pad("9223372036854775808,", &rc);
    CHECK(rc != 0);
    CHECK_EQ_I(i64_pad("012,", &rc), 0); /* "0", then "12" is the caller's error */
    i64_pad("1.5,", &rc);
    CHECK(rc != 0);
    CHECK_EQ_S(min_pad("[[1, 2], [], [3,4 ,5]],"), "[[1,2],[],[3,4,5]]");
    CHECK_EQ_S(min_pad("[\"c10::BFloat16\", \"\", \"Scalar\"],"), "[\"c10::BFloat16\",\"\",\"Scalar\"]");
    CHECK_EQ_S(min_pad("[[\n  -1, 0 ], [ ] ]}"), "[[-1,0],[]]");
    CHECK_EQ_S(min_pad("[1.5e3, true, null, {\"a\": [1]}],"), "[1.5e3,true,null,{\"a\":[1]}]");
    CHECK_EQ_S(min_pad("[\"a\\\"b\", \"\xc3\xa9\"],"), "[\"a\\\"b\",\"\xc3\xa9\"]");
    CHECK(min_pad("[1, 2,],") == NULL);
    CHECK(min_pad("[01],") == NULL);
    CHECK(min_pad("[1 2],") == NULL);
    CHECK(min_pad("[\"a\x01\"],") == NULL);

    /* strings */
    {
        const char *txt = "\"a\\u00e9\\n\\\"b\\ud83d\\ude00\"";
        tl_err err = {0};
        tl_json j;
        tl_json_init_buf(&j, txt, strlen(txt), "t", &err);
        const char *s;
        size_t n;
        int esc;
        CHECK_EQ_I(tl_json_string(&j, &s, &n, &esc), 0);
        CHECK(esc);
        tl_buf out = {0};
        tl_json_unescape(&j, s, n, &out);
        CHECK_EQ_S(out.p, "a\xc3\xa9\n\"b\xf0\x9f\x98\x80");
        tl_buf_free(&out);
    }

    /* good document: flows, metadata, string pid, unknown keys, any key order */
    {
        const char *doc = "{\"schemaVersion\":1,\"traceEvents\":[\n"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":100.5,\"dur\":10,"
            "\"args\":{\"External id\":1,\"Input Dims\":[[2, 3], [3, 4]]}},\n"
            "{\"dur\":2,\"ts\":101,\"name\":\"cudaLaunchKernel\",\"cat\":\"cuda_runtime\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"args\":{\"correlation\":7}},\n"
            "{\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":101,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
            "{\"ph\":\"f\",\"id\":7,\"pid\":0,\"tid\":7,\"ts\":105,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
            "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":105,\"dur\":3.25,\"args\":{\"correlation\":7,\"stream\":7}},\n"
            "{\"ph\":\"i\",\"s\":\"g\",\"pid\":\"Traces\",\"tid\":\"x\",\"ts\":1},\n"
            "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"python3\"}}],\n"
            "\"deviceProperties\":[{\"name\":\"GPU\"}]}\n";
        tl_err err = {0};
        size_t nev = 0;
        CHECK_EQ_I(kineto(doc, &err, &nev), 0);
        CHECK_EQ_I(nev, 3);
    }

    /* bad inputs: each names the file, a byte offset and what was expected */
    bad("", "empty file");
    bad("[1,2]", "expected '{'");
    bad("{\"a\":1}", "no \"traceEvents\"");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2}", "byte");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2}]", "end of input");
    bad("{\"traceEvents\":{}}", "traceEvents must be an array");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":\"1\",\"dur\":2}]}", "expected a number");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1.5}]}", "expected an integer");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1e30,\"dur\":2}]}", "out of range");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":99999999999999999999}]}", "out of range");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"\xff\",\"ts\":1,\"dur\":2}]}", "invalid UTF-8");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"ts\":2,\"dur\":2}]}", "duplicate key");
    bad("{\"traceEvents\":[],\"traceEvents\":[]}", "duplicate key");
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"dur\":2}]}", "without \"ts\"");
    bad("{\"traceEvents\":[{\"ts\":1}]}", "without \"ph\"");
    bad("{\"traceEvents\":[]} x", "end of input after the trace object");
    /* a promoted args key takes any JSON value, but a value it must be */
    bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"args\":{\"stream\":nul}}]}", "expected a JSON value");
    {
        /* nesting deeper than the limit */
        size_t depth = TL_JSON_MAX_DEPTH + 10;
        char *doc = malloc(depth * 2 + 64);
        char *p = doc + sprintf(doc, "{\"traceEvents\":[],\"x\":");
        for (size_t i = 0; i < depth; i++) *p++ = '[';
        for (size_t i = 0; i < depth; i++) *p++ = ']';
        strcpy(p, "}");
        bad(doc, "nesting deeper");
        free(doc);
    }
    return tl_test_done("test_json");
}
