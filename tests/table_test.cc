// Tables and their writers: CSV (in parallel, the same bytes), JSON columns, npy; a sweep's
// table read three ways gives the same numbers.
#include "roofline/table.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "roofline/report.h"
#include "roofline/sweep_table.h"
#include "tests/cli_runner.h"

namespace roofline {
namespace table_test {

Table Sample(size_t rows) {
  Table t;
  Column& i = t.Add({"batch", "", Scope::kPoint, ColumnKind::kInt});
  Column& x = t.Add({"time_s", "s", Scope::kStep, ColumnKind::kReal});
  Column& b = t.Add({"fits", "", Scope::kPoint, ColumnKind::kBool});
  Column& c = t.Add({"bound", "", Scope::kStep, ColumnKind::kCode}, {"memory:hbm", "compute"});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e-9, 1e9);
  for (size_t r = 0; r < rows; ++r) {
    i.ints.push_back(static_cast<int64_t>(r) + 1);
    x.reals.push_back(u(rng));
    b.ints.push_back(static_cast<int64_t>(r % 3 == 0));
    c.ints.push_back(static_cast<int64_t>(r % 2));
  }
  return t;
}

TEST(Table, ValidateFindsWhatARegistryGotWrong) {
  Table t = Sample(4);
  EXPECT_EQ(t.Validate(), "");
  t.columns()[1].reals.pop_back();
  EXPECT_NE(t.Validate().find("'time_s' has 3 rows"), std::string::npos);
  Table codes = Sample(2);
  codes.columns()[3].ints[0] = 2;
  EXPECT_NE(codes.Validate().find("code 2 of 2 labels"), std::string::npos);
  Table twice = Sample(1);
  twice.Add({"batch", "", Scope::kPoint, ColumnKind::kInt}).ints.push_back(1);
  EXPECT_NE(twice.Validate().find("twice"), std::string::npos);
}

TEST(Table, CsvFormattedOnSeveralThreadsIsTheSameBytes) {
  const Table t = Sample(50000);  // several blocks
  std::ostringstream one, four;
  WriteCsv(t, one, 1);
  WriteCsv(t, four, 4);
  EXPECT_EQ(one.str(), four.str());
  const std::string csv = one.str();
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "batch,time_s,fits,bound");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 50001);
  // Each number reads back to the same double.
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  const std::string second = line.substr(line.find(',') + 1);
  EXPECT_EQ(std::stod(second.substr(0, second.find(','))), t.columns()[1].reals[0]);
  EXPECT_EQ(line.substr(line.rfind(',') + 1), "memory:hbm");
}

TEST(Table, JsonColumnsReadBackExactly) {
  const Table t = Sample(100);
  std::ostringstream os;
  WriteJsonColumns(t, os, 0);
  const nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_EQ(j["time_s"].size(), 100u);
  for (size_t r = 0; r < 100; ++r) {
    EXPECT_EQ(j["time_s"][r].get<double>(), t.columns()[1].reals[r]);
    EXPECT_EQ(j["batch"][r].get<int64_t>(), static_cast<int64_t>(r) + 1);
    EXPECT_EQ(j["fits"][r].get<bool>(), r % 3 == 0);
    EXPECT_EQ(j["bound"][r], r % 2 ? "compute" : "memory:hbm");
  }
  const nlohmann::json d = nlohmann::json::parse(ColumnsJsonDescription(t));
  EXPECT_EQ(d[1]["unit"], "s");
  EXPECT_EQ(d[3]["kind"], "label");
}

// The .npy layout (numpy.lib.format, version 1.0): magic, version, a little-endian header
// length, a Python dict literal padded to 64 bytes, then packed records.
TEST(Table, NpyIsOneStructuredArray) {
  const Table t = Sample(3);
  std::ostringstream os;
  WriteNpy(t, os);
  const std::string npy = os.str();
  ASSERT_GE(npy.size(), 10u);
  EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(npy[6], 1);
  const size_t header = static_cast<unsigned char>(npy[8]) |
                        (static_cast<size_t>(static_cast<unsigned char>(npy[9])) << 8);
  EXPECT_EQ((10 + header) % 64, 0u);
  const std::string dict = npy.substr(10, header);
  EXPECT_NE(dict.find("'descr': [('batch', '<i8'), ('time_s', '<f8'), ('fits', '|b1'), "
                      "('bound', '|S10'), ]"),
            std::string::npos)
      << dict;
  EXPECT_NE(dict.find("'shape': (3,)"), std::string::npos);
  EXPECT_EQ(dict.back(), '\n');
  const size_t record = 8 + 8 + 1 + 10;
  ASSERT_EQ(npy.size(), 10 + header + 3 * record);
  double x = 0;
  std::memcpy(&x, npy.data() + 10 + header + record + 8, 8);  // row 1, time_s
  EXPECT_EQ(x, t.columns()[1].reals[1]);
  EXPECT_EQ(npy.substr(10 + header + record + 17, 7), std::string("compute"));
}

