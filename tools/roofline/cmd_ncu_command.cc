// `roofline ncu-command --hw ID`: the Nsight Compute command line for a roofline.
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

int RunNcuCommand(Context& ctx) {
  return Fail(ctx, Status::Unsupported("ncu-command", "not built yet"));
}

}  // namespace roofline::cli
