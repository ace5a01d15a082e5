#include "trainsim/version.h"

#ifndef TRAINSIM_VERSION
#error "TRAINSIM_VERSION is defined by CMakeLists.txt from project(VERSION)"
#endif

namespace trainsim {

std::string_view TrainsimVersion() {
  return TRAINSIM_VERSION;
}

}  // namespace trainsim
