/* cmd_report_inference.c — the reference's inference report command,
 * TraceLens_generate_perf_report_pytorch_inference (TraceLens main
 * 171dd747, Reporting/generate_perf_report_pytorch_inference.py), and
 * `tracelens report --inference`: the PyTorch report's command line
 * (tools/cmd_report_pytorch.c) with the inference report's flags, options
 * and sheets (query/inference/report.c). */
#include "tools/cli.h"
#include "query/inference/inference.h"

static const char INF_USAGE[] =
    "Usage: TraceLens_generate_perf_report_pytorch_inference --profile_json_path PATH [options]\n"
    "       tracelens report ID|FILE --inference [--db DIR] [--xlsx PATH | --csv-dir DIR] [options]\n"
    "\n"
    "The inference performance report of a Kineto trace (vLLM, SGLang, xDiT serving\n"
    "traces): the PyTorch report with ops_summary, ops_summary_by_category and\n"
    "ops_unique_args grouped as the reference's inference report groups them, per-kernel\n"
    "call stacks in unified_perf_summary, and the perf sheets named <family>_fwd\n"
    "(GEMM, UnaryElementwise and BinaryElementwise keep their names; no _bwd sheets).\n"
    "The trace is read from the store (a file not yet stored is ingested first).\n"
    "\n"
    "Output:\n"
    "  --output_xlsx_path PATH       Excel workbook (default when no CSV folder is given:\n"
    "                                the trace path cut at its last '.json' + _perf_report.xlsx)\n"
    "  --output_csvs_dir DIR         one CSV per sheet (alone: no workbook)\n"
    "  --xlsx PATH, --csv-dir DIR    the same, for `tracelens report --inference`\n"
    "Inference:\n"
    "  --capture_folder DIR          graph-capture traces (execution_details.json or every\n"
    "                                *.json[.gz]): kernels replayed by CUDA/HIP graph launches\n"
    "                                are attributed to the ops that captured them\n"
    "  --group_by_parent_module      parent_module (the innermost nn.Module) as a grouping key\n"
    "                                of ops_summary, ops_summary_by_category and ops_unique_args,\n"
    "                                with the launcher's nn.Module call stack (call_stack,\n"
    "                                call_stack_first)\n"
    "  --include_call_stack          entry_point and call_stack_full in unified_perf_summary\n"
    "  --group_by_num_kernels        num_kernels as an extra grouping key\n"
    "  --enable_pseudo_ops           the reference's pseudo ops: SGLang profiler op names lose\n"
    "                                their _<digits> suffix, and each matmul_ogs / matmul_scatter\n"
    "                                kernel of vLLM's unfused Triton MoE (vllm::moe_forward) gets\n"
    "                                its own op, pseudo_op::moe_triton_unfused_up, _down or\n"
    "                                _finalize_matmul_scatter, in unified_perf_summary and\n"
    "                                MoE_unfused_fwd (derived traces, stored beside the trace;\n"
    "                                ops_summary is unchanged, as in the reference). The\n"
    "                                reference's MLA, V4 paged-decode, AITER, GPTQ/AWQ and flydsl\n"
    "                                MoE pseudo ops are not built (a note on stderr says so)\n"
    "Sheets and options (as TraceLens_generate_perf_report_pytorch):\n"
    "  --include_unlinked_kernels, --micro_idle_thresh_us N, --enable_kernel_summary,\n"
    "  --short_kernel_study, --short_kernel_threshold_us N (10), --short_kernel_histogram_bins\n"
    "  N (100), --topk_short_kernels N, --include_overlap_info, --topk_ops N,\n"
    "  --topk_roofline_ops N (accepted; no effect, as in the reference), --extension_file PATH,\n"
    "  --gpu_arch_json_path PATH | --gpu_arch_platform NAME, --no_auto_arch\n"
    "  --disable_coll_analysis       accepted: the inference report has no coll_analysis\n"
    "                                sheet (the reference's flag can only turn it off, and it\n"
    "                                is off by default)\n"
    "Comparison:\n"
    "  --comparison_json_path PATH   a second trace: TraceDiff against it (diff_stats, LCA columns)\n"
    "  --comparison_capture_folder DIR   graph-capture traces of the comparison trace\n"
    "                                (requires --comparison_json_path)\n"
    "Phases (this tool's; the reference's inference branches):\n"
    "  --inference_phase_analysis, --phase_detection_method M, --decode_threshold N,\n"
    "  --no_phase_annotations        see TraceLens_generate_perf_report_pytorch --help\n"
    "Not supported: --enable-origami, --python_path (GEMM simulators), --inductor_cache_dir.\n"
    "\n"
    "Exit codes: 0 ok, 1 the report failed, 2 usage, 3 the store, 4 trace id not stored.\n";

static void adjust(tl_pyt_opts *o) { tl_inference_report_opts(o); }

static const tl_cli_report_variant tl_cli_inference_report = {INF_USAGE, 1, adjust};

int tl_cmd_report_pytorch_inference(int argc, char **argv)
{
    return tl_cli_report_pytorch_as(argc, argv, &tl_cli_inference_report, 0);
}

int tl_cmd_report_kineto_inference(int argc, char **argv)
{
    return tl_cli_report_pytorch_as(argc, argv, &tl_cli_inference_report, 1);
}
