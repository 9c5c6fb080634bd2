#!/usr/bin/env bash
# Writes every report the build can make over the traces in ../shared/data
# into OUT, so that two builds can be compared byte for byte:
#   bash tools/snapshot-outputs.sh BUILD OUT [DATA]
#   diff -r OUT_BEFORE OUT_AFTER
# Covers the PyTorch report (default flags, the optional flag set, the
# inference flags), rocprof, JAX, compare, TraceDiff, split, collective and
# corpus-report over a generated corpus, and query/sql. Workbooks are
# recorded as the text of their sheets (tests/tlcheck.py reads them), since
# the zip holds a timestamp.
set -uo pipefail
build=$(cd "$1" && pwd)
out=$2
data=${3:-$(cd "$(dirname "$0")/.." && pwd)/../shared/data}
data=$(cd "$data" && pwd)
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
tl="$build/tracelens"
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
export TRACELENS_DB="$db/store"
log="$out/commands.log"

run() { # name, command...: stdout/stderr/rc into OUT/name.*
    local name=$1
    shift
    echo "$name: $*" | sed "s|$data|DATA|g; s|$out|OUT|g; s|$build|BUILD|g; s|$db|DB|g" >>"$log"
    "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"
    echo $? >"$out/$name.rc"
    sed -i "s|$data|DATA|g; s|$out|OUT|g; s|$build|BUILD|g; s|$db|DB|g" "$out/$name.stdout" "$out/$name.stderr"
    # timings and rates vary from run to run
    sed -i -E 's/[0-9]+(\.[0-9]+)? ?(s|ms|MB\/s|GB\/s)\b/T\2/g; s/20[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9:]{8}/DATE/g' "$out/$name.stdout" "$out/$name.stderr"
    # lines printed as parallel work finishes come in any order
    case $name in *ingest*) sort -o "$out/$name.stdout" "$out/$name.stdout" ;; esac
}

py_sheets() { # xlsx -> one text file of all sheets' cells
    /usr/bin/python3 - "$1" >"$2" 2>&1 <<'EOF'
import sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
for ws in wb.worksheets:
    print("== sheet", ws.title)
    for row in ws.iter_rows(values_only=True):
        print("\t".join("" if v is None else repr(v) for v in row))
EOF
}

# ---- PyTorch report over every Kineto trace
opt="--enable_kernel_summary --short_kernel_study --include_overlap_info --detect_recompute
     --include_call_stack --group_by_num_kernels --include_first_occurrence_time
     --include_unlinked_kernels --micro_idle_thresh_us 5"
inf="--inference_phase_analysis --enable_kernel_summary"
i=0
while IFS= read -r f; do
    i=$((i + 1))
    n=$(printf 'pt%02d' $i)
    echo "$n = $f" | sed "s|$data|DATA|" >>"$log"
    run "$n.default" "$build/TraceLens_generate_perf_report_pytorch" --profile_json_path "$f" --output_csvs_dir "$out/$n.default"
    # shellcheck disable=SC2086
    run "$n.opt" "$build/TraceLens_generate_perf_report_pytorch" --profile_json_path "$f" --output_csvs_dir "$out/$n.opt" $opt
    # shellcheck disable=SC2086
    run "$n.inf" "$build/TraceLens_generate_perf_report_pytorch" --profile_json_path "$f" --output_csvs_dir "$out/$n.inf" $inf
    run "$n.term" "$tl" report "$f"
done < <(find "$data/kineto" "$data/public" "$data/inference" -name '*.json.gz' ! -path '*capture*' ! -name 'bs_*' | sort)

# the charted workbook, read back
f="$data/kineto/mi300/resnet_act_checkpoint.json.gz"
run xlsx.pytorch "$build/TraceLens_generate_perf_report_pytorch" --profile_json_path "$f" --output_xlsx_path "$out/pt.xlsx" --enable_kernel_summary --short_kernel_study
py_sheets "$out/pt.xlsx" "$out/xlsx.pytorch.cells"
rm -f "$out/pt.xlsx"

# inference with capture folders, split
for d in "$data"/inference/*/ "$data/public/xdit_flux_aiter_sage/"; do
    n=inf_$(basename "$d")
    f=$(find "$d" -maxdepth 1 -name '*.json.gz' | head -1)
    cap=$(find "$d" -maxdepth 1 -name capture_traces)
    [ -n "$cap" ] || continue
    run "$n.capture" "$build/TraceLens_generate_perf_report_pytorch" --profile_json_path "$f" --output_csvs_dir "$out/$n.capture" --capture_folder "$cap" --inference_phase_analysis --enable_kernel_summary
    run "$n.split" "$tl" split "$f" --capture_folder "$cap"
done
run ls.after_split "$tl" ls

# rocprof
f="$data/rocprof/908_results.json.gz"
run rocprof.default "$build/TraceLens_generate_perf_report_rocprof" --profile_json_path "$f" --output_csvs_dir "$out/rocprof.default"
run rocprof.opt "$build/TraceLens_generate_perf_report_rocprof" --profile_json_path "$f" --output_csvs_dir "$out/rocprof.opt" --kernel_details --short_kernel_study
run rocprof.refunits "$build/TraceLens_generate_perf_report_rocprof" --profile_json_path "$f" --output_csvs_dir "$out/rocprof.refunits" --reference-units --short_kernel_study

# JAX
i=0
for f in $(find "$data/jax" -name '*.xplane.pb' | sort); do
    i=$((i + 1))
    run "jax$i" "$build/TraceLens_generate_perf_report_jax" --profile_path "$f" --output_csvs_dir "$out/jax$i"
done

# compare
c="$data/compare"
run compare.csv "$build/TraceLens_compare_perf_reports_pytorch" "$c/h100_perf_report_csvs" "$c/mi300_perf_report_csvs" --names h100 mi300 --output_csvs_dir "$out/compare.csv"

# TraceDiff
run diff.mi300 "$tl" diff "$data/kineto/mi300/gaunernst_bert-small-uncased__1016001.json.gz" "$data/kineto/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz" --out "$out/diff.mi300"
run diff.hta "$tl" diff "$data/public/hta_tracediff_control/hta_tracediff_control.json.gz" "$data/public/hta_tracediff_test/hta_tracediff_test.json.gz" --out "$out/diff.hta"

# multi-rank: a generated corpus
corpus="$db/corpus"
mkdir -p "$corpus"
"$build/tracegen" -q --size 8M --seed 3 --ranks 4 -o "$corpus/cfgA"
rm -f "$corpus/cfgA/truth.json"
ls "$corpus/cfgA" >"$out/corpus.files"
run corpus.ingest "$tl" ingest -j 2 "$corpus"
run corpus.report "$build/TraceLens_generate_multi_config_perf_report" -b "$corpus" -f rank_ -o "$out/corpus.xlsx"
[ -f "$out/corpus.xlsx" ] && py_sheets "$out/corpus.xlsx" "$out/corpus.cells" && rm -f "$out/corpus.xlsx"
run collective "$tl" collective --config cfgA --output_csvs_dir "$out/collective"
run collective.hta "$build/TraceLens_generate_multi_rank_collective_report_pytorch" --trace_glob "$data/public/hta_filter_rank*/*.json.gz" --world_size 2 --output_csvs_dir "$out/collective.hta"

# query / sql
run query.ls "$tl" ls
run query.top "$tl" query --by name --agg "count,sum(dur)" --sort "-sum_dur" --top 20 --format csv
run sql.count "$tl" sql "SELECT format, count(*) FROM traces GROUP BY format ORDER BY format"
echo "snapshot: $(find "$out" -type f | wc -l) files in $out"
