// The op field table (roofline/op_fields.h): what `roofline op KIND` takes, read into a request.
#include "roofline/op_fields.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace roofline {
namespace op_fields_test {

using Given = std::map<std::string, std::string, std::less<>>;

const OpKindInfo& Kind(std::string_view name) {
  const OpKindInfo* k = FindOpKind(name);
  if (k == nullptr) throw std::runtime_error("no op kind " + std::string(name));  // fails the test
  return *k;
}

TEST(OpFields, EveryKindHasUniqueNamedFieldsAndAnExample) {
  std::set<std::string_view> kinds;
  for (const OpKindInfo& k : OpKinds()) {
    EXPECT_TRUE(kinds.insert(k.name).second) << k.name;
    EXPECT_NE(k.help.find("example: roofline op " + std::string(k.name)), std::string::npos)
        << k.name;
    std::set<std::string_view> names;
    for (const OpField& f : k.fields) {
      EXPECT_TRUE(names.insert(f.name).second) << k.name << " --" << f.name;
      EXPECT_FALSE(f.help.empty()) << k.name << " --" << f.name;
      EXPECT_FALSE(f.required && !f.fallback.empty()) << "a required field has no default";
      EXPECT_EQ(f.type == OpFieldType::kChoice, !f.choices.empty()) << k.name << " --" << f.name;
    }
  }
  EXPECT_EQ(kinds.size(), 7u);
  EXPECT_EQ(FindOpKind("matmull"), nullptr);
}

TEST(OpFields, SizesTakeKAndM) {
  Result<OpRequest> a = BuildOpRequest(Kind("matmul"), {{"m", "2k"}, {"n", "4k"}, {"k", "1M"}}, "bf16");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const auto& mm = std::get<MatmulSpec>(a->spec);
  EXPECT_EQ(mm.m, 2048);
  EXPECT_EQ(mm.n, 4096);
  EXPECT_EQ(mm.k, 1048576);
  EXPECT_EQ(mm.batch, 1);  // the table's default
  EXPECT_EQ(mm.a_dtype, DType::kBf16);
  EXPECT_EQ(mm.b_dtype, DType::kBf16);
  EXPECT_TRUE(mm.b_is_weight);
}

TEST(OpFields, DefaultsDerivedFromOtherFields) {
  // 4-bit weights: groups of 128 along K where K divides into them, else a scale per column.
  Result<OpRequest> q = BuildOpRequest(
      Kind("matmul"), {{"m", "1"}, {"n", "4096"}, {"k", "4096"}, {"weight-dtype", "int4"}}, "bf16");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(std::get<MatmulSpec>(q->spec).group_size, 128);
  Result<OpRequest> odd = BuildOpRequest(
      Kind("matmul"), {{"m", "1"}, {"n", "4096"}, {"k", "4000"}, {"weight-dtype", "int4"}}, "bf16");
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  EXPECT_EQ(std::get<MatmulSpec>(odd->spec).group_size, 0);
  // 8-bit activations write bf16.
  Result<OpRequest> f8 = BuildOpRequest(Kind("matmul"), {{"m", "64"}, {"n", "64"}, {"k", "64"}}, "fp8");
  ASSERT_TRUE(f8.ok()) << f8.status().ToString();
  EXPECT_EQ(std::get<MatmulSpec>(f8->spec).out_dtype, DType::kBf16);
  // Attention: key/value heads and length default to the query's.
  Result<OpRequest> at = BuildOpRequest(
      Kind("attention"), {{"heads", "32"}, {"head-dim", "128"}, {"q-len", "4k"}, {"impl", "eager"}},
      "bf16");
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  const auto& a = std::get<AttentionSpec>(at->spec);
  EXPECT_EQ(a.kv_heads, 32);
  EXPECT_EQ(a.kv_len, 4096);
  EXPECT_EQ(at->attention_impl, AttentionImpl::kEager);
  Result<OpRequest> cv = BuildOpRequest(
      Kind("conv2d"),
      {{"in-channels", "3"}, {"out-channels", "8"}, {"height", "8"}, {"width", "8"}, {"kernel", "3x1"}},
      "bf16");
  ASSERT_TRUE(cv.ok()) << cv.status().ToString();
  EXPECT_EQ(std::get<Conv2dSpec>(cv->spec).kernel_h, 3);
  EXPECT_EQ(std::get<Conv2dSpec>(cv->spec).kernel_w, 1);
  EXPECT_EQ(std::get<Conv2dSpec>(cv->spec).stride, 1);
}

// As the options were before the table: an empty text or a negative group size takes the
// default; element and row counts reach the spec's own bound (1e18), not a dimension's (2^40);
// every integer takes k and M.
TEST(OpFields, DefaultsAndRangesAsBefore) {
  Result<OpRequest> q = BuildOpRequest(Kind("matmul"),
                                       {{"m", "1"}, {"n", "4096"}, {"k", "4096"},
                                        {"weight-dtype", "int4"}, {"group-size", "-1"},
                                        {"out-dtype", ""}},
                                       "bf16");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(std::get<MatmulSpec>(q->spec).group_size, 128);
  EXPECT_EQ(std::get<MatmulSpec>(q->spec).out_dtype, DType::kBf16);
  Result<OpRequest> e =
      BuildOpRequest(Kind("elementwise"), {{"elements", "2000000000000"}}, "bf16");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(std::get<ElementwiseSpec>(e->spec).elements, 2e12);
  Result<OpRequest> sm = BuildOpRequest(Kind("softmax"), {{"rows", "2000000000k"}, {"cols", "8"}},
                                        "bf16");
  ASSERT_TRUE(sm.ok()) << sm.status().ToString();
  Result<OpRequest> b = BuildOpRequest(Kind("matmul"),
                                       {{"m", "1"}, {"n", "8"}, {"k", "8"}, {"batch", "2k"}}, "bf16");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(std::get<MatmulSpec>(b->spec).batch, 2048);
  // A dimension past 2^40 is refused by the spec's check, as before.
  Result<OpRequest> big = BuildOpRequest(Kind("matmul"),
                                         {{"m", "2199023255553"}, {"n", "1"}, {"k", "1"}}, "bf16");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().where(), "--m");
  EXPECT_NE(big.status().what().find("absurdly large"), std::string::npos);
  // Past 64 bits: out of range, not "not a size".
  Result<OpRequest> huge = BuildOpRequest(
      Kind("elementwise"), {{"elements", "99999999999999999999"}}, "bf16");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().what().find("out of range"), std::string::npos);
}

