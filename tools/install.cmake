# install.cmake — what `cmake --install` puts beside the program: the manual
# page (made from the program's own --help), bash and zsh completion, and
# the Python module with its copy of libtracelens and the data files. The
# program and its reference-command links are installed by CMakeLists.txt.

# The system's python3 (Debian's, whose packages the module is installed
# for), as the tests use it.
find_program(TL_PY3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT TL_PY3)
  find_program(TL_PY3 python3)
endif()

if(TL_PY3)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/tracelens.1
    COMMAND ${TL_PY3} ${CMAKE_SOURCE_DIR}/tools/gen-manpage.py ${CMAKE_BINARY_DIR} ${CMAKE_BINARY_DIR}/tracelens.1
    DEPENDS tracelens ${CMAKE_SOURCE_DIR}/tools/gen-manpage.py VERBATIM)
  add_custom_target(manpage ALL DEPENDS ${CMAKE_BINARY_DIR}/tracelens.1)
  install(FILES ${CMAKE_BINARY_DIR}/tracelens.1 DESTINATION share/man/man1)
endif()

install(FILES tools/completion/tracelens.bash DESTINATION share/bash-completion/completions RENAME tracelens)
install(FILES tools/completion/_tracelens DESTINATION share/zsh/site-functions)

# The Python module goes where that Python looks for packages under the
# install prefix: Debian's /usr/lib/python3/dist-packages for /usr,
# /usr/local/lib/python3.X/dist-packages for /usr/local, else
# PREFIX/lib/python3.X/site-packages (the user site for ~/.local; put it
# on PYTHONPATH for other prefixes). Decided at install time so that
# `cmake --install --prefix P` is honoured.
if(TL_SHARED_LIB AND TL_PY3)
  install(CODE "
    execute_process(COMMAND ${TL_PY3} -c
      \"import sys; p = sys.argv[1].rstrip('/'); v = '%d.%d' % sys.version_info[:2]; print('/usr/lib/python3/dist-packages' if p == '/usr' else p + '/lib/python' + v + ('/dist-packages' if p == '/usr/local' else '/site-packages'))\"
      \"\${CMAKE_INSTALL_PREFIX}\"
      OUTPUT_VARIABLE tl_site OUTPUT_STRIP_TRAILING_WHITESPACE)
    message(STATUS \"Python module: \${tl_site}/tracelens\")
    file(INSTALL ${CMAKE_SOURCE_DIR}/python/tracelens/ DESTINATION \"\${tl_site}/tracelens\"
         FILES_MATCHING PATTERN \"*.py\" PATTERN \"__pycache__\" EXCLUDE)
    file(INSTALL $<TARGET_FILE:tracelens_shared> DESTINATION \"\${tl_site}/tracelens\")
    file(INSTALL ${CMAKE_SOURCE_DIR}/data/ DESTINATION \"\${tl_site}/tracelens/data\")
  ")
endif()
