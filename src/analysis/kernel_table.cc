// The kernel table of a model analysis.
#include "roofline/kernel_table.h"

#include <map>

namespace roofline {
namespace {

/// A code column whose labels are the distinct texts met, in first-seen order.
class Labels {
 public:
  explicit Labels(Column& c) : c_(c) {}
  void Push(const std::string& text) {
    auto [it, fresh] = codes_.emplace(text, static_cast<int64_t>(c_.labels.size()));
    if (fresh) c_.labels.push_back(text);
    c_.ints.push_back(it->second);
  }

 private:
  Column& c_;
  std::map<std::string, int64_t> codes_;
};

}  // namespace

Table KernelTable(const ModelAnalysis& a, const CostModel& model, KernelColumns which) {
  const Device& d = model.device();
  Table t;
  const bool all = which == KernelColumns::kAll;
  Column& phase = t.Add({"phase", "", Scope::kKernel, ColumnKind::kCode}, {"prefill", "decode"});
  Column& group = t.Add({"group", "", Scope::kKernel, ColumnKind::kText});
  Column& name = t.Add({"kernel", "", Scope::kKernel, ColumnKind::kText});
  Column& repeat = t.Add({"repeat", "", Scope::kKernel, ColumnKind::kInt});
  Column& flops = t.Add({"flops", "FLOP", Scope::kKernel, ColumnKind::kReal});
  std::vector<Column*> bytes;
  for (const auto& m : d.memory) {
    bytes.push_back(&t.Add({"bytes_" + m.name, "B", Scope::kKernel, ColumnKind::kReal}));
  }
  Column& intensity =
      t.Add({"intensity_" + d.memory[0].name, "FLOP/B", Scope::kKernel, ColumnKind::kReal});
  Column& comm = t.Add({"comm_bytes", "B", Scope::kKernel, ColumnKind::kReal});
  Column& time = t.Add({"time_s", "s", Scope::kKernel, ColumnKind::kReal});
  Column& bound = t.Add({"bound", "", Scope::kKernel, ColumnKind::kCode});
  Column& share = t.Add({"share", "", Scope::kKernel, ColumnKind::kReal, 6});
  Labels bound_labels(bound);
  Column* expected = nullptr;
  Column* expected_bound = nullptr;
  std::optional<Labels> expected_labels;
  if (model.has_expected()) {
    expected = &t.Add({"expected_time_s", "s", Scope::kKernel, ColumnKind::kReal});
    expected_bound = &t.Add({"expected_bound", "", Scope::kKernel, ColumnKind::kCode});
    expected_labels.emplace(*expected_bound);
  }
  Column* cls = nullptr;
  Column* step = nullptr;
  Column* expected_step = nullptr;
  if (all) {
    std::vector<std::string> classes;
    for (int c = 0; c < kNumClasses; ++c) classes.emplace_back(NameOf(static_cast<KernelClass>(c)));
    cls = &t.Add({"class", "", Scope::kKernel, ColumnKind::kCode}, classes);
    step = &t.Add({"step_time_s", "s", Scope::kStep, ColumnKind::kReal});
    if (expected != nullptr) {
      expected_step = &t.Add({"expected_step_time_s", "s", Scope::kStep, ColumnKind::kReal});
    }
  }
  for (const PhaseResult& p : a.phases) {
    for (size_t i = 0; i < p.costs.size(); ++i) {
      const KernelCost& c = p.costs[i];
      const double r = static_cast<double>(c.repeat);
      phase.ints.push_back(p.phase == Phase::kPrefill ? 0 : 1);
      group.texts.push_back(p.kernels[i].group);
      name.texts.push_back(c.name);
      repeat.ints.push_back(c.repeat);
      flops.reals.push_back(c.flops);
      for (size_t l = 0; l < bytes.size(); ++l) bytes[l]->reals.push_back(c.bytes[l]);
      intensity.reals.push_back(c.Intensity(0));
      comm.reals.push_back(c.comm_bytes);
      time.reals.push_back(c.time_s);
      bound_labels.Push(model.BoundName(c));
      share.reals.push_back(p.totals.time_s > 0 ? c.time_s * r / p.totals.time_s : 0);
      if (expected != nullptr) {
        expected->reals.push_back(c.has_expected ? c.expected.time_s : 0);
        expected_labels->Push(model.BoundName(c, c.expected.bound));
      }
      if (all) {
        cls->ints.push_back(static_cast<int64_t>(p.classes[i]));
        step->reals.push_back(c.time_s * r);
        if (expected_step != nullptr) {
          expected_step->reals.push_back(c.has_expected ? c.expected.time_s * r : 0);
        }
      }
    }
  }
  return t;
}

}  // namespace roofline
