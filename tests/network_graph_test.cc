// The graph file format: reading, writing, dims, shapes and the errors of bad files.
#include <gtest/gtest.h>

#include "roofline/network.h"

namespace roofline {
namespace network_graph_test {

std::string Fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/graphs/" + name;
}

TEST(NetworkGraph, ReadsTheSmallConvNet) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("small_cnn.json"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->name, "small_cnn");
  ASSERT_EQ(g->dims.size(), 1u);
  EXPECT_EQ(g->dims[0].first, "batch");
  EXPECT_EQ(g->dims[0].second, 1);
  EXPECT_EQ(g->nodes.size(), 9u);
  EXPECT_EQ(g->nodes[0].op, "conv");
  EXPECT_EQ(g->nodes[0].attrs.Ints("padding"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(g->nodes[5].attrs.Number("global", 0), 1);  // booleans read as 0/1
  EXPECT_EQ(g->nodes[1].attrs.String("kind"), "batch");
  const NetTensor* mean = g->FindTensor("bn1.running_mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_TRUE(mean->weight);
  EXPECT_FALSE(mean->parameter);
  EXPECT_EQ(g->FindTensor("nope"), nullptr);
}

TEST(NetworkGraph, ScaledSymbolicEntries) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("transformer_block.json"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const NetTensor* q = g->FindTensor("q");
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->shape[0].terms.size(), 1u);
  EXPECT_EQ(q->shape[0].terms[0].dims, std::vector<std::string>{"batch"});
  EXPECT_EQ(q->shape[0].terms[0].num, 4);
  Result<std::vector<int64_t>> s = ResolveShape(*q, {{"batch", 3}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<int64_t>{12, 128, 64}));
}

TEST(NetworkGraph, WritesWhatItReads) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("transformer_block.json"));
  ASSERT_TRUE(g.ok());
  const std::string text = GraphToJson(*g);
  Result<NetworkGraph> back = ParseGraphJson(text, "roundtrip.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(GraphToJson(*back), text);
  EXPECT_EQ(back->nodes.size(), g->nodes.size());
  EXPECT_EQ(back->FindTensor("q")->shape[0].ToString(), "4*batch");
  EXPECT_NE(text.find("\"4*batch\""), std::string::npos);
}

TEST(NetworkGraph, IntegerDtypesKeepTheirSize) {
  NetTensor t;
  ASSERT_TRUE(SetNetDType(t, "int64"));
  EXPECT_EQ(t.ElementBytes(), 8);
  EXPECT_EQ(NetDTypeName(t), "int64");
  ASSERT_TRUE(SetNetDType(t, "bool"));
  EXPECT_EQ(t.ElementBytes(), 1);
  ASSERT_TRUE(SetNetDType(t, "int4"));
  EXPECT_EQ(t.ElementBytes(), 0.5);
  EXPECT_FALSE(SetNetDType(t, "float32"));
}

TEST(NetworkGraph, DimsBindOverDefaults) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("small_cnn.json"));
  ASSERT_TRUE(g.ok());
  Result<DimBindings> d = ResolveDims(*g, {{"batch", 8}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->at("batch"), 8);
  Result<DimBindings> unknown = ResolveDims(*g, {{"height", 8}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().where(), "--dim height");
  EXPECT_NE(unknown.status().what().find("no dimension 'height'"), std::string::npos);
}

TEST(NetworkGraph, DimBindingSyntax) {
  DimBindings d;
  EXPECT_TRUE(ParseDimBinding("batch=8", d).ok());
  EXPECT_EQ(d.at("batch"), 8);
  EXPECT_FALSE(ParseDimBinding("batch", d).ok());
  EXPECT_FALSE(ParseDimBinding("batch=x", d).ok());
  EXPECT_FALSE(ParseDimBinding("batch=0", d).ok());
  const Status big = ParseDimBinding("batch=99999999999999999999", d);
  EXPECT_FALSE(big.ok());
  EXPECT_EQ(big.where(), "--dim batch=99999999999999999999");
}

struct BadFile {
  const char* file;
  const char* where;  ///< expected Status::where() after the fixture directory
  const char* what;   ///< expected part of Status::what()
};

class NetworkGraphBadFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(NetworkGraphBadFile, NamesFileAndField) {
  const BadFile& b = GetParam();
  Result<NetworkGraph> g = LoadGraphFile(Fixture(b.file));
  Status s = g.status();
  if (g.ok()) s = ResolveDims(*g, {}).status();
  if (s.ok()) {
    for (const NetTensor& t : g->tensors) {
      Result<DimBindings> d = ResolveDims(*g, {});
      Result<std::vector<int64_t>> shape = ResolveShape(t, *d);
      if (!shape.ok()) {
        s = shape.status();
        break;
      }
    }
  }
  ASSERT_FALSE(s.ok()) << b.file;
  EXPECT_EQ(s.where().rfind(Fixture(b.file), 0), 0u) << s.ToString();
  EXPECT_NE(s.where().find(b.where), std::string::npos) << s.ToString();
  EXPECT_NE(s.what().find(b.what), std::string::npos) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, NetworkGraphBadFile,
    ::testing::Values(BadFile{"bad_malformed.json", "bad_malformed.json:", "malformed JSON"},
                      BadFile{"bad_unknown_tensor.json", "nodes[3].inputs[0]",
                              "unknown tensor 't9'"},
                      BadFile{"bad_unknown_op.json", "nodes[2].op", "unknown op 'relu'"},
                      BadFile{"bad_version2.json", "version", "version 2 is newer"},
                      BadFile{"bad_unbound_dim.json", "dims.batch", "--dim batch=N"}));

TEST(NetworkGraph, OverflowingShapeIsRejected) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("bad_overflow.json"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Result<DimBindings> d = ResolveDims(*g, {});
  ASSERT_TRUE(d.ok());
  Result<std::vector<int64_t>> s = ResolveShape(*g->FindTensor("x"), *d);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().what().find("2^62"), std::string::npos);
  // A factor that pushes a dimension over 2^40.
  NetTensor t;
  t.name = "t";
  t.shape = {ShapeEntry::Sym("batch", 4)};
  Result<std::vector<int64_t>> over = ResolveShape(t, {{"batch", int64_t{1} << 39}});
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().what().find("exceeds 2^40"), std::string::npos);
}

