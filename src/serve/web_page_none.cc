// EmbeddedWebPage when the web page was not built (CMake picks this file when no generated page
// exists): the service then answers "/" with a short page that says how to build it.
#include "serve/web_page.h"

namespace trainsim {

std::string_view EmbeddedWebPage() {
  return {};
}

}  // namespace trainsim
