# The web page served at "/" (web/, issue 14): TypeScript + Vite + ECharts, built by `npm ci`
# (from the committed web/package-lock.json) and `npm run build` into one self-contained
# index.html, then embedded as a generated C++ source defining trainsim::EmbeddedWebPage().
# Where node or npm is absent the build still succeeds: TRAINSIM_WEB_PAGE_SOURCE stays unset, so
# src/serve/web_page_none.cc is used and `trainsim serve` says at "/" that the page was not built.
option(TRAINSIM_BUILD_WEB "Build the web page (web/) when node and npm are found" ON)
find_program(TRAINSIM_NODE node)
find_program(TRAINSIM_NPM npm)

# Explicit list of the page's sources (a change rebuilds the page).
set(TRAINSIM_WEB_SOURCES
  index.html vite.config.ts tsconfig.json
  src/api.ts src/charts.ts src/form.ts src/format.ts src/gantt.ts src/infer.ts src/main.ts
  src/plan.ts src/search.ts
  src/simulate.ts src/state.ts src/style.css src/validate.ts
)

set(TRAINSIM_WEB_PAGE_BUILT OFF)
if(TRAINSIM_BUILD_WEB AND TRAINSIM_NODE AND TRAINSIM_NPM)
  set(web_dir "${CMAKE_SOURCE_DIR}/web")
  set(web_out "${CMAKE_BINARY_DIR}/web")
  file(MAKE_DIRECTORY "${web_out}")
  set(web_deps "")
  foreach(f IN LISTS TRAINSIM_WEB_SOURCES)
    list(APPEND web_deps "${web_dir}/${f}")
  endforeach()
  # npm ci only when the lock file changes; it installs into web/node_modules (git-ignored).
  add_custom_command(
    OUTPUT "${web_out}/npm-ci.stamp"
    COMMAND "${TRAINSIM_NPM}" ci --no-audit --no-fund --loglevel=error
    COMMAND "${CMAKE_COMMAND}" -E touch "${web_out}/npm-ci.stamp"
    WORKING_DIRECTORY "${web_dir}"
    DEPENDS "${web_dir}/package.json" "${web_dir}/package-lock.json"
    COMMENT "web: npm ci (web/package-lock.json)"
    VERBATIM)
  add_custom_command(
    OUTPUT "${web_out}/dist/index.html"
    COMMAND "${CMAKE_COMMAND}" -E env "TRAINSIM_WEB_OUT=${web_out}/dist"
            "${TRAINSIM_NPM}" run --silent build
    WORKING_DIRECTORY "${web_dir}"
    DEPENDS "${web_out}/npm-ci.stamp" ${web_deps}
    COMMENT "web: type check and vite build"
    VERBATIM)
  set(web_cc "${CMAKE_BINARY_DIR}/generated/web_page.cc")
  add_custom_command(
    OUTPUT "${web_cc}"
    COMMAND "${CMAKE_COMMAND}" "-DIN=${web_out}/dist/index.html" "-DOUT=${web_cc}"
            -P "${CMAKE_SOURCE_DIR}/cmake/embed_web.cmake"
    DEPENDS "${web_out}/dist/index.html" "${CMAKE_SOURCE_DIR}/cmake/embed_web.cmake"
    COMMENT "web: embedding index.html"
    VERBATIM)
  set(TRAINSIM_WEB_PAGE_SOURCE "${web_cc}")
  set(TRAINSIM_WEB_PAGE_BUILT ON)
  message(STATUS "web page: built with ${TRAINSIM_NPM} and embedded")
else()
  message(STATUS "web page: not built (node and npm not found, or TRAINSIM_BUILD_WEB=OFF); "
                 "`trainsim serve` answers \"/\" with how to build it")
endif()