// Entries that are polynomials in several dimensions: image sides, a token count with text
// appended, a batch times heads.
TEST(NetworkGraph, ShapeExpressions) {
  const std::vector<std::string> dims = {"batch", "height", "width"};
  const DimBindings at = {{"batch", 2}, {"height", 1024}, {"width", 768}};
  struct Case {
    std::string text, canonical;
    int64_t value;
  };
  const Case cases[] = {
      {"batch", "batch", 2},
      {"4*batch", "4*batch", 8},
      {"height*width/64+77", "height*width/64+77", 1024 * 768 / 64 + 77},
      {"height / 8 - 1", "height/8-1", 127},
      {"batch*height*width/256+512*batch", "batch*height*width/256+512*batch",
       2 * 1024 * 768 / 256 + 1024},
      {"3*height*2/4", "3*height/2", 1536},
      {"77+height*width/64", "height*width/64+77", 1024 * 768 / 64 + 77},
      {"-height/2+width", "-height/2+width", 256},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<ShapeEntry> e = ParseShapeExpression(c.text, dims);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e->ToString(), c.canonical);
    NetTensor t;
    t.name = "t";
    t.shape = {*e};
    Result<std::vector<int64_t>> s = ResolveShape(t, at);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->at(0), c.value);
    // The canonical text reads back to the same entry.
    Result<ShapeEntry> back = ParseShapeExpression(e->ToString(), dims);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->ToString(), c.canonical);
  }
  NetTensor t;
  t.name = "latent";
  t.shape = {*ParseShapeExpression("height/8", dims)};
  Result<std::vector<int64_t>> odd = ResolveShape(t, {{"batch", 1}, {"height", 100}, {"width", 8}});
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().where(), "latent");
  EXPECT_NE(odd.status().what().find("'height/8' is not a whole number at"), std::string::npos)
      << odd.status().ToString();
  t.shape = {*ParseShapeExpression("width-height", dims)};
  Result<std::vector<int64_t>> negative = ResolveShape(t, at);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().what().find("is negative"), std::string::npos);
  t.shape = {*ParseShapeExpression("batch*height*width*width", dims)};
  Result<std::vector<int64_t>> huge = ResolveShape(
      t, {{"batch", int64_t{1} << 40}, {"height", int64_t{1} << 40}, {"width", int64_t{1} << 40}});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().what().find("exceeds 2^40"), std::string::npos);
  // Four dimensions whose product passes 2^127 on the way: caught before the multiply.
  t.shape = {*ParseShapeExpression("batch*height*width*width", dims)};
  Result<std::vector<int64_t>> wide = ResolveShape(t, {{"batch", int64_t{1} << 40},
                                                       {"height", int64_t{1} << 40},
                                                       {"width", (int64_t{1} << 40) - 1}});
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().what().find("exceeds 2^40 at"), std::string::npos)
      << wide.status().ToString();
}

