#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

ScenarioOptions::ScenarioOptions(CLI::App& app, FieldSet fields, const Scenario& defaults)
    : app_(&app), fields_(fields) {
  for (const Field& f : ScenarioFields()) {
    const size_t i = static_cast<size_t>(f.id);
    if (!fields[i]) continue;
    std::string help(f.help);
    // The default as this command has it (the main job's model, say), else the table's.
    std::string fallback = FieldText(defaults, f.id);
    if (f.type == FieldType::kFlag || f.type == FieldType::kPairs ||
        (f.fallback.empty() && !defaults.Given(f.id))) {
      fallback.clear();
    }
    if (!fallback.empty()) help += " (default: " + fallback + ")";
    if (f.type == FieldType::kFlag) {
      app.add_flag(std::string(f.flag), flag_[i], help);
    } else if (f.type == FieldType::kPairs) {
      app.add_option(std::string(f.flag), list_[i], help)->type_name(std::string(f.metavar));
    } else {
      std::string type(f.metavar);
      if (f.type == FieldType::kChoice) {
        type.clear();
        for (std::string_view c : f.choices) type += (type.empty() ? "" : "|") + std::string(c);
      }
      app.add_option(std::string(f.flag), text_[i], help)->type_name(type);
    }
  }
}

Status ScenarioOptions::Read(Scenario& s) const {
  for (const Field& f : ScenarioFields()) {
    const size_t i = static_cast<size_t>(f.id);
    if (!fields_[i] || app_->count(std::string(f.flag)) == 0) continue;
    Status st;
    if (f.type == FieldType::kFlag) {
      st = SetField(s, f.id, flag_[i] ? "true" : "false");
    } else if (f.type == FieldType::kPairs) {
      for (const std::string& v : list_[i]) {
        st = SetField(s, f.id, v);
        if (!st.ok()) break;
      }
    } else {
      st = SetField(s, f.id, text_[i]);
    }
    if (!st.ok()) return st;
  }
  ApplyDerivedDefaults(s);
  return Status::Ok();
}

}  // namespace roofline::cli
