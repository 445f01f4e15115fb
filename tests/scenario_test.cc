// The Scenario's field table: one row per option, read the same from the command line, a
// published run and Python; Validate holds the rules between fields.
#include "roofline/scenario.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "roofline/published.h"
#include "tests/cli_runner.h"

namespace roofline {
namespace scenario_test {

using testing::RunCli;

TEST(ScenarioFields, EveryRowIsNamedOnceAndFoundByFlagNameOrVaryName) {
  std::set<std::string_view> flags, names;
  for (const Field& f : ScenarioFields()) {
    EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_EQ(f.flag.substr(0, 2), "--") << f.flag;
    EXPECT_FALSE(f.help.empty()) << f.flag;
    EXPECT_EQ(f.type == FieldType::kChoice, !f.choices.empty()) << f.flag;
    EXPECT_EQ(FindField(f.flag), &f);
    EXPECT_EQ(FindField(f.name), &f);
    EXPECT_EQ(FindField(f.flag.substr(2)), &f);  // "kv-dtype", as --vary names it
    // A choice field's default is one of its choices.
    if (f.type == FieldType::kChoice) {
      EXPECT_NE(std::find(f.choices.begin(), f.choices.end(), FieldText(Scenario{}, f.id)),
                f.choices.end())
          << f.flag;
    }
  }
  EXPECT_EQ(FindField("--no-such-option"), nullptr);
}

// What SetField reads back, FieldText writes: the table round-trips every field it sets.
TEST(ScenarioFields, TextRoundTrips) {
  Scenario s;
  ASSERT_TRUE(SetField(s, FieldId::kContext, "32k").ok());
  ASSERT_TRUE(SetField(s, FieldId::kKvDtype, "fp8").ok());
  ASSERT_TRUE(SetField(s, FieldId::kRuntime, "cuda-graph").ok());
  ASSERT_TRUE(SetField(s, FieldId::kDims, "batch=4").ok());
  ASSERT_TRUE(SetField(s, FieldId::kDims, "height=1k").ok());
  ASSERT_TRUE(SetField(s, FieldId::kEfficiency, "matmul=0.7").ok());
  for (const Field& f : ScenarioFields()) {
    const std::string text = FieldText(s, f.id);
    if (text.empty() || f.type == FieldType::kPairs) continue;
    Scenario t;
    ASSERT_TRUE(SetField(t, f.id, text).ok()) << f.flag << " " << text;
    EXPECT_EQ(FieldText(t, f.id), text) << f.flag;
  }
  EXPECT_EQ(s.workload.context, 32768);
  EXPECT_EQ(FieldText(s, FieldId::kDims), "batch=4,height=1024");
  EXPECT_TRUE(s.Given(FieldId::kContext));
  EXPECT_FALSE(s.Given(FieldId::kPrompt));
}

TEST(ScenarioFields, SizesTakeKAndMSuffixes) {
  EXPECT_EQ(*ParseSize("32k", "--x"), 32768);
  EXPECT_EQ(*ParseSize("128K", "--x"), 131072);
  EXPECT_EQ(*ParseSize("2M", "--x"), 2097152);
  EXPECT_EQ(*ParseSize("4096", "--x"), 4096);
  for (const char* bad : {"", "k", "32q", "1.5k", "0x10", "--5"}) {
    Result<int64_t> r = ParseSize(bad, "--prompt");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().where(), "--prompt");
    EXPECT_NE(r.status().what().find("not a size"), std::string::npos) << r.status().what();
  }
  // The bound applies after the suffix (fuzz_scenario found "3333333332k" accepted while the
  // 3413333331968 it stands for was refused): 2^40 is the largest size either way.
  EXPECT_EQ(*ParseSize("1073741824k", "--x"), int64_t{1} << 40);
  EXPECT_NE(ParseSize("1073741825k", "--x").status().what().find("out of range"),
            std::string::npos);
  // An integer too long for 64 bits is out of range too, not "not a size".
  EXPECT_NE(ParseSize("99999999999999999999", "--x").status().what().find("out of range"),
            std::string::npos);
  EXPECT_NE(ParseSize("-2000000000000", "--x").status().what().find("'-2000000000000' is out"),
            std::string::npos);
  EXPECT_EQ(*ParseSize("3000000000000", "--x", int64_t{1} << 50), 3000000000000);
  EXPECT_FALSE(ParseSize("3333333332k", "--x").ok());
  EXPECT_FALSE(ParseSize("1048577M", "--x").ok());
  Scenario s;
  for (const char* flag : {"--batch", "--prompt", "--context", "--group-size"}) {
    EXPECT_TRUE(SetField(s, FindField(flag)->id, "2k").ok()) << flag;
  }
  EXPECT_EQ(s.workload.batch, 2048);
}

TEST(ScenarioFields, BadValuesNameTheFlagAndWhatIsExpected) {
  Scenario s;
  Status st = SetField(s, FieldId::kFusion, "fusd");
  EXPECT_EQ(st.where(), "--fusion");
  EXPECT_NE(st.what().find("unknown fusion 'fusd': expected eager or fused"), std::string::npos)
      << st.what();
  EXPECT_NE(st.what().find("did you mean 'fused'"), std::string::npos) << st.what();
  st = SetField(s, FieldId::kTp, "two");
  EXPECT_EQ(st.where(), "--tp");
  st = SetField(s, FieldId::kDtype, "tf32");
  EXPECT_NE(st.what().find("compute mode"), std::string::npos);
  st = SetField(s, FieldId::kDims, "batch");
  EXPECT_EQ(st.where(), "--dim batch");
  st = SetField(s, FieldId::kLaunchOverheadUs, "2e7");
  EXPECT_EQ(st.where(), "--launch-overhead-us");
  // A failed read changes nothing and marks nothing given.
  EXPECT_FALSE(s.Given(FieldId::kFusion));
  EXPECT_EQ(s.workload.fusion, FusionMode::kEager);
}

TEST(ScenarioValidate, AContextShorterThanThePromptIsRefused) {
  Scenario s;
  ASSERT_TRUE(SetField(s, FieldId::kPrompt, "4096").ok());
  ASSERT_TRUE(SetField(s, FieldId::kContext, "10").ok());
  Status st = Validate(s, false);
  EXPECT_EQ(st.where(), "--context");
  EXPECT_NE(st.what().find("shorter than the prompt (4096 tokens, --prompt)"), std::string::npos)
      << st.what();
  // Without --prompt, a shorter context is the prompt too.
  Scenario t;
  ASSERT_TRUE(SetField(t, FieldId::kContext, "1k").ok());
  ApplyDerivedDefaults(t);
  EXPECT_EQ(t.workload.prompt, 1024);
  EXPECT_TRUE(Validate(t, false).ok());
}

TEST(ScenarioValidate, FieldsOfTheOtherKindOfModelAreRefused) {
  Scenario net;
  ASSERT_TRUE(SetField(net, FieldId::kBatch, "8").ok());
  Status st = Validate(net, true);
  EXPECT_EQ(st.where(), "--batch");
  EXPECT_NE(st.what().find("--dim NAME=VALUE"), std::string::npos);
  Scenario llm;
  ASSERT_TRUE(SetField(llm, FieldId::kSteps, "30").ok());
  st = Validate(llm, false);
  EXPECT_EQ(st.where(), "--steps");
  Scenario cfg;
  ASSERT_TRUE(SetField(cfg, FieldId::kCfg, "true").ok());
  EXPECT_EQ(Validate(cfg, true).where(), "--cfg");
  Scenario modules;
  ASSERT_TRUE(SetField(modules, FieldId::kModules, "hf-transformers").ok());
  ASSERT_TRUE(SetField(modules, FieldId::kRuntime, "compiled").ok());
  EXPECT_EQ(Validate(modules, false).where(), "--modules");
}

TEST(ScenarioCli, SizesWithSuffixesGiveTheSameAnswerAsDigits) {
  const auto k = RunCli({"model", "llama-3-8b", "--phase", "decode", "--context", "32k",
                         "--format", "json"});
  const auto digits = RunCli({"model", "llama-3-8b", "--phase", "decode", "--context", "32768",
                              "--format", "json"});
  ASSERT_EQ(k.status, 0) << k.err;
  EXPECT_EQ(k.out, digits.out);
  const auto bad = RunCli({"model", "llama-3-8b", "--context", "32q"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("error: --context: '32q' is not a size"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
}

TEST(ScenarioCli, AContextShorterThanTheGivenPromptIsOneLine) {
  const auto r = RunCli({"model", "llama-3-8b", "--prompt", "4096", "--context", "10"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("error: --context: 10 keys is shorter than the prompt"),
            std::string::npos)
      << r.err;
  const auto sweep = RunCli({"sweep", "llama-3-8b", "--prompt", "4096", "--vary",
                             "context=1k:64k", "--phase", "decode"});
  EXPECT_EQ(sweep.status, 2);
  EXPECT_NE(sweep.err.find("error: --vary context: a context of 1024 keys is shorter than the "
                           "prompt (4096 tokens, --prompt)"),
            std::string::npos)
      << sweep.err;
  // The default prompt too, and a swept prompt beyond a given context.
  EXPECT_EQ(RunCli({"sweep", "llama-3-8b", "--vary", "context=1k:4k"}).status, 2);
  EXPECT_EQ(RunCli({"sweep", "llama-3-8b", "--prompt", "1k", "--vary", "context=1k:4k",
                    "--phase", "decode"})
                .status,
            0);
  const auto prompts = RunCli({"sweep", "llama-3-8b", "--context", "2k", "--vary",
                               "prompt=1k:8k"});
  EXPECT_EQ(prompts.status, 2);
  EXPECT_NE(prompts.err.find("error: --vary prompt: a prompt of 8192 tokens is longer than "
                             "--context 2048"),
            std::string::npos)
      << prompts.err;
  // A context alone sets the prompt when shorter: the prefill is of 1024 tokens.
  const auto alone = RunCli({"model", "llama-3-8b", "--context", "1k", "--format", "json"});
  ASSERT_EQ(alone.status, 0) << alone.err;
  const nlohmann::json j = nlohmann::json::parse(alone.out);
  EXPECT_EQ(j["workload"]["prompt"], 1024);
}

TEST(ScenarioCli, EachCommandListsOnlyTheFieldsItTakes) {
  const auto model = RunCli({"model", "--help"});
  const auto profile = RunCli({"profile", "torch", "--help"});
  const auto plan = RunCli({"plan", "--help"});
  for (const Field& f : ScenarioFields()) {
    if (f.id == FieldId::kModel) continue;
    const std::string flag = "\n  " + std::string(f.flag) + " ";
    EXPECT_NE(model.out.find(flag), std::string::npos) << f.flag;
    EXPECT_EQ(profile.out.find(flag) != std::string::npos,
              (f.scope & kScopeLlm) != 0 || f.id == FieldId::kModel)
        << f.flag;
  }
  for (const char* ignored : {"\n  --batch ", "\n  --context ", "\n  --phase "}) {
    EXPECT_EQ(plan.out.find(ignored), std::string::npos) << ignored;
  }
  EXPECT_EQ(plan.out.find("INT=1"), std::string::npos) << plan.out;
  EXPECT_EQ(RunCli({"plan", "llama-3-8b", "--batch", "8"}).status, 2);
}

// The published-runs reader takes the field table's keys: a run says what the flags say.
TEST(ScenarioPublished, ARunReadsAsItsFlags) {
  const std::string text =
      R"({"schema_version": 1, "runs": [{"id": "r1", "model": "llama-2-7b", "hw": "a100-sxm-80gb",
      "tp": 2, "batch": 4, "phase": "decode", "prompt": 512, "context": 1024, "dtype": "fp16",
      "weight_dtype": "int4", "zero_dtype": "bf16", "group_size": 64, "kv_dtype": "fp8",
      "runtime": "cuda-graph", "fusion": "fused", "accumulate": "fp16", "mla": "naive",
      "measured": {"metric": "tpot_s", "value": 0.01}, "framework": "f",
      "stack": "x", "source": "s", "quote": "q"}]})";
  Result<std::vector<PublishedRun>> runs = ParsePublishedRuns(text, "runs.json");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  Scenario cli;
  const std::pair<FieldId, const char*> flags[] = {
      {FieldId::kModel, "llama-2-7b"}, {FieldId::kHw, "a100-sxm-80gb"},
      {FieldId::kTp, "2"},             {FieldId::kBatch, "4"},
      {FieldId::kPhase, "decode"},     {FieldId::kPrompt, "512"},
      {FieldId::kContext, "1024"},     {FieldId::kDtype, "fp16"},
      {FieldId::kWeightDtype, "int4"}, {FieldId::kZeroDtype, "bf16"},
      {FieldId::kGroupSize, "64"},     {FieldId::kKvDtype, "fp8"},
      {FieldId::kRuntime, "cuda-graph"}, {FieldId::kFusion, "fused"},
      {FieldId::kAccumulate, "fp16"},  {FieldId::kMla, "naive"}};
  for (const auto& [id, text] : flags) ASSERT_TRUE(SetField(cli, id, text).ok());
  const Scenario& read = (*runs)[0].scenario;
  for (const Field& f : ScenarioFields()) {
    EXPECT_EQ(FieldText(read, f.id), FieldText(cli, f.id)) << f.name;
  }
  EXPECT_EQ(read.given, cli.given);
  // A key of the table with a bad value names the run and the key.
  std::string bad = text;
  bad.replace(bad.find("\"naive\""), 7, "\"half\"");
  Result<std::vector<PublishedRun>> r = ParsePublishedRuns(bad, "runs.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("runs.json: runs[0] (r1).mla: unknown mla 'half'"),
            std::string::npos)
      << r.status().ToString();
  // A rule between fields speaks of keys in a file, not of options.
  std::string rule = text;
  rule.replace(rule.find("\"fusion\": \"fused\""), 17, "\"fusion\": \"fused\", \"modules\": \"hf-transformers\"");
  Result<std::vector<PublishedRun>> m = ParsePublishedRuns(rule, "runs.json");
  ASSERT_FALSE(m.ok());
  const std::string line = m.status().ToString();
  EXPECT_NE(line.find("runs.json: runs[0] (r1).modules: "), std::string::npos) << line;
  EXPECT_NE(line.find("use fusion eager"), std::string::npos) << line;
  EXPECT_EQ(line.find("--"), std::string::npos) << line;
}

TEST(ScenarioPublished, InFileSpellsFlagsAsKeys) {
  const Status st = InFile(Status::Invalid("--kv-dtype", "with --dtype fp8 use --kv-dtype fp8, "
                                                         "not --bogus or x--dtype"),
                           "f.json: runs[1]");
  EXPECT_EQ(st.where(), "f.json: runs[1].kv_dtype");
  EXPECT_EQ(st.what(), "with dtype fp8 use kv_dtype fp8, not --bogus or x--dtype");
}

}  // namespace scenario_test
}  // namespace roofline
