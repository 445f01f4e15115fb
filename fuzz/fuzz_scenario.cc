// The Scenario's field table (the command line's options, a published run's keys, Python's
// keywords): each line of the input is a field (its first byte picks one) and the text SetField
// reads; then the rules between fields, the derived defaults, every field written back as text
// and read again, and `--vary` specs parsed against the scenario; lines "L..." are plan's request
// lengths (ParseLengths: in range, and what it writes reads back); lines "Okind name=value" are
// `roofline op`'s fields, read by the op field table and costed when accepted. Nothing may
// crash, hang or leak, and what FieldText writes must read back.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "roofline/device_db.h"
#include "roofline/op_fields.h"
#include "roofline/scenario.h"
#include "roofline/serving.h"
#include "roofline/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roofline;
  const std::string_view text = fuzz::AsText(data, size);
  Scenario s;
  std::vector<std::string> vary;
  std::string op_kind;  // the op field table: the last kind named, every field given
  std::map<std::string, std::string, std::less<>> op_given;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    if (line[0] == 'L') {  // plan's request lengths: "L2048", "Llognormal:2048,0.6"
      const Result<Lengths> l = ParseLengths(std::string(line.substr(1)), "--prompt");
      if (l.ok()) {
        // Within range, and what ToString writes reads back as itself.
        bool bad = !(l->mean >= 1) || !(l->mean_sq >= l->mean * l->mean * (1 - 1e-12)) ||
                   !std::isfinite(l->mean_sq) || !(l->Cv2() >= 0);
        for (int p : {50, 90, 95, 99}) {
          bad = bad || l->AtPercentile(p) < 1 || l->AtPercentile(p) > (int64_t{1} << 24);
        }
        const Result<Lengths> again = ParseLengths(l->ToString(), "--prompt");
        bad = bad || !again.ok() || again->ToString() != l->ToString();
        if (bad) {
          std::fprintf(stderr, "lengths '%s' read as '%s'\n", std::string(line.substr(1)).c_str(),
                       l->ToString().c_str());
          std::abort();
        }
      }
      continue;
    }
    if (line[0] == 'V') {  // a --vary spec
      vary.emplace_back(line.substr(1));
      continue;
    }
    if (line[0] == 'O') {  // an op field, "Okind name=value" ("Omatmul m=2k")
      const size_t space = line.find(' '), eq = line.find('=');
      if (space == std::string_view::npos || eq == std::string_view::npos || eq < space) continue;
      op_kind = line.substr(1, space - 1);
      op_given[std::string(line.substr(space + 1, eq - space - 1))] = line.substr(eq + 1);
      continue;
    }
    const auto id = static_cast<FieldId>(static_cast<unsigned char>(line[0]) % kNumFields);
    (void)SetField(s, id, line.substr(1));
  }
  ApplyDerivedDefaults(s);
  (void)Validate(s, false);
  (void)Validate(s, true);
  (void)InFile(Validate(s, false), "fuzz.json: runs[0]");
  for (const Field& f : ScenarioFields()) {
    const std::string t = FieldText(s, f.id);
    if (t.empty() || f.type == FieldType::kPairs) continue;
    Scenario again;
    // Everything FieldText writes, SetField reads (the round trip of the field table).
    if (const Status st = SetField(again, f.id, t); !st.ok()) {
      std::fprintf(stderr, "field %s wrote '%s' and read it back as: %s\n",
                   std::string(f.name).c_str(), t.c_str(), st.ToString().c_str());
      std::abort();
    }
  }
  if (!vary.empty()) (void)ParseSweepAxes(s, vary);
  // An op request the table accepts is a valid spec that costs without error.
  if (const OpKindInfo* kind = FindOpKind(op_kind)) {
    Result<OpRequest> r = BuildOpRequest(*kind, op_given, FieldText(s, FieldId::kDtype));
    if (r.ok()) {
      if (!Validate(r->spec).ok()) std::abort();
      static const Device* device = [] {
        static Result<DeviceDatabase> db = DeviceDatabase::LoadDefault();
        if (!db.ok()) std::abort();
        return *db->Find(kDefaultDeviceId);
      }();
      (void)AnalyzeOp(*r, CostModel(*device));
    }
  }
  return 0;
}
