// The web page served at "/": the built page's index.html as one self-contained file (scripts
// and styles inlined), embedded into the binary at build time. The definition is generated
// from the page's build when it exists (web/); otherwise web_page_none.cc returns "".
#pragma once

#include <string>
#include <string_view>

namespace trainsim {

// The page's HTML, or "" when the page was not built (npm absent).
std::string_view EmbeddedWebPage();

}  // namespace trainsim