// {"default": N, "multiple": M}: values of the dimension must be multiples of M (the sizes are
// exact there only); the writer keeps the step.
TEST(NetworkGraph, DimensionSteps) {
  const std::string text = R"({"format": "roofline-graph", "version": 1, "dims": {"batch": 1,
    "height": {"default": 64, "multiple": 8}}, "tensors": {"x": {"shape": ["batch", 4,
    "height/8"], "dtype": "fp16"}}, "inputs": ["x"], "outputs": ["x"], "nodes": []})";
  Result<NetworkGraph> g = ParseGraphJson(text, "g.json");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->dim_multiples.at("height"), 8);
  Result<DimBindings> ok = ResolveDims(*g, {{"height", 1024}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->at("height"), 1024);
  Result<DimBindings> bad = ResolveDims(*g, {{"height", 1020}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "--dim height");
  EXPECT_NE(bad.status().what().find("1020 is not a multiple of 8 (g.json: dims.height.multiple"),
            std::string::npos)
      << bad.status().ToString();
  const std::string out = GraphToJson(*g);
  EXPECT_NE(out.find("\"multiple\": 8"), std::string::npos) << out;
  Result<NetworkGraph> back = ParseGraphJson(out, "back.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(GraphToJson(*back), out);
}

// Peak activation memory of an eager pass, by hand: x (16 B) -> a = relu(x) (16 B) -> v =
// view(a) -> b = v + x (16 B) -> c = b * 2 (16 B, the output). While b is computed x, a and b are
// alive (48 B); a view allocates nothing; weights are not counted.
TEST(NetworkGraph, PeakActivations) {
  const std::string text = R"({"format": "roofline-graph", "version": 1, "dims": {"n": 4},
    "tensors": {"x": {"shape": ["n"], "dtype": "fp32"}, "w": {"shape": [1000], "dtype": "fp32",
    "weight": true}, "a": {"shape": ["n"], "dtype": "fp32"}, "v": {"shape": ["n"],
    "dtype": "fp32"}, "b": {"shape": ["n"], "dtype": "fp32"}, "c": {"shape": ["n"],
    "dtype": "fp32"}}, "inputs": ["x"], "outputs": ["c"], "nodes": [
    {"name": "relu", "op": "elementwise", "inputs": ["x", "w"], "outputs": ["a"]},
    {"name": "view", "op": "view", "inputs": ["a"], "outputs": ["v"]},
    {"name": "add", "op": "elementwise", "inputs": ["v", "x"], "outputs": ["b"]},
    {"name": "mul", "op": "elementwise", "inputs": ["b"], "outputs": ["c"]}]})";
  Result<NetworkGraph> g = ParseGraphJson(text, "g.json");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Result<double> peak = PeakActivationBytes(*g, {{"n", 4}});
  ASSERT_TRUE(peak.ok());
  EXPECT_EQ(*peak, 48);
  // It scales with the dimension.
  EXPECT_EQ(*PeakActivationBytes(*g, {{"n", 1000}}), 12000);
}

