# Precompiled headers (option TRAINSIM_PCH, off by default; `make sanitize-ci` and
# `make test-sanitize` turn it on): the standard and third-party headers that most sources
# include, parsed once per target instead of once per source file (nlohmann/json alone is ~25k
# lines; 28 library sources include it directly, more through project headers). Measured on the
# sanitized library + fuzz harness: 543 s of compile CPU against 718 s without (docs/INPUTS.md,
# "Sanitizer build"). Only external headers go in, and the default build does not use them, so
# a source that forgets one of its own includes still fails there. ccache does not cache sources
# compiled against a precompiled header unless its sloppiness allows it (pch_defines,time_macros).
option(TRAINSIM_PCH "Precompile the common standard and third-party headers" OFF)
set(TRAINSIM_PCH_HEADERS <algorithm> <cmath> <map> <optional> <sstream> <string> <vector>
    <nlohmann/json.hpp> <fmt/format.h>)
if(TRAINSIM_PCH)
  foreach(target trainsim_lib trainsim_serve trainsim trainsim_tests trainsim_fuzz)
    if(TARGET ${target})
      target_precompile_headers(${target} PRIVATE ${TRAINSIM_PCH_HEADERS})
    endif()
  endforeach()
endif()
