// The prediction a profile is put beside (`roofline profile ... --model`): the scenario's model
// and workload costed on the profile's device, its first phase's kernels in execution order.
#ifndef ROOFLINE_PROFILE_PREDICTION_H_
#define ROOFLINE_PROFILE_PREDICTION_H_

#include <memory>
#include <string>
#include <vector>

#include "roofline/device_db.h"
#include "roofline/model_analysis.h"
#include "roofline/profile.h"
#include "roofline/scenario.h"
#include "roofline/setup.h"

namespace roofline {

struct ProfilePrediction {
  ProfilePrediction() = default;
  ProfilePrediction(const ProfilePrediction&) = delete;  // `model` points into `setup`
  ProfilePrediction& operator=(const ProfilePrediction&) = delete;
  Setup setup;
  std::unique_ptr<CostModel> model;  ///< points into setup.device
  ModelAnalysis analysis;
  std::vector<PredictedKernel> kernels;  ///< of the first phase selected
  std::string title;  ///< "llama-3-8b decode on h100-sxm (batch 8, prompt 512)"
};

/// Costs `scenario` (its model, workload and expected-time choices; its device is replaced by
/// `device`, the one the profile ran on). Errors name the flag or the file.
Result<std::unique_ptr<ProfilePrediction>> PredictForProfile(Scenario scenario,
                                                             const Device& device,
                                                             const DeviceDatabase& db);

}  // namespace roofline

#endif  // ROOFLINE_PROFILE_PREDICTION_H_
