// `roofline profile ncu|nsys|torch FILE`: profiler output on the roofline.
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

int RunProfile(Context& ctx) {
  return Fail(ctx, Status::Unsupported("profile", "not built yet"));
}

}  // namespace roofline::cli
