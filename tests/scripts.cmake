# Script tests: python3 (stdlib) and bash programs that drive the built
# binaries. Each prints "N passed, M failed"; those that read ../shared/data
# exit 77 when it is absent (reported as skipped). golden.inrepo and
# tracegen need only the repository. Included from tests/CMakeLists.txt.
set(TL_DATA ${CMAKE_SOURCE_DIR}/../shared/data)
find_program(TL_PY3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT TL_PY3)
  find_program(TL_PY3 python3 REQUIRED)
endif()

add_executable(tl_dumpcounts ${CMAKE_CURRENT_SOURCE_DIR}/tools/tl_dumpcounts.c)
target_link_libraries(tl_dumpcounts PRIVATE tl_query tl_ingest tl_store)

function(tl_script_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS script
    ENVIRONMENT "TL_BUILD=${CMAKE_BINARY_DIR};TL_SHARED_DATA=${TL_DATA}")
endfunction()

tl_script_test(ingest.counts ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_ingest_counts.py ${CMAKE_BINARY_DIR} ${TL_DATA})
tl_script_test(ingest.bad_inputs ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_bad_inputs.py ${CMAKE_BINARY_DIR})
tl_script_test(golden.inrepo ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_inrepo.py ${CMAKE_BINARY_DIR})
tl_script_test(golden.overlap ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_overlap.py ${CMAKE_BINARY_DIR})
if(TARGET tracegen)
  tl_script_test(tracegen ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_tracegen.py $<TARGET_FILE:tracegen>)
  tl_script_test(ingest.crash_kill9 bash ${CMAKE_CURRENT_SOURCE_DIR}/test_crash.sh ${CMAKE_BINARY_DIR})
  tl_script_test(ingest.args_sel ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_args_sel.py ${CMAKE_BINARY_DIR})
endif()
tl_script_test(golden.jax ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_jax.py ${CMAKE_BINARY_DIR})
tl_script_test(golden.tracediff ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_tracediff.py --build ${CMAKE_BINARY_DIR} --data ${TL_DATA})
tl_script_test(golden.compare ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_compare.py --build ${CMAKE_BINARY_DIR} --data ${TL_DATA})
tl_script_test(golden.pytorch ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_pytorch.py ${CMAKE_BINARY_DIR})
tl_script_test(golden.public ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_public.py ${CMAKE_BINARY_DIR})
tl_script_test(query.sql bash ${CMAKE_CURRENT_SOURCE_DIR}/test_query_sql.sh)
tl_script_test(inference ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_inference.py ${CMAKE_BINARY_DIR})
tl_script_test(inference.report ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_inference_report.py ${CMAKE_BINARY_DIR})
tl_script_test(golden.rocprof ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_rocprof.py ${CMAKE_BINARY_DIR})
tl_script_test(report.xlsx ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_xlsx_report.py ${CMAKE_BINARY_DIR})
tl_script_test(report.comparison_json ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_comparison_json.py ${CMAKE_BINARY_DIR})
tl_script_test(golden.collective ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_collective.py ${CMAKE_BINARY_DIR})
tl_script_test(golden.multicfg ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/golden_multicfg.py ${CMAKE_BINARY_DIR})
if(TARGET tracegen)
  tl_script_test(ingest.split_parse ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_split_parse.py ${CMAKE_BINARY_DIR} ${TL_DATA})
endif()
tl_script_test(cli.input ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_input_cli.py ${CMAKE_BINARY_DIR})

# The layout's rules (docs/ARCHITECTURE.md): includes point down the layers,
# no include or call loop between files, no function over 150 lines.
tl_script_test(layout.layers ${TL_PY3} ${CMAKE_SOURCE_DIR}/tools/check-layers.py ${CMAKE_BINARY_DIR})
tl_script_test(layout.function_length ${TL_PY3} ${CMAKE_SOURCE_DIR}/tools/check-function-length.py)
tl_script_test(store.cli ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_store_cli.py ${CMAKE_BINARY_DIR} cli)
tl_script_test(store.full_disk ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_store_cli.py ${CMAKE_BINARY_DIR} fulldisk)
tl_script_test(python.module ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_python.py ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
if(TARGET tracegen)
  tl_script_test(install.prefix bash ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${CMAKE_BINARY_DIR})
endif()
tl_script_test(cli.guidance ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_guidance.py ${CMAKE_BINARY_DIR})
tl_script_test(report.html ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_html.py ${CMAKE_BINARY_DIR})
tl_script_test(report.xlsx_charts ${TL_PY3} ${CMAKE_CURRENT_SOURCE_DIR}/test_xlsx_charts.py ${CMAKE_BINARY_DIR})
