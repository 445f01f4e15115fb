#include "roofline/status.h"

#include <gtest/gtest.h>

#include "roofline/dtype.h"
#include "roofline/suggest.h"
#include "roofline/units.h"

namespace roofline {
namespace status_test {

TEST(Status, OkAndErrorsFormatWhereAndWhat) {
  EXPECT_TRUE(Status::Ok().ok());
  const Status s = Status::Invalid("dev.json: memory[0]", "must be positive");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "dev.json: memory[0]: must be positive");
  EXPECT_EQ(s.WithPrefix("op").ToString(), "op: dev.json: memory[0]: must be positive");
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> good = 3;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = Status::NotFound("x", "missing");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
}

TEST(DType, SizesAndParsing) {
  EXPECT_EQ(BitsOf(DType::kBf16), 16);
  EXPECT_DOUBLE_EQ(BytesOf(DType::kInt4), 0.5);
  EXPECT_EQ(BitsOf(DType::kTf32), 32);  // stored as fp32
  EXPECT_EQ(*ParseDType("bfloat16", "--dtype"), DType::kBf16);
  const Result<DType> bad = ParseDType("bf61", "--dtype");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().what().find("did you mean 'bf16'"), std::string::npos);
  EXPECT_EQ(bad.status().where(), "--dtype");
}

TEST(Suggest, EditDistanceAndDidYouMean) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(DidYouMean("h100", {"h100-sxm", "a100-sxm-80gb"}), "; did you mean 'h100-sxm'?");
  EXPECT_EQ(DidYouMean("zzzzzzzz", {"h100-sxm", "a100-sxm-80gb"}), "");
  // A swap of neighbours is one typo; two edits in a three-letter word are not a typo.
  EXPECT_EQ(DidYouMean("bf61", {"bf16", "fp16"}), "; did you mean 'bf16'?");
  EXPECT_EQ(DidYouMean("bacth", {"batch", "prompt"}), "; did you mean 'batch'?");
  EXPECT_EQ(DidYouMean("--why", {"--hw", "--batch", "--tp"}), "");
  EXPECT_EQ(DidYouMean("hw", {"batch", "tp", "context"}), "");
}

TEST(Units, DecimalPrefixes) {
  EXPECT_EQ(Si(989.4e12, "FLOP/s"), "989 TFLOP/s");
  EXPECT_EQ(Si(3.35e12, "B/s"), "3.35 TB/s");
  EXPECT_EQ(Si(67108864, "B"), "67.1 MB");  // decimal, not MiB
  EXPECT_EQ(Seconds(69.47e-6), "69.5 us");
  EXPECT_EQ(Seconds(1.2e-3), "1.20 ms");
  EXPECT_EQ(Num(1024), "1024");
}

}  // namespace status_test
}  // namespace roofline
