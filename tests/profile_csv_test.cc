// The CSV tokenizer the profiler readers share (src/profile/csv.h). Inputs are written here in the
// shapes ncu and nsys print (RFC 4180 quoting, CRLF, trailing commas, noise lines).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/profile/csv.h"

namespace roofline {
namespace profile_csv_test {

/// Every record of `text`; `error` gets the reader's error, if any.
std::vector<CsvRecord> ReadAll(std::string_view text, std::string* error) {
  CsvReader reader(text);
  std::vector<CsvRecord> out;
  CsvRecord rec;
  while (reader.Next(&rec, error)) out.push_back(rec);
  return out;
}

using Fields = std::vector<std::string>;

TEST(CsvReader, QuotedFieldsWithCommasAndDoubledQuotes) {
  std::string error;
  const auto recs = ReadAll(
      "\"0\",\"void k<\"\"a,b\"\">(float *, int)\",\"5,323,503,232.00\"\n\"1\",\"x\",\"n/a\"\n",
      &error);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields, (Fields{"0", "void k<\"a,b\">(float *, int)", "5,323,503,232.00"}));
  EXPECT_TRUE(recs[0].quoted_first);
  EXPECT_EQ(recs[1].line, 2);
  EXPECT_EQ(recs[1].fields, (Fields{"1", "x", "n/a"}));
  EXPECT_TRUE(error.empty());
}

TEST(CsvReader, TrailingCommaGivesAnEmptyLastField) {
  std::string error;
  const auto recs = ReadAll("\"a\",\"b\",\n", &error);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].fields, (Fields{"a", "b", ""}));
}

TEST(CsvReader, CrlfAndALoneCrAtTheEndAreLineBreaks) {
  std::string error;
  const auto recs = ReadAll("a,b\r\nc,d\r", &error);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields, (Fields{"a", "b"}));
  EXPECT_EQ(recs[1].fields, (Fields{"c", "d"}));  // regression: was "d\r"
  EXPECT_EQ(recs[1].line, 2);
}

TEST(CsvReader, NewlineInsideQuotesKeepsLineNumbersRight) {
  std::string error;
  const auto recs = ReadAll("\"multi\nline\",x\ny,z\n", &error);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields, (Fields{"multi\nline", "x"}));
  EXPECT_EQ(recs[0].line, 1);
  EXPECT_EQ(recs[1].line, 3);
  EXPECT_FALSE(recs[1].quoted_first);
}

TEST(CsvReader, UnterminatedQuoteAtTheEndIsAnError) {
  std::string error;
  const auto recs = ReadAll("\"0\",\"ok\"\n\"1\",\"void k2<float, 4>(float *, int", &error);
  EXPECT_EQ(recs.size(), 1u);
  EXPECT_NE(error.find("unterminated quoted field"), std::string::npos) << error;
}

TEST(CsvReader, PeekAndSkipLinesOfNoise) {
  CsvReader reader("==PROF== Connected to process 1\r\n\"a\",\"b\"\n");
  EXPECT_EQ(reader.PeekLine(), "==PROF== Connected to process 1");
  EXPECT_TRUE(IsProfilerNoiseLine(reader.PeekLine()));
  reader.SkipLine();
  EXPECT_EQ(reader.line(), 2);
  CsvRecord rec;
  std::string error;
  ASSERT_TRUE(reader.Next(&rec, &error));
  EXPECT_EQ(rec.fields, (Fields{"a", "b"}));
  EXPECT_EQ(rec.line, 2);
  EXPECT_TRUE(reader.AtEnd());
  EXPECT_FALSE(reader.Next(&rec, &error));
}

TEST(CsvNumber, ThousandsSeparatorsSignsAndExponents) {
  // "5,323,503,232.00" is dram__bytes.sum of the first kernel of the shared A100 sample
  // (ncu_metrics_sgemm_a100.csv, printed with --print-fp).
  EXPECT_EQ(ParseCsvNumber("5,323,503,232.00"), 5323503232.0);
  EXPECT_EQ(ParseCsvNumber("16,840,298,332,000.00"), 16840298332000.0);
  EXPECT_EQ(ParseCsvNumber(" 764,999,991.90 "), 764999991.90);
  EXPECT_EQ(ParseCsvNumber("-1.5e3"), -1500.0);
  EXPECT_EQ(ParseCsvNumber("+2"), 2.0);
  EXPECT_EQ(ParseCsvNumber("0"), 0.0);
  EXPECT_EQ(ParseCsvNumber("1e-400"), 0.0);  // underflow reads as zero
}

TEST(CsvNumber, RejectsWhatIsNotOneFiniteNumber) {
  for (const char* bad : {"n/a", "", "-", "1,23", "12,3456", ",123", "1.000,000", "1e400", "inf",
                          "nan", "0x10", "1.2.3", "CachePreferNone", "++1", "1e"}) {
    EXPECT_EQ(ParseCsvNumber(bad), std::nullopt) << bad;
  }
}

TEST(CsvNoise, ProfilerMessagesAreNoise) {
  EXPECT_TRUE(IsProfilerNoiseLine("==PROF== Disconnected from process 41277"));
  EXPECT_TRUE(IsProfilerNoiseLine("==WARNING== No kernels were profiled."));
  EXPECT_TRUE(IsProfilerNoiseLine("==ERROR== The application returned an error code (1)."));
  EXPECT_FALSE(IsProfilerNoiseLine("\"ID\",\"Process ID\""));
  EXPECT_FALSE(IsProfilerNoiseLine("="));
}

}  // namespace profile_csv_test
}  // namespace roofline
