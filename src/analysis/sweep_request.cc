// `--vary` as the sweep takes it: devices apart from the workload axes, the axes checked against
// the scenario, and the title of a sweep.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/sweep.h"

namespace roofline {

FieldId FieldOf(SweepVariable v) {
  switch (v) {
    case SweepVariable::kBatch:
      return FieldId::kBatch;
    case SweepVariable::kPrompt:
      return FieldId::kPrompt;
    case SweepVariable::kContext:
      return FieldId::kContext;
    case SweepVariable::kTp:
      return FieldId::kTp;
    case SweepVariable::kDtype:
      return FieldId::kDtype;
    case SweepVariable::kWeightDtype:
      return FieldId::kWeightDtype;
    case SweepVariable::kKvDtype:
      return FieldId::kKvDtype;
  }
  return FieldId::kBatch;
}

Result<SweepRequest> ParseSweepRequest(const std::vector<std::string>& vary) {
  SweepRequest r;
  bool hw = false;
  for (const std::string& v : vary) {
    if (v.rfind("hw=", 0) != 0) {
      r.specs.push_back(v);
      continue;
    }
    if (hw) return Status::Invalid("--vary hw", "given twice");
    hw = true;
    const std::string list = v.substr(3);
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string id = list.substr(start, comma - start);
      if (id.empty()) return Status::Invalid("--vary " + v, "expected hw=ID,ID,... (no empty ids)");
      if (std::find(r.devices.begin(), r.devices.end(), id) != r.devices.end()) {
        return Status::Invalid("--vary " + v, "lists " + id + " twice");
      }
      r.devices.push_back(id);
      start = comma + 1;
    }
  }
  return r;
}

Result<std::vector<SweepAxis>> ParseSweepAxes(const Scenario& s,
                                              const std::vector<std::string>& specs) {
  std::vector<SweepAxis> axes;
  for (const std::string& spec : specs) {
    Result<SweepAxis> a = ParseSweepAxis(spec);
    if (!a.ok()) return a.status();
    axes.push_back(std::move(a).value());
  }
  if (axes.size() > 2) return Status::Invalid("--vary", "at most two variables");
  for (const SweepAxis& a : axes) {
    const FieldId id = FieldOf(a.variable);
    if (s.Given(id)) {
      return Status::Invalid(std::string(FieldOf(id).flag),
                             "the sweep varies " + std::string(NameOf(a.variable)) +
                                 " (--vary): give it there or here, not both");
    }
  }
  // No point may have a context shorter than its prompt (a decode step attends to at least the
  // prompt's keys): the shortest context against the longest prompt, swept or fixed.
  const Workload& w = s.workload;
  int64_t shortest_context = w.context > 0 ? w.context : 0;
  int64_t longest_prompt = w.prompt;
  const SweepAxis* context_axis = nullptr;
  const SweepAxis* prompt_axis = nullptr;
  for (const SweepAxis& a : axes) {
    if (a.variable == SweepVariable::kContext) {
      shortest_context = a.values.front();
      context_axis = &a;
    }
    if (a.variable == SweepVariable::kPrompt) {
      longest_prompt = a.values.back();
      prompt_axis = &a;
    }
  }
  if (shortest_context > 0 && shortest_context < longest_prompt) {
    if (context_axis != nullptr) {
      return Status::Invalid(
          "--vary context",
          fmt::format("a context of {} keys is shorter than the prompt ({} tokens, {}): a decode "
                      "step attends to at least the prompt; start the context at {} or give a "
                      "shorter --prompt",
                      shortest_context, longest_prompt,
                      prompt_axis != nullptr          ? "swept"
                      : s.Given(FieldId::kPrompt)     ? "--prompt"
                                                      : "the default",
                      longest_prompt));
    }
    return Status::Invalid(
        "--vary prompt", fmt::format("a prompt of {} tokens is longer than --context {}: a decode "
                                     "step attends to at least the prompt; end the prompt at {} "
                                     "or give a longer --context",
                                     longest_prompt, shortest_context, shortest_context));
  }
  return axes;
}

std::string SweepTitle(const std::string& prefix, const std::vector<SweepAxis>& axes,
                       const Setup& setup) {
  std::string title = prefix;
  std::vector<FieldId> swept;
  for (const SweepAxis& a : axes) {
    title += " " + std::string(NameOf(a.variable));
    swept.push_back(FieldOf(a.variable));
  }
  return title + " (" + DescribeWorkload(setup.workload, setup.config, swept) + ")";
}

}  // namespace roofline
