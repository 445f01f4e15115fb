#include "roofline/flip.h"

namespace roofline {

FlipPoint FindFlipUp(const std::function<std::string(int64_t)>& verdict, int64_t lo, int64_t hi) {
  return FindFlip<std::string>(verdict, lo, hi);
}

}  // namespace roofline
