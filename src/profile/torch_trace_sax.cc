// SAX handler of the PyTorch trace reader: a stack of container frames says where a value sits
// (top level, an event, its args, its Input Dims...); an event's fields are gathered until its
// closing brace, then the event is kept as a compact record or dropped.
#include "src/profile/torch_trace_sax.h"

#include <algorithm>

namespace roofline {

std::string TorchTraceSax::Where() const {
  std::string w = "near byte " + std::to_string(buf_ ? buf_->consumed() : 0);
  if (buf_ && buf_->compressed()) w += " of the decompressed JSON";
  w += ", event #" + std::to_string(out_->events);
  return w;
}

bool TorchTraceSax::Fail(std::string what) {
  error_ = std::move(what);
  return false;
}

bool TorchTraceSax::ParseError(std::size_t position, std::string_view what) {
  truncated_ =
      what.find("unexpected end of input") != std::string_view::npos ||
      (buf_ && buf_->at_clean_end() && static_cast<int64_t>(position) + 1 >= buf_->consumed());
  std::string msg(what.substr(0, 240));
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (truncated_) {
    const int64_t end = buf_ ? std::min<int64_t>(buf_->consumed(), position) : position;
    return Fail("truncated JSON: the text ends at byte " + std::to_string(end) + " inside " +
                (out_->has_trace_events ? "traceEvents" : "the top-level object") + " (after " +
                std::to_string(out_->events) + " events)");
  }
  return Fail("invalid JSON at byte " + std::to_string(position) + ": " + msg);
}

uint32_t TorchTraceSax::Intern(const std::string& name) {
  auto [it, added] = name_ids_.try_emplace(name, static_cast<uint32_t>(out_->names.size()));
  if (added) out_->names.push_back(name);
  return it->second;
}

bool TorchTraceSax::start_object(std::size_t) { return OnContainer(true); }
bool TorchTraceSax::start_array(std::size_t) { return OnContainer(false); }

bool TorchTraceSax::OnContainer(bool is_object) {
  if (frames_.empty()) {
    if (!is_object) return Fail("a JSON array, not a trace object (no traceEvents)");
    frames_.push_back(Frame::kTop);
    return true;
  }
  Frame next = Frame::kSkip;
  switch (frames_.back()) {
    case Frame::kTop:
      if (!is_object && key_ == Key::kTraceEvents) {
        next = Frame::kEvents;
        out_->has_trace_events = true;
      } else if (!is_object && key_ == Key::kDeviceProps) {
        next = Frame::kDevices;
      }
      break;
    case Frame::kEvents:
      if (is_object) {
        next = Frame::kEvent;
        ev_ = Event();
      }
      break;
    case Frame::kEvent:
      if (is_object && key_ == Key::kArgs) next = Frame::kArgs;
      break;
    case Frame::kArgs:
      if (!is_object && key_ == Key::kDims) {
        next = Frame::kDims;
        ev_.has_shapes = true;
        ev_.shapes.dims.clear();
        ev_.shapes.lists.clear();
      } else if (!is_object && key_ == Key::kTypes) {
        next = Frame::kTypes;
      } else if (!is_object && key_ == Key::kConcrete) {
        next = Frame::kConcrete;
      }
      break;
    case Frame::kDevices:
      if (is_object && out_->devices.size() < kTorchMaxDevices) {
        next = Frame::kDevice;
        out_->devices.emplace_back();
      }
      break;
    case Frame::kDims:
      if (!is_object && ev_.shapes.dims.size() < kTorchMaxInputs) {
        next = Frame::kDimsInput;
        ev_.shapes.dims.emplace_back();
        ev_.shapes.lists.emplace_back();
      } else {
        ev_.shapes_overflow = true;
      }
      break;
    case Frame::kDimsInput:
      if (!is_object && ev_.shapes.lists.back().size() < kTorchMaxListItems) {
        next = Frame::kDimsMember;
        ev_.shapes.lists.back().emplace_back();
      } else {
        ev_.shapes_overflow = true;
      }
      break;
    case Frame::kTypes:
    case Frame::kConcrete: {  // a nested value: keep the position with an empty entry
      auto& list = frames_.back() == Frame::kTypes ? ev_.shapes.types : ev_.shapes.concrete;
      if (list.size() < kTorchMaxInputs) list.emplace_back();
      break;
    }
    default:
      break;
  }
  frames_.push_back(next);
  key_ = Key::kNone;
  return true;
}

bool TorchTraceSax::key(std::string& k) {
  key_ = Key::kNone;
  if (frames_.empty()) return true;
  switch (frames_.back()) {
    case Frame::kTop:
      if (k == "traceEvents") key_ = Key::kTraceEvents;
      if (k == "deviceProperties") key_ = Key::kDeviceProps;
      if (k == "schemaVersion") key_ = Key::kSchema;
      break;
    case Frame::kEvent:
      if (k == "ph") key_ = Key::kPh;
      if (k == "cat") key_ = Key::kCat;
      if (k == "name") key_ = Key::kName;
      if (k == "pid") key_ = Key::kPid;
      if (k == "tid") key_ = Key::kTid;
      if (k == "ts") key_ = Key::kTs;
      if (k == "dur") key_ = Key::kDur;
      if (k == "id") key_ = Key::kId;
      if (k == "args") key_ = Key::kArgs;
      break;
    case Frame::kArgs:
      if (k == "External id" || k == "external id") key_ = Key::kExtId;
      if (k == "correlation") key_ = Key::kCorrelation;
      if (k == "device") key_ = Key::kDevice;
      if (k == "Input Dims" || k == "Input dims") key_ = Key::kDims;
      if (k == "Input type") key_ = Key::kTypes;
      if (k == "Concrete Inputs") key_ = Key::kConcrete;
      break;
    case Frame::kDevice:
      if (k == "id") key_ = Key::kDevId;
      if (k == "name") key_ = Key::kDevName;
      if (k == "computeMajor") key_ = Key::kMajor;
      if (k == "computeMinor") key_ = Key::kMinor;
      if (k == "numSms") key_ = Key::kSms;
      if (k == "totalGlobalMem") key_ = Key::kMem;
      break;
    default:
      break;
  }
  return true;
}

bool TorchTraceSax::end_object() {
  const Frame f = frames_.back();
  frames_.pop_back();
  key_ = Key::kNone;
  if (f == Frame::kEvent) return EndEvent();
  return true;
}

bool TorchTraceSax::end_array() {
  const Frame f = frames_.back();
  frames_.pop_back();
  key_ = Key::kNone;
  if (f == Frame::kDimsInput && ev_.shapes.lists.back().empty() == false &&
      !ev_.shapes.dims.back().empty()) {
    ev_.shapes_overflow = true;  // numbers and lists mixed in one input: not a shape
  }
  return true;
}

bool TorchTraceSax::null() { return OnValue(Value{}); }
bool TorchTraceSax::boolean(bool v) {
  Value x;
  x.text = v ? "True" : "False";
  return OnValue(x);
}
bool TorchTraceSax::number_integer(int64_t v) {
  Value x;
  x.is_int = x.is_num = true;
  x.i = v;
  x.d = static_cast<double>(v);
  return OnValue(x);
}
bool TorchTraceSax::number_unsigned(uint64_t v) {
  Value x;
  x.is_num = true;
  x.is_int = v <= static_cast<uint64_t>(INT64_MAX);
  x.i = x.is_int ? static_cast<int64_t>(v) : INT64_MAX;
  x.d = static_cast<double>(v);
  return OnValue(x);
}
bool TorchTraceSax::number_float(double v, const std::string& text) {
  Value x;
  x.is_num = true;
  x.d = v;
  x.text = text;
  return OnValue(x);
}
bool TorchTraceSax::string(std::string& v) {
  Value x;
  x.is_str = true;
  x.text = v;
  return OnValue(x);
}

}  // namespace roofline