TEST(NetworkGraph, FieldErrors) {
  const std::string head = R"({"format": "roofline-graph", "version": 1, )";
  struct Case {
    std::string body, where, what;
  };
  const Case cases[] = {
      {R"("tensors": {"x": {"shape": [1], "dtype": "float"}}, "nodes": []})", "tensors.x.dtype",
       "unknown dtype 'float'"},
      {R"("tensors": {"x": {"shape": ["b"], "dtype": "fp16"}}, "nodes": []})", "tensors.x.shape[0]",
       "unknown dimension 'b'"},
      {R"("tensors": {"x": {"shape": [-1], "dtype": "fp16"}}, "nodes": []})", "tensors.x.shape[0]",
       "expected an integer in 0.."},
      {R"("tensors": {"x": {"shape": [1], "dtype": "fp16"}}, "nodes": [{"name": "a", "op": "view",
         "inputs": ["x"], "outputs": ["x"]}, {"name": "a", "op": "view", "outputs": ["x"]}]})",
       "nodes[1].name", "duplicate node name 'a'"},
      {R"("tensors": {}, "nodes": [{"name": "a", "op": "matmull", "outputs": []}]})", "nodes[0].op",
       "did you mean 'matmul'"},
      {R"("tensors": {}})", "nodes", "missing"},
      // Shape expressions and dimension steps.
      {R"("dims": {"h": 8}, "tensors": {"x": {"shape": ["h**2"], "dtype": "fp16"}}, "nodes": []})",
       "tensors.x.shape[0]", "'h**2': unexpected '*'"},
      {R"("dims": {"h": 8}, "tensors": {"x": {"shape": ["h/0"], "dtype": "fp16"}}, "nodes": []})",
       "tensors.x.shape[0]", "a divisor outside 1..2^20"},
      {R"("dims": {"h": 8}, "tensors": {"x": {"shape": ["h*w/64"], "dtype": "fp16"}},
         "nodes": []})",
       "tensors.x.shape[0]", "unknown dimension 'w' in 'h*w/64'"},
      {R"("dims": {"h": 8}, "tensors": {"x": {"shape": ["3+4"], "dtype": "fp16"}}, "nodes": []})",
       "tensors.x.shape[0]", "no dimension in it"},
      {R"("dims": {"h": 8}, "tensors": {"x": {"shape": ["h+"], "dtype": "fp16"}}, "nodes": []})",
       "tensors.x.shape[0]", "ends early"},
      {R"("dims": {"h": 8}, "tensors": {"x": {"shape": ["h^2"], "dtype": "fp16"}}, "nodes": []})",
       "tensors.x.shape[0]", "unexpected '^'"},
      {R"("dims": {"h": {"default": 12, "multiple": 8}}, "tensors": {}, "nodes": []})",
       "dims.h.default", "12 is not a multiple of 8"},
      {R"("dims": {"h": {"multiple": 8}}, "tensors": {}, "nodes": []})", "dims.h.default",
       "missing"},
      {R"("dims": {"h": {"default": 8, "multiple": 0}}, "tensors": {}, "nodes": []})",
       "dims.h.multiple", "expected an integer in 1.."},
      {R"("dims": {"h w": 8}, "tensors": {}, "nodes": []})", "dims.h w", "not a dimension name"},
      {R"("dims": {"h": {"default": 64, "mutliple": 8}}, "tensors": {}, "nodes": []})",
       "dims.h.mutliple", "did you mean 'multiple'"},
  };
  for (const Case& c : cases) {
    Result<NetworkGraph> g = ParseGraphJson(head + c.body, "g.json");
    ASSERT_FALSE(g.ok()) << c.body;
    EXPECT_EQ(g.status().where(), "g.json: " + c.where) << g.status().ToString();
    EXPECT_NE(g.status().what().find(c.what), std::string::npos) << g.status().ToString();
  }
  Result<NetworkGraph> not_graph = ParseGraphJson(R"({"model_type": "llama"})", "c.json");
  ASSERT_FALSE(not_graph.ok());
  EXPECT_EQ(not_graph.status().where(), "c.json: format");
}

}  // namespace network_graph_test
}  // namespace roofline
