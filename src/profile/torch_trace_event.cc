// Scalar values and the end of an event for the PyTorch trace SAX handler: which fields of
// which events are kept, the sanity checks on times, and the compact records.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>

#include "src/profile/torch_trace_sax.h"

namespace roofline {
namespace {

constexpr int64_t kMaxMicros = 9'000'000'000'000'000LL;  // int64 nanoseconds stay in range

/// Microseconds as written ("1695835573023613.123", "1.5e3") to integer nanoseconds, exactly
/// for plain decimals (a double would round a 16-digit timestamp); false when not a number in
/// range.
bool MicrosToNanos(std::string_view text, int64_t* ns) {
  if (text.find_first_of("eE") != std::string_view::npos) {
    const double us = std::strtod(std::string(text).c_str(), nullptr);
    if (!(std::fabs(us) <= static_cast<double>(kMaxMicros))) return false;  // NaN too
    *ns = std::llround(us * 1000);
    return true;
  }
  size_t i = 0;
  const bool neg = !text.empty() && text[0] == '-';
  if (neg) ++i;
  int64_t whole = 0, frac = 0;
  for (; i < text.size() && text[i] != '.'; ++i) {
    if (text[i] < '0' || text[i] > '9' || whole > kMaxMicros / 10) return false;
    whole = whole * 10 + (text[i] - '0');
  }
  if (i < text.size()) ++i;  // '.'
  int digits = 0;
  for (; i < text.size() && digits < 3; ++i, ++digits) frac = frac * 10 + (text[i] - '0');
  for (; digits < 3; ++digits) frac *= 10;
  const int64_t round_up = i < text.size() && text[i] >= '5' ? 1 : 0;
  *ns = (neg ? -1 : 1) * (whole * 1000 + frac + round_up);
  return true;
}

bool SetTime(const auto& v, int64_t* ns) {
  if (v.is_int) {
    if (v.i > kMaxMicros || v.i < -kMaxMicros) return false;
    *ns = v.i * 1000;
    return true;
  }
  return MicrosToNanos(v.text, ns);
}

uint64_t ThreadPart(const auto& v) {
  if (v.is_int) return static_cast<uint64_t>(v.i);
  return std::hash<std::string_view>{}(v.text);
}

TorchEventKind KindOf(std::string_view ph, std::string_view cat, bool* kineto, bool* legacy) {
  *kineto = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cpu_op" ||
            cat == "cuda_runtime" || cat == "cuda_driver" || cat == "ac2g";
  *legacy = cat == "Kernel" || cat == "Memcpy" || cat == "Memset" || cat == "Operator" ||
            cat == "Runtime";
  if ((cat == "ac2g" || cat == "async_gpu") && ph == "s") return TorchEventKind::kFlow;
  if (ph != "X") return TorchEventKind::kOther;
  if (cat == "kernel" || cat == "Kernel") return TorchEventKind::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return TorchEventKind::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return TorchEventKind::kMemset;
  if (cat == "cpu_op" || cat == "Operator") return TorchEventKind::kCpuOp;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") {
    return TorchEventKind::kRuntime;
  }
  return TorchEventKind::kOther;
}

/// Appends `v` to `key` as raw bytes.
template <typename T>
void Put(std::string* key, T v) {
  key->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void PutDims(std::string* key, const std::vector<int64_t>& dims) {
  Put(key, static_cast<uint32_t>(dims.size()));
  for (int64_t d : dims) Put(key, d);
}

void PutTexts(std::string* key, const std::vector<std::string>& texts) {
  Put(key, static_cast<uint32_t>(texts.size()));
  for (const std::string& t : texts) {
    Put(key, static_cast<uint32_t>(t.size()));
    key->append(t);
  }
}

}  // namespace

int32_t TorchTraceSax::InternShapes(TorchOpShapes* shapes) {
  key_buf_.clear();
  Put(&key_buf_, static_cast<uint32_t>(shapes->dims.size()));
  for (size_t i = 0; i < shapes->dims.size(); ++i) {
    PutDims(&key_buf_, shapes->dims[i]);
    Put(&key_buf_, static_cast<uint32_t>(shapes->lists[i].size()));
    for (const std::vector<int64_t>& m : shapes->lists[i]) PutDims(&key_buf_, m);
  }
  PutTexts(&key_buf_, shapes->types);
  PutTexts(&key_buf_, shapes->concrete);
  auto [it, added] = shape_ids_.try_emplace(key_buf_, static_cast<int32_t>(out_->shapes.size()));
  if (added) {
    // Lists hold members only for TensorList arguments; drop the empty placeholders.
    bool any_list = false;
    for (const auto& l : shapes->lists) any_list |= !l.empty();
    if (!any_list) shapes->lists.clear();
    out_->shapes.push_back(std::move(*shapes));
    *shapes = TorchOpShapes();
  }
  return it->second;
}

bool TorchTraceSax::OnValue(const Value& v) {
  if (frames_.empty()) return Fail("a single JSON value, not a trace object (no traceEvents)");
  Event& e = ev_;
  switch (frames_.back()) {
    case Frame::kTop:
      if (key_ == Key::kSchema && v.is_int) out_->schema_version = v.i;
      break;
    case Frame::kEvent:
      switch (key_) {
        case Key::kPh:
          e.ph.assign(v.text.substr(0, 8));
          break;
        case Key::kCat:
          e.cat.assign(v.text.substr(0, 64));
          break;
        case Key::kName:
          if (v.text.size() > kTorchMaxNameBytes) ++out_->names_cut;
          e.name.assign(v.text.substr(0, kTorchMaxNameBytes));
          break;
        case Key::kPid:
          e.pid = ThreadPart(v);
          break;
        case Key::kTid:
          e.tid = ThreadPart(v);
          break;
        case Key::kTs:
          if (v.is_num) e.has_ts = true, e.bad_time |= !SetTime(v, &e.ts_ns);
          break;
        case Key::kDur:
          if (v.is_num) e.has_dur = true, e.bad_time |= !SetTime(v, &e.dur_ns);
          break;
        case Key::kId:
          if (v.is_int) e.id = v.i;
          break;
        default:
          break;
      }
      break;
    case Frame::kArgs:
      if (v.is_int && key_ == Key::kExtId) e.ext = v.i;
      if (v.is_int && key_ == Key::kCorrelation) e.corr = v.i;
      if (v.is_int && key_ == Key::kDevice) e.device = v.i;
      break;
    case Frame::kDevice: {
      TorchRawDevice& d = out_->devices.back();
      if (key_ == Key::kDevName) d.name.assign(v.text.substr(0, 256));
      if (v.is_int && key_ == Key::kDevId) d.id = v.i;
      if (v.is_int && key_ == Key::kMajor) d.major = v.i;
      if (v.is_int && key_ == Key::kMinor) d.minor = v.i;
      if (v.is_int && key_ == Key::kSms) d.num_sms = v.i;
      if (v.is_num && key_ == Key::kMem) d.total_global_mem_bytes = v.d;
      break;
    }
    case Frame::kDims:  // a scalar where an input's dims belong: an input without a shape
      if (e.shapes.dims.size() < kTorchMaxInputs) {
        e.shapes.dims.emplace_back();
        e.shapes.lists.emplace_back();
      } else {
        e.shapes_overflow = true;
      }
      break;
    case Frame::kDimsInput:
    case Frame::kDimsMember: {
      std::vector<int64_t>& dims =
          frames_.back() == Frame::kDimsInput ? e.shapes.dims.back() : e.shapes.lists.back().back();
      if (v.is_int && v.i >= 0 && dims.size() < kTorchMaxRank) {
        dims.push_back(v.i);
      } else {
        e.shapes_overflow = true;
      }
      break;
    }
    case Frame::kTypes:
    case Frame::kConcrete: {
      auto& list = frames_.back() == Frame::kTypes ? e.shapes.types : e.shapes.concrete;
      if (list.size() >= kTorchMaxInputs) break;
      if (v.is_int) {
        list.push_back(std::to_string(v.i));
      } else {
        list.emplace_back(v.text.substr(0, kTorchMaxArgText));
      }
      break;
    }
    default:
      break;
  }
  return true;
}

bool TorchTraceSax::EndEvent() {
  ++out_->events;
  Event& e = ev_;
  bool kineto = false, legacy = false;
  const TorchEventKind kind = KindOf(e.ph, e.cat, &kineto, &legacy);
  out_->kineto_events += kineto;
  out_->legacy_events += legacy;
  if (kind == TorchEventKind::kOther) {
    if (e.has_ts && !e.bad_time && e.ph != "M")
      out_->min_ts_ns = std::min(out_->min_ts_ns, e.ts_ns);
    std::string cat = e.cat.empty() ? "(ph " + e.ph + ")" : e.cat;
    auto it = out_->skipped_categories.find(cat);
    if (it != out_->skipped_categories.end()) {
      ++it->second;
    } else if (out_->skipped_categories.size() < kTorchMaxCategories) {
      out_->skipped_categories.emplace(std::move(cat), 1);
    }
    return true;
  }
  const std::string what = "event \"" + e.name.substr(0, 80) + "\" (" + e.cat + ")";
  if (e.bad_time) return Fail(what + ": ts or dur is not a finite microsecond value, " + Where());
  if (e.has_dur && e.dur_ns < 0) {
    return Fail(what + ": negative dur " + std::to_string(e.dur_ns / 1000.0) + " us, " + Where());
  }
  if (e.has_dur && e.dur_ns > kTorchMaxDurationUs * 1000) {
    return Fail(what + ": dur " + std::to_string(e.dur_ns / 1000.0) +
                " us is longer than 1e9 us (absurd), " + Where());
  }
  if (!e.has_ts || (!e.has_dur && kind != TorchEventKind::kFlow)) {
    ++out_->missing_times;
    return true;
  }
  out_->min_ts_ns = std::min(out_->min_ts_ns, e.ts_ns);
  const uint64_t thread = e.pid * 0x9E3779B97F4A7C15ULL + e.tid;
  switch (kind) {
    case TorchEventKind::kCpuOp: {
      TorchRawOp op;
      op.name = Intern(e.name);
      op.ext = e.ext;
      op.ts_ns = e.ts_ns;
      op.dur_ns = e.dur_ns;
      op.thread = thread;
      if (e.has_shapes && e.shapes_overflow) ++out_->shapes_dropped;
      if (e.has_shapes && !e.shapes_overflow) op.shapes = InternShapes(&e.shapes);
      out_->ops.push_back(op);
      break;
    }
    case TorchEventKind::kRuntime:
    case TorchEventKind::kFlow: {
      const int64_t corr = kind == TorchEventKind::kFlow ? e.id : e.corr;
      if (corr < 0) break;
      TorchRawLaunch l{corr, e.ext, e.ts_ns, kind == TorchEventKind::kFlow ? 0 : e.dur_ns, thread};
      (kind == TorchEventKind::kFlow ? out_->flows : out_->runtime).push_back(l);
      break;
    }
    default: {
      TorchRawKernel k;
      k.name = Intern(e.name);
      k.kind = kind;
      k.device = static_cast<int>(e.device);
      k.ext = e.ext;
      k.corr = e.corr;
      k.ts_ns = e.ts_ns;
      k.dur_ns = e.dur_ns;
      out_->kernels.push_back(k);
      break;
    }
  }
  return true;
}

}  // namespace roofline
