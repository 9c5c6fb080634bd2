#!/usr/bin/env python3
"""The store commands at the edges: `check` and `compact`, exit 3 on a
damaged store, read-only commands that never create a store, a read-only
store, and a full disk.

Usage: test_store_cli.py BUILD_DIR [cli|fulldisk]
  cli       check/compact, damage exit codes, missing and read-only stores
  fulldisk  create and grow a store on a full tmpfs (root and mount(8)
            needed; exit 77, skipped, where it cannot mount)

A read-only store is made with a read-only bind mount when mount works,
else with `chmod -R a-w` read by user nobody (setpriv), else that part is
skipped."""
import ctypes, ctypes.util, os, random, shutil, subprocess, sys, tempfile

from tlcheck import Checks

tl = os.path.join(sys.argv[1], "tracelens")
mode = sys.argv[2] if len(sys.argv) > 2 else "cli"
check = Checks()


def run(*args, user=None):
    cmd = [tl] + list(args)
    if user:
        cmd = ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_trace(path, marker, nevents):
    """A Kineto trace whose kernel names carry marker and random text (so
    that its chunks are stored uncompressed and take real space)."""
    rnd = random.Random(marker)
    evs = []
    for i in range(nevents):
        name = "%s_%d_%016x" % (marker, i, rnd.getrandbits(64))
        evs.append('{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":%d,"dur":4,'
                   '"args":{"External id":%d}}' % (99 + 5 * i, i))
        evs.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":1,'
                   '"args":{"External id":%d,"correlation":%d}}' % (100 + 5 * i, i, i))
        evs.append('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%d,"dur":3,'
                   '"args":{"External id":%d,"correlation":%d,"device":0,"stream":7}}' % (name, 101 + 5 * i, i, i))
    with open(path, "w") as f:
        f.write('{"traceEvents":[' + ",".join(evs) + "]}")


def ingest(db, path):
    rc, out, err = run("--db", db, "ingest", "-q", path)
    check(rc == 0, "ingest %s: rc %d %s" % (path, rc, err))
    return out.split("\t")[0]