TEST(OpFields, ErrorsNameTheFlag) {
  struct Case {
    const char* kind;
    Given given;
    const char* where;
    const char* what;
  };
  const Case cases[] = {
      {"matmul", {{"m", "1"}, {"n", "1"}}, "--k", "is required"},
      {"matmul", {{"m", "2q"}, {"n", "1"}, {"k", "1"}}, "--m", "not a size"},
      {"matmul", {{"m", "0"}, {"n", "1"}, {"k", "1"}}, "--m", "positive"},
      {"matmul", {{"m", "1"}, {"n", "1"}, {"k", "1"}, {"heads", "2"}}, "--heads", "takes no"},
      {"matmul", {{"m", "1"}, {"n", "1"}, {"k", "1"}, {"weight-dtype", "in4"}}, "--weight-dtype",
       "in4"},
      {"attention", {{"heads", "32"}, {"head-dim", "64"}, {"q-len", "1"}, {"impl", "fast"}},
       "--impl", "expected flash or eager"},
      {"attention", {{"heads", "32"}, {"head-dim", "64"}, {"q-len", "1"}, {"kv-dtype", "int4"}},
       "--kv-dtype", "not modelled"},
      {"conv2d",
       {{"in-channels", "3"}, {"out-channels", "8"}, {"height", "8"}, {"width", "8"}, {"kernel", "3y3"}},
       "--kernel", "expected R or RxS"},
      {"elementwise", {{"elements", "16"}, {"inputs", "99999999999"}}, "--inputs", "0..16"},
      {"elementwise", {{"elements", "16"}, {"flops-per-element", "1e"}}, "--flops-per-element",
       "not a number"},
  };
  for (const Case& c : cases) {
    Result<OpRequest> r = BuildOpRequest(Kind(c.kind), c.given, "bf16");
    ASSERT_FALSE(r.ok()) << c.kind << " " << c.where;
    EXPECT_EQ(r.status().where(), c.where) << r.status().ToString();
    EXPECT_NE(r.status().what().find(c.what), std::string::npos) << r.status().ToString();
  }
}

}  // namespace op_fields_test
}  // namespace roofline