// Many columns: a header past 64 KiB takes version 2.0 of the format, a 4-byte length.
TEST(Table, NpyOfManyColumnsIsVersionTwo) {
  Table t;
  for (int i = 0; i < 4000; ++i) {
    t.Add({fmt::format("column_{:04d}", i), "", Scope::kPoint, ColumnKind::kInt}).ints = {i, -i};
  }
  std::ostringstream os;
  WriteNpy(t, os);
  const std::string npy = os.str();
  ASSERT_GE(npy.size(), 12u);
  EXPECT_EQ(npy[6], 2);
  size_t header = 0;
  for (size_t i = 0; i < 4; ++i) {
    header |= static_cast<size_t>(static_cast<unsigned char>(npy[8 + i])) << (8 * i);
  }
  EXPECT_GT(header, 65535u);
  EXPECT_EQ((12 + header) % 64, 0u);
  EXPECT_EQ(npy[12 + header - 1], '\n');
  ASSERT_EQ(npy.size(), 12 + header + 2 * 4000 * 8);
  int64_t last = 0;
  std::memcpy(&last, npy.data() + npy.size() - 8, 8);  // row 1, column 3999
  EXPECT_EQ(last, -3999);
}

// Text cells with quotes, backslashes, newlines and control bytes are escaped, and read back.
TEST(Table, JsonColumnsEscapeText) {
  Table t;
  Column& c = t.Add({"name", "", Scope::kPoint, ColumnKind::kText});
  c.texts = {"plain", "a \"quoted\" name", "back\\slash", "two\nlines", std::string("nul\0tab\t", 8),
             "\x01\x1f"};
  std::ostringstream os;
  WriteJsonColumns(t, os, 2);
  const nlohmann::json j = nlohmann::json::parse(os.str());
  ASSERT_EQ(j["name"].size(), c.texts.size());
  for (size_t r = 0; r < c.texts.size(); ++r) EXPECT_EQ(j["name"][r], c.texts[r]) << r;
}

// One registry, three layouts: the columns JSON, the rows JSON and the CSV give the same
// figures for every point and phase.
TEST(SweepTable, EveryLayoutGivesTheSameNumbers) {
  const std::vector<std::string> args = {"sweep", "llama-3-8b", "--vary", "batch=1:64:x4",
                                         "--vary", "kv-dtype=bf16,fp8"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = args;
    a.insert(a.end(), extra.begin(), extra.end());
    testing::CliOutput o = testing::RunCli(a);
    EXPECT_EQ(o.status, 0) << o.err;
    return o.out;
  };
  const nlohmann::json cols = nlohmann::json::parse(run({"--format", "json"}));
  const nlohmann::json rows =
      nlohmann::json::parse(run({"--format", "json", "--json-layout", "rows"}));
  ASSERT_EQ(cols["schema"], 2);
  ASSERT_EQ(cols["rows"], 4 * 2 * 2);
  EXPECT_EQ(cols["crossovers"], rows["crossovers"]);
  EXPECT_EQ(cols["never_flips"], rows["never_flips"]);
  const nlohmann::json& data = cols["data"];
  size_t i = 0;
  for (const nlohmann::json& p : rows["points"]) {
    for (const nlohmann::json& ph : p["phases"]) {
      EXPECT_EQ(data["batch"][i], p["batch"]);
      EXPECT_EQ(data["kv-dtype"][i], p["kv-dtype"]);
      EXPECT_EQ(data["phase"][i], ph["phase"]);
      EXPECT_EQ(data["time_s"][i].get<double>(), ph["time_s"].get<double>());
      EXPECT_EQ(data["expected_time_s"][i].get<double>(), ph["expected_time_s"].get<double>());
      EXPECT_EQ(data["bound"][i], ph["bound"]);
      EXPECT_EQ(data["largest_share"][i], ph["largest_share"]);
      EXPECT_EQ(data["matmuls_bound"][i], ph["class_bounds"]["matmuls"]);
      EXPECT_EQ(data["footprint_bytes"][i].get<double>(), p["footprint_bytes"].get<double>());
      ++i;
    }
  }
  EXPECT_EQ(i, 16u);
  const std::string csv = run({"--format", "csv"});
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 17);
  EXPECT_EQ(csv.substr(0, csv.find(',')), "batch");
}

TEST(SweepTable, VerdictCodesNameTheDevicesResources) {
  ResourceNames n;
  n.compute = {"tensor.bf16", "vector.fp32"};
  n.memory = {"hbm", "l2"};
  n.links = {"nvlink"};
  const std::vector<std::string> labels = VerdictLabels(n);
  for (const Verdict v : {Verdict{BoundKind::kCompute, 1}, Verdict{BoundKind::kCompute, -1},
                          Verdict{BoundKind::kMemory, 1}, Verdict{BoundKind::kComm, 0},
                          Verdict{BoundKind::kOverhead, -1}}) {
    EXPECT_EQ(labels[static_cast<size_t>(VerdictCode(n, v))], n.Name(v));
  }
}

}  // namespace table_test
}  // namespace roofline