def flip_byte(path, needle, skip_from=None):
    """Flips one byte inside the first occurrence of needle in path."""
    with open(path, "r+b") as f:
        data = f.read()
        at = data.find(needle)
        if at < 0:
            return False
        f.seek(at + len(needle) // 2)
        f.write(bytes([data[at + len(needle) // 2] ^ 0x20]))
    return True


class HeldStore:
    """Keeps the store's LMDB environment open in this process (another
    user of the store, for compact's refusal)."""

    def __init__(self, db):
        lib = ctypes.CDLL(ctypes.util.find_library("lmdb") or "liblmdb.so.0")
        self.lib, self.env = lib, ctypes.c_void_p()
        lib.mdb_env_create(ctypes.byref(self.env))
        lib.mdb_env_set_maxdbs(self.env, 8)
        self.rc = lib.mdb_env_open(self.env, db.encode(), 0x200000, 0o664)  # MDB_NOTLS

    def close(self):
        self.lib.mdb_env_close(self.env)


def test_check_compact(tmp):
    db = os.path.join(tmp, "store")
    a, b = os.path.join(tmp, "keep_trace.json"), os.path.join(tmp, "drop_trace.json")
    write_trace(a, "keepkern", 3000)
    write_trace(b, "dropkern", 3000)
    ida, idb = ingest(db, a), ingest(db, b)
    rc, out, err = run("--db", db, "check")
    check(rc == 0 and "checked 2 trace(s)" in out and ": 0 damaged" in out, "check clean: %d %r %r" % (rc, out, err))
    rc, out, _ = run("check", "--help")
    check(rc == 0 and "--repair" in out and "Exit codes" in out, "check --help")
    rc, out, _ = run("compact", "--help")
    check(rc == 0 and "--into" in out and "renamed over" in out, "compact --help")
    rc, out, _ = run("--help")
    check("check [--repair]" in out and "compact [--into DIR]" in out, "commands listed in --help")

    run("--db", db, "rm", idb)
    size0 = os.path.getsize(os.path.join(db, "data.mdb"))
    held = HeldStore(db)
    check(held.rc == 0, "lmdb env held open")
    rc, out, err = run("--db", db, "compact")
    check(rc == 1 and "open in another process" in err, "compact refused while in use: %d %r" % (rc, err))
    check(os.path.getsize(os.path.join(db, "data.mdb")) == size0, "refused compact changed nothing")
    rc, out, err = run("--db", db, "compact", "--into", os.path.join(tmp, "copy"))
    check(rc == 0, "compact --into while in use: %d %r" % (rc, err))
    held.close()
    rc, out, err = run("--db", db, "compact")
    size1 = os.path.getsize(os.path.join(db, "data.mdb"))
    check(rc == 0 and "compacted" in out and size1 < size0, "compact: %d %r %r %d -> %d" % (rc, out, err, size0, size1))
    check(not [n for n in os.listdir(db) if n.startswith(".compact")], "no temporary folder left")
    for d in (db, os.path.join(tmp, "copy")):
        rc, out, err = run("--db", d, "ls")
        check(rc == 0 and out.startswith(ida) and idb not in out, "ls after compact (%s): %r %r" % (d, out, err))
        rc, out, err = run("--db", d, "check")
        check(rc == 0 and "checked 1 trace(s)" in out, "check after compact (%s): %r %r" % (d, out, err))
    rc, out, err = run("--db", db, "report", ida, "--output_csvs_dir", os.path.join(tmp, "csv"))
    check(rc == 0, "report after compact: %d %r" % (rc, err[-300:]))
    rc, _, err = run("--db", db, "compact", "--into", os.path.join(tmp, "copy"))
    check(rc == 1 and "already holds a store" in err, "compact --into an existing store refused: %r" % err)


def test_damage(tmp):
    db = os.path.join(tmp, "damaged")
    a, b = os.path.join(tmp, "sound_trace.json"), os.path.join(tmp, "victim_trace.json")
    write_trace(a, "soundkern", 200)
    write_trace(b, "victimkern", 200)
    ida, idb = ingest(db, a), ingest(db, b)
    data = os.path.join(db, "data.mdb")
    # the catalog record holds the source path; a flipped byte fails its checksum
    check(flip_byte(data, b"victim_trace.json"), "catalog record found in data.mdb")
    rc, out, err = run("--db", db, "ls")
    check(rc == 3 and ida in out and idb in err, "ls of a damaged record: %d %r %r" % (rc, out, err))
    rc, out, err = run("--db", db, "info", idb)
    check(rc == 3 and "damaged" in err and out == "", "info of a damaged record: %d %r %r" % (rc, out, err))
    rc, out, err = run("--db", db, "report", idb, "--output_csvs_dir", os.path.join(tmp, "csv2"))
    check(rc == 3, "report of a damaged record: %d %r" % (rc, err))
    rc, out, err = run("--db", db, "check")
    check(rc == 3 and out.startswith(idb + "\t") and "1 damaged" in out, "check finds it: %d %r %r" % (rc, out, err))
    # a column chunk: a kernel name in the dictionary of the sound trace
    check(flip_byte(data, b"soundkern_17_"), "dictionary chunk found in data.mdb")
    rc, out, err = run("--db", db, "report", ida, "--output_csvs_dir", os.path.join(tmp, "csv3"))
    check(rc == 3 and "checksum" in err, "report of a damaged chunk: %d %r" % (rc, err[-300:]))
    rc, out, err = run("--db", db, "check", "--repair")
    check(rc == 0 and sum(l.startswith("removed ") for l in out.splitlines()) == 2 and "2 damaged" in out, "check --repair: %d %r %r" % (rc, out, err))
    rc, out, err = run("--db", db, "check")
    check(rc == 0 and "checked 0 trace(s)" in out, "check after repair: %d %r %r" % (rc, out, err))


def test_no_store(tmp):
    missing = os.path.join(tmp, "no", "such", "store")
    for args in (["ls"], ["info", "abcd1234"], ["report", "abcd1234"], ["diff", "abcd1234", "abcd5678",
                 "--out", os.path.join(tmp, "d")], ["query", "--top", "1"], ["sql", "select 1"], ["check"],
                 ["compact"], ["rm", "abcd1234"], ["split", "abcd1234"], ["collective", "--config", "c"],
                 ["corpus-report", "--config", "c"], ["compare", "abcd1234", "abcd5678"]):
        rc, out, err = run("--db", missing, *args)
        check(rc == 3 and "no store at " + missing + " (ingest creates one)" in err,
              "%s on a missing store: %d %r" % (args[0], rc, err))
        check(not os.path.exists(os.path.join(tmp, "no")), "%s created nothing" % args[0])
    # a first ingest whose every file fails leaves no store behind
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents":[{"ph":"X"')
    rc, out, err = run("--db", missing, "ingest", bad)
    check(rc == 1 and not os.path.exists(os.path.join(tmp, "no")), "failed first ingest: %d %r" % (rc, err))


def readonly_store(tmp, src):
    """A read-only view of src and the user to read it as: a read-only bind
    mount (root), else src with its modes cleared, read by nobody."""
    ro = os.path.join(tmp, "ro")
    os.mkdir(ro)
    if (os.geteuid() == 0 and subprocess.run(["mount", "--bind", src, ro], capture_output=True).returncode == 0):
        if subprocess.run(["mount", "-o", "remount,ro,bind", ro], capture_output=True).returncode == 0:
            return ro, None, "read-only bind mount"
        subprocess.run(["umount", ro])
    if os.geteuid() == 0 and shutil.which("setpriv"):
        for d, _, files in os.walk(tmp):
            os.chmod(d, 0o755)
        subprocess.run(["chmod", "-R", "a-w", src])
        subprocess.run(["chmod", "a+r"] + [os.path.join(src, n) for n in os.listdir(src)])
        return src, "nobody", "chmod -R a-w, read by user nobody"
    return None, None, "no way to make a read-only store here"


def test_readonly(tmp):
    src = os.path.join(tmp, "rw")
    a = os.path.join(tmp, "ro_trace.json")
    write_trace(a, "rokern", 200)
    ida = ingest(src, a)
    os.chmod(a, 0o644)
    ro, user, how = readonly_store(tmp, src)
    print("read-only store: " + how)
    if not ro:
        return
    try:
        rc, out, err = run("--db", ro, "ls", user=user)
        check(rc == 0 and out.startswith(ida), "ls of a read-only store: %d %r" % (rc, err))
        rc, out, err = run("--db", ro, "info", ida, user=user)
        check(rc == 0 and '"catalog"' in out, "info of a read-only store: %d %r" % (rc, err))
        rc, out, err = run("--db", ro, "sql", "select count(*) from traces", user=user)
        check(rc == 0 and " 1" in out, "sql on a read-only store: %d %r" % (rc, err))
        rc, out, err = run("--db", ro, "check", user=user)
        check(rc == 0 and "checked 1 trace(s)" in out, "check of a read-only store: %d %r" % (rc, err))
        csv = os.path.join(tempfile.gettempdir(), "tl-ro-csv-%d" % os.getpid())
        rc, out, err = run("--db", ro, "report", ida, "--output_csvs_dir", csv, user=user)
        check(rc == 0 and os.path.isdir(csv), "report of a read-only store: %d %r" % (rc, err[-300:]))
        shutil.rmtree(csv, ignore_errors=True)
        rc, out, err = run("--db", ro, "rm", ida, user=user)
        check(rc == 1 and "read-only" in err, "rm on a read-only store fails: %d %r" % (rc, err))
    finally:
        if user:
            subprocess.run(["chmod", "-R", "u+w", src])
        else:
            subprocess.run(["umount", ro])


def test_full_disk(tmp):
    mnt = os.path.join(tmp, "tmpfs")
    os.mkdir(mnt)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt],
                                           capture_output=True).returncode != 0:
        print("skipped: cannot mount a tmpfs here")
        sys.exit(77)
    try:
        big = os.path.join(tmp, "big_trace.json")
        write_trace(big, "bigkern", 12000)
        fill = os.path.join(mnt, "fill")
        with open(fill, "wb") as f:  # every block of the file system
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        db = os.path.join(mnt, "new", "store")
        rc, out, err = run("--db", db, "ingest", "-q", big)
        check(rc in (1, 3) and "No space left on device" in err, "create on a full disk: %d %r" % (rc, err))
        check(not os.path.exists(os.path.join(mnt, "new")), "nothing left of the failed create")
        os.truncate(fill, os.path.getsize(fill) - 600 * 1024)  # room for a store, not for the trace
        db = os.path.join(mnt, "store")
        small = os.path.join(tmp, "small_trace.json")
        write_trace(small, "smallkern", 2)
        rc, out, err = run("--db", db, "ingest", "-q", small)
        check(rc == 0, "a small trace fits: %d %r" % (rc, err))
        rc, out, err = run("--db", db, "ingest", "-q", big)
        check(rc == 1 and "No space left on device" in err, "grow on a full disk: %d %r" % (rc, err))
        rc, out, err = run("--db", db, "check")
        check(rc == 0 and "checked 1 trace(s)" in out, "store sound after the failed grow: %d %r %r" % (rc, out, err))
        os.unlink(fill)
        rc, out, err = run("--db", db, "ingest", "-q", big)
        check(rc == 0, "ingest once space is back: %d %r" % (rc, err))
    finally:
        subprocess.run(["umount", mnt])


with tempfile.TemporaryDirectory(prefix="tl-store-cli-") as tmp:
    os.chmod(tmp, 0o755)
    if mode == "fulldisk":
        test_full_disk(tmp)
    else:
        test_check_compact(tmp)
        test_damage(tmp)
        test_no_store(tmp)
        test_readonly(tmp)
sys.exit(check.summary("store." + mode))
