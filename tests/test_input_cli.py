#!/usr/bin/env python3
"""The CLI's input hardening: the folder walk (link loops, links to files,
paths past PATH_MAX), read-only `tracelens sql`, the plugin rule of
--extension_file, --csv-safe, and the input limits (--max-input-bytes,
TRACELENS_MAX_INPUT_BYTES, TRACELENS_MAX_RATIO). Usage: test_input_cli.py BUILD_DIR"""
import gzip, json, os, shutil, subprocess, sys, tempfile, time

from tlcheck import Checks

build = sys.argv[1]
build = os.path.abspath(build)
tl = os.path.join(build, "tracelens")
check = Checks()


def trace(*names):
    """A Kineto trace: each op launches one kernel (5 us) through cudaLaunchKernel."""
    ev = []
    for i, n in enumerate(names):
        ts, ext, corr = 100 + 20 * i, i + 1, 100 + i
        ev.append({"ph": "X", "cat": "cpu_op", "name": n, "pid": 1, "tid": 1, "ts": ts, "dur": 10,
                   "args": {"External id": ext}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": ts + 1, "dur": 1, "args": {"correlation": corr, "External id": ext}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k%d" % i, "pid": 0, "tid": 7, "ts": ts + 2, "dur": 5,
                   "args": {"External id": ext, "correlation": corr, "device": 0, "stream": 7}})
        ev.append({"ph": "f", "cat": "ac2g", "id": corr, "pid": 0, "tid": 7, "ts": ts + 2})
    return json.dumps({"traceEvents": ev})


