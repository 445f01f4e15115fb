// Helpers shared by the tests.
#ifndef ROOFLINE_TESTS_TEST_UTIL_H_
#define ROOFLINE_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "roofline/cost.h"
#include "roofline/efficiency.h"
#include "roofline/device_db.h"
#include "roofline/op_analysis.h"
#include "roofline/sweep.h"

namespace roofline::testing {

/// The embedded device database (data/hardware at build time).
inline const DeviceDatabase& Db() {
  static const DeviceDatabase db = [] {
    Result<DeviceDatabase> r = DeviceDatabase::LoadEmbedded();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : DeviceDatabase();
  }();
  return db;
}

/// A one-axis LLM sweep ("batch=1:64:x2").
inline Result<SweepResult> SweepOne(const TransformerConfig& c, const Workload& base,
                                    const CostModel& m, PhaseSelection which,
                                    const std::string& axis) {
  Result<SweepAxis> a = ParseSweepAxis(axis);
  if (!a.ok()) return a.status();
  return RunSweep(c, base, m, which, {*a});
}

/// The embedded efficiency data (data/efficiency.json at build time), loaded once.
inline std::shared_ptr<const EfficiencyData> EmbeddedEfficiency() {
  static const std::shared_ptr<const EfficiencyData> d = [] {
    Result<EfficiencyData> r = LoadDefaultEfficiencyData();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::make_shared<const EfficiencyData>(r.ok() ? *r : EfficiencyData{});
  }();
  return d;
}

/// A database device by id (fails the test if absent).
inline const Device& Dev(const std::string& id) {
  Result<const Device*> d = Db().Find(id);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return **d;
}

/// Analyzes one op request, failing the test on error.
inline OpAnalysis Analyze(const OpRequest& r, const CostModel& m) {
  Result<OpAnalysis> a = AnalyzeOp(r, m);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return std::move(a).value();
}

/// Llama-3-8B's decode attention (32 query heads, 8 K/V heads of 128): one new token for each of
/// `batch` sequences against `kv_len` positions.
inline AttentionSpec Llama3DecodeAttention(int64_t batch, int64_t kv_len) {
  AttentionSpec a;
  a.batch = batch;
  a.heads = 32;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.q_len = 1;
  a.kv_len = kv_len;
  return a;
}

/// A bf16 matmul spec with B as a weight.
inline MatmulSpec Mm(int64_t m, int64_t n, int64_t k, DType dt = DType::kBf16) {
  MatmulSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a_dtype = s.b_dtype = s.out_dtype = dt;
  return s;
}

/// A minimal device with one compute ceiling and one memory level (for hand-computable tests).
inline std::string SimpleDeviceJson(double peak_flops, double bandwidth, double capacity = 80e9,
                                    const std::string& extra_links = "") {
  return "{\"schema_version\": 1, \"id\": \"test-dev\", \"name\": \"Test device\", "
         "\"vendor\": \"generic\", \"kind\": \"accelerator\", "
         "\"compute\": {\"tensor.bf16\": {\"value\": " +
         std::to_string(peak_flops) +
         ", \"unit\": \"FLOP/s\", \"provenance\": \"spec\", \"source\": \"test\"}}, "
         "\"memory\": [{\"level\": \"hbm\", \"capacity\": {\"value\": " +
         std::to_string(capacity) +
         ", \"unit\": \"B\", \"provenance\": \"spec\", \"source\": \"test\"}, "
         "\"bandwidth\": {\"value\": " +
         std::to_string(bandwidth) +
         ", \"unit\": \"B/s\", \"provenance\": \"spec\", \"source\": \"test\"}}]" +
         (extra_links.empty() ? "" : ", \"links\": " + extra_links) + "}";
}

}  // namespace roofline::testing

#endif  // ROOFLINE_TESTS_TEST_UTIL_H_
