// Published end-to-end runs (data/validation/published_runs.json, `roofline validate published
// FILE`): parse, then check a file of at most four runs against the bound and expected time,
// and render the result. The same input as serving runs (data/validation/serving_runs.json,
// `roofline validate serving FILE`): parse, check at most two, render.
#include <memory>

#include "fuzz/fuzz_util.h"
#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/model_registry.h"
#include "roofline/published.h"
#include "roofline/report.h"
#include "roofline/serving_runs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  static const Result<DeviceDatabase> db = DeviceDatabase::LoadEmbedded();
  static const Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  static const std::shared_ptr<const EfficiencyData> efficiency = [] {
    Result<EfficiencyData> e = LoadDefaultEfficiencyData();
    return e.ok() ? std::make_shared<const EfficiencyData>(*e) : nullptr;
  }();
  Result<std::vector<ServingRun>> serving =
      ParseServingRuns(fuzz::AsText(data, size), "fuzz/serving_runs.json");
  if (serving.ok() && serving->size() <= 2 && db.ok() && registry.ok() && efficiency) {
    bool presets = true;
    for (const ServingRun& r : *serving) presets = presets && registry->Find(r.scenario.model).ok();
    // Within sizes a fuzzed file may ask for: a plan point is a few step graphs.
    for (const ServingRun& r : *serving) {
      presets = presets && r.scenario.workload.prompt <= 65536 && r.output <= 65536 &&
                r.concurrency <= 4096 && r.num_prompts <= 4096;
    }
    if (presets) {
      Result<ServingValidation> sv = ValidateServing(*serving, *db, *registry, efficiency);
      if (sv.ok()) {
        (void)RenderServingTable(*sv);
        (void)RenderServingJson(*sv);
      }
    }
  }
  Result<std::vector<PublishedRun>> runs =
      ParsePublishedRuns(fuzz::AsText(data, size), "fuzz/published_runs.json");
  // Each run is a whole model analysis (milliseconds): a few per input keep the rate useful.
  if (!runs.ok() || runs->size() > 4 || !db.ok() || !registry.ok() || !efficiency) return 0;
  // A model that is not a preset is read as a file path: not from fuzzed input.
  for (const PublishedRun& r : *runs) {
    if (!registry->Find(r.scenario.model).ok()) return 0;
  }
  Result<PublishedValidation> v = ValidatePublished(*runs, *db, *registry, efficiency);
  // The report of what parsed: the table and JSON, with the summary stack by stack.
  if (v.ok()) {
    (void)RenderPublishedTable(*v);
    (void)RenderPublishedJson(*v);
  }
  return 0;
}
