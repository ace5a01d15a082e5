// The service's OpenAPI 3.1 document (GET /openapi.json), generated from the library's schema
// tables (trainsim/schema.h) and the embedded presets; computed once.
#pragma once

#include <string>

namespace trainsim::serve {

const std::string& OpenApiDocument();

}  // namespace trainsim::serve