def run(args, env=None, cwd=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([tl] + args, capture_output=True, text=True, env=e, cwd=cwd, timeout=timeout)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def tree(root):
    """Every path under root (links not followed)."""
    out = set()
    for d, dirs, files in os.walk(root):
        out.update(os.path.join(d, n) for n in dirs + files)
    return out


def test_walk(tmp):
    # d/ holds two loop links (to d/ and to d/sub/) and a link to a file
    # outside; every file must be ingested once, at once
    d = os.path.join(tmp, "walk", "d")
    write(os.path.join(d, "a.json"), trace("aten::add"))
    write(os.path.join(d, "sub", "b.json"), trace("aten::sub"))
    write(os.path.join(tmp, "walk", "outside", "c.json"), trace("aten::mul"))
    os.symlink("..", os.path.join(d, "sub", "up"))
    os.symlink("../sub", os.path.join(d, "sub", "loop"))
    os.symlink("../outside/c.json", os.path.join(d, "c_link.json"))
    db = os.path.join(tmp, "walk", "db")
    t0 = time.time()
    r = run(["ingest", "--db", db, "-q", d], timeout=30)
    dt = time.time() - t0
    check(r.returncode == 0, "walk: ingest exit %d: %s" % (r.returncode, r.stderr))
    check(dt < 10, "walk: ingest of a folder with link loops took %.1f s" % dt)
    paths = [line.split("\t")[2] for line in r.stdout.splitlines()]
    want = [os.path.join(d, "a.json"), os.path.join(d, "c_link.json"), os.path.join(d, "sub", "b.json")]
    check(sorted(paths) == want, "walk: ingested %r, want %r (each file once)" % (paths, want))
    r = run(["ingest", "--db", db, "--dry-run", d], timeout=30)
    listed = [line.split("\t")[0] for line in r.stdout.splitlines()]
    check(listed == want, "walk: --dry-run lists %r, want %r (byte order)" % (listed, want))
    # the collective glob and the corpus scan walk the same way
    r = run(["collective", "--db", db, "--trace_glob", os.path.join(d, "**", "*.json"), "--world_size", "3"], timeout=30)
    check("matched 3 file(s)" in r.stderr, "walk: collective glob: %r" % r.stderr)
    r = run(["corpus-report", "--db", db, "-b", d, "-f", ".json", "-d"], timeout=30)
    seen = [w for w in want if (w + ":") in r.stderr]
    check(seen == want and r.stderr.count(":") == 3 * 2, "walk: corpus-report scan: %r" % r.stderr)

    # a folder path past PATH_MAX: an error naming it, never a silent cut
    deep = os.path.join(tmp, "deep")
    os.makedirs(deep)
    here = os.getcwd()
    os.chdir(deep)
    part = "p" * 200
    for _ in range(25):
        os.mkdir(part)
        os.chdir(part)
    with open("x.json", "w") as f:
        f.write(trace("aten::deep"))
    os.chdir(here)
    r = run(["ingest", "--db", os.path.join(tmp, "deepdb"), "--dry-run", deep])
    check(r.returncode == 1, "walk: deep folder exit %d" % r.returncode)
    check("cannot read" in r.stderr and "File name too long" in r.stderr and (part + "/") * 3 in r.stderr,
          "walk: deep folder message: %r" % r.stderr[-300:])


def test_sql(tmp):
    db = os.path.join(tmp, "sqldb")
    write(os.path.join(tmp, "sqlin", "t.json"), trace("aten::mm", "aten::add"))
    r = run(["ingest", "--db", db, "-q", os.path.join(tmp, "sqlin", "t.json")])
    check(r.returncode == 0, "sql: ingest: " + r.stderr)
    watched = os.path.join(tmp, "watched")
    os.makedirs(watched)
    r = run(["sql", "--db", db, "--format", "csv", "SELECT name FROM ops ORDER BY name"], cwd=watched)
    check(r.returncode == 0 and r.stdout == "name\naten::add\naten::mm\n", "sql: SELECT: %r %r" % (r.stdout, r.stderr))
    r = run(["sql", "--db", db, "--format", "csv", "SELECT name FROM pragma_table_info('ops') LIMIT 1"], cwd=watched)
    check(r.returncode == 0 and "trace_id" in r.stdout, "sql: pragma_table_info: %r %r" % (r.stdout, r.stderr))
    refused = {
        "ATTACH": "ATTACH DATABASE '%s/x.db' AS x" % watched,
        "VACUUM": "VACUUM INTO '%s/v.db'" % watched,
        "PRAGMA journal_mode": "PRAGMA journal_mode = WAL",
        "PRAGMA temp_store_directory": "PRAGMA temp_store_directory = '%s'" % watched,
        "CREATE TABLE": "CREATE TABLE t(a)",
        "CREATE TEMP TABLE": "CREATE TEMP TABLE t AS SELECT * FROM ops",
        "INSERT": "INSERT INTO ops(name) VALUES ('x')",
        "load_extension": "SELECT load_extension('%s/x.so')" % watched,
        "DETACH": "DETACH DATABASE x",
    }
    before = tree(tmp)
    for what, sql in refused.items():
        r = run(["sql", "--db", db, "SELECT 1; " + sql], cwd=watched)
        msg = "sql: only reading is allowed (%s refused)" % what
        check(r.returncode == 2 and msg in r.stderr, "sql: %s: exit %d, %r" % (sql, r.returncode, r.stderr))
        check(tree(tmp) == before, "sql: %s created %r" % (sql, tree(tmp) - before))


def test_plugin_rule(tmp):
    # a category file whose name holds ".so." is data, never dlopen'ed
    t = os.path.join(tmp, "plug", "t.json")
    write(t, trace("my::custom_op"))
    cats = os.path.join(tmp, "plug", "categories.so.tsv")
    write(cats, "my::custom_op\tMY_CATEGORY\n")
    out = os.path.join(tmp, "plug", "out")
    r = run(["report", "--db", os.path.join(tmp, "plugdb"), t, "--csv-dir", out, "--extension_file", cats])
    check(r.returncode == 0, "plugin rule: report exit %d: %s" % (r.returncode, r.stderr))
    check("plugin" not in r.stderr, "plugin rule: tried to load a plugin: " + r.stderr)
    text = open(os.path.join(out, "ops_summary_by_category.csv")).read() if r.returncode == 0 else ""
    check("MY_CATEGORY" in text, "plugin rule: the category file was not applied: %r" % text)


def test_csv_safe(tmp):
    t = os.path.join(tmp, "csv", "t.json")
    write(t, trace('=HYPERLINK("http://x")', "@SUM(1)", "+x", "aten::mm"))
    db = os.path.join(tmp, "csvdb")
    plain, safe = os.path.join(tmp, "csv", "plain"), os.path.join(tmp, "csv", "safe")
    r = run(["report", "--db", db, t, "--csv-dir", plain])
    check(r.returncode == 0, "csv: report: " + r.stderr)
    text = open(os.path.join(plain, "ops_summary.csv")).read()
    check('"=HYPERLINK(""http://x"")"' in text and "\n@SUM(1)," in text and "\n+x," in text,
          "csv: cells are verbatim by default: %r" % text)
    # the reference-named command takes the flag too
    compat = os.path.join(build, "TraceLens_generate_perf_report_pytorch")
    r = subprocess.run([compat, "--profile_json_path", t, "--output_csvs_dir", safe, "--csv-safe"],
                       capture_output=True, text=True, env=dict(os.environ, TRACELENS_DB=db))
    check(r.returncode == 0, "csv: compat --csv-safe: " + r.stderr)
    text = open(os.path.join(safe, "ops_summary.csv")).read() if r.returncode == 0 else ""
    check('"\'=HYPERLINK(""http://x"")"' in text and "\n'@SUM(1)," in text and "\n'+x," in text
          and "\naten::mm," in text, "csv: --csv-safe guards text cells: %r" % text)
    r = run(["sql", "--db", db, "--format", "csv", "--csv-safe",
             "SELECT '=1+2' AS a, -5 AS b, -2.5 AS c, '-3' AS d, '-x' AS e, 'ok' AS f"])
    check(r.stdout == "a,b,c,d,e,f\n'=1+2,-5,-2.5,-3,'-x,ok\n", "csv: sql --csv-safe: %r %r" % (r.stdout, r.stderr))
    r = run(["sql", "--db", db, "--format", "csv", "SELECT '=1+2' AS a, -5 AS b"])
    check(r.stdout == "a,b\n=1+2,-5\n", "csv: sql without --csv-safe: %r" % r.stdout)


def test_limits(tmp):
    t = os.path.join(tmp, "lim", "t.json")
    write(t, trace("aten::mm") + " " * 1000)
    gz = os.path.join(tmp, "lim", "t.json.gz")
    with open(gz, "wb") as f:
        f.write(gzip.compress(open(t, "rb").read()))
    db = os.path.join(tmp, "limdb")
    for args, env, what in [(["--max-input-bytes", "100"], {}, "flag"),
                            (["--max-input-bytes=1k"], {}, "flag with unit"),
                            ([], {"TRACELENS_MAX_INPUT_BYTES": "100"}, "environment")]:
        for f in (t, gz):
            r = run(["ingest", "--db", db, "-q"] + args + [f], env=env)
            check(r.returncode == 1 and "input limit" in r.stderr and f in r.stderr,
                  "limits: %s on %s: exit %d %r" % (what, f, r.returncode, r.stderr))
    r = run(["ingest", "--db", db, "-q", "--max-input-bytes", "100M", t], env={"TRACELENS_MAX_INPUT_BYTES": "100"})
    check(r.returncode == 0, "limits: the flag wins over the environment: " + r.stderr)
    r = run(["report", "--db", db, "--max-input-bytes", "100", gz, "--csv-dir", os.path.join(tmp, "lim", "o")])
    check(r.returncode != 0 and "input limit" in r.stderr, "limits: report --max-input-bytes: %r" % r.stderr)
    r = run(["ingest", "--db", db, "--max-input-bytes", "lots", t])
    check(r.returncode == 2 and "--max-input-bytes" in r.stderr, "limits: bad value: %r" % r.stderr)
    r = run(["ingest", "--db", db, "-q", "--max-input-bytes", "off", gz], env={"TRACELENS_MAX_RATIO": "off"})
    check(r.returncode == 0, "limits: off: " + r.stderr)
    r = run(["ingest", "--db", db, "-q", t], env={"TRACELENS_MAX_RATIO": "many"})
    check(r.returncode == 0 and "TRACELENS_MAX_RATIO=many" in r.stderr, "limits: bad ratio: %r" % r.stderr)
    r = run(["--help"])
    check("--max-input-bytes" in r.stdout and "--csv-safe" in r.stdout and "TRACELENS_MAX_RATIO" in r.stdout,
          "limits: tracelens --help")
    r = run(["ingest", "--help"])
    check("--max-input-bytes" in r.stdout, "limits: tracelens ingest --help")


tmp = tempfile.mkdtemp(prefix="tl_input_cli.")
try:
    test_walk(tmp)
    test_sql(tmp)
    test_plugin_rule(tmp)
    test_csv_safe(tmp)
    test_limits(tmp)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(check.summary("input_cli"))
