// Published end-to-end runs (data/validation/published_runs.json, `roofline validate published
// FILE`): parse, then check a file of at most four runs against the bound and expected time,
// and render the result.
#include <memory>

#include "fuzz/fuzz_util.h"
#include "roofline/device_db.h"
#include "roofline/efficiency.h"
#include "roofline/model_registry.h"
#include "roofline/published.h"
#include "roofline/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  static const Result<DeviceDatabase> db = DeviceDatabase::LoadEmbedded();
  static const Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  static const std::shared_ptr<const EfficiencyData> efficiency = [] {
    Result<EfficiencyData> e = LoadDefaultEfficiencyData();
    return e.ok() ? std::make_shared<const EfficiencyData>(*e) : nullptr;
  }();
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
