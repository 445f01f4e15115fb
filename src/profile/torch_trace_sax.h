// The streaming half of the PyTorch trace reader: a SAX handler for nlohmann::json that keeps a
// compact record of each event the join needs (cpu ops, runtime calls, flow starts, GPU
// kernels / memcpys / memsets) and the top-level deviceProperties / schemaVersion, and nothing
// else. Memory grows with the number of those events, never with the size of the file.
#ifndef ROOFLINE_SRC_PROFILE_TORCH_TRACE_SAX_H_
#define ROOFLINE_SRC_PROFILE_TORCH_TRACE_SAX_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "roofline/profile.h"
#include "src/profile/torch_gzip_stream.h"
#include "src/profile/torch_op_cost.h"

namespace roofline {

inline constexpr size_t kTorchMaxNameBytes = 4096;  ///< longer kernel / op names are cut
inline constexpr double kTorchMaxDurationUs = 1e9;  ///< a longer event is rejected as absurd
inline constexpr size_t kTorchMaxInputs = 256;      ///< arguments of one op kept with shapes
inline constexpr size_t kTorchMaxRank = 16;         ///< dims of one tensor
inline constexpr size_t kTorchMaxListItems = 256;   ///< tensors of one TensorList argument
inline constexpr size_t kTorchMaxArgText = 128;     ///< bytes of a type / concrete-input entry
inline constexpr size_t kTorchMaxDevices = 64;      ///< deviceProperties entries kept
inline constexpr size_t kTorchMaxCategories = 64;   ///< distinct skipped categories counted

enum class TorchEventKind : uint8_t { kOther, kKernel, kMemcpy, kMemset, kCpuOp, kRuntime, kFlow };

/// A cpu op (kineto `cpu_op`, legacy `Operator`); times in integer nanoseconds.
struct TorchRawOp {
  uint32_t name = 0;    ///< index into TorchRawTrace::names
  int32_t shapes = -1;  ///< index into TorchRawTrace::shapes, -1: none recorded
  int64_t ext = -1, ts_ns = 0, dur_ns = 0;
  uint64_t thread = 0;  ///< (pid, tid) hashed
};

/// A GPU kernel, memcpy or memset.
struct TorchRawKernel {
  uint32_t name = 0;
  TorchEventKind kind = TorchEventKind::kKernel;
  int device = -1;
  int64_t ext = -1, corr = -1, ts_ns = 0, dur_ns = 0;
};

/// A host-side launch point: a runtime call (cudaLaunchKernel...) or an ac2g flow start.
struct TorchRawLaunch {
  int64_t corr = -1, ext = -1, ts_ns = 0, dur_ns = 0;
  uint64_t thread = 0;
};

/// One entry of deviceProperties[].
struct TorchRawDevice {
  int64_t id = -1, major = -1, minor = -1, num_sms = 0;
  double total_global_mem_bytes = 0;
  std::string name;
};

/// Everything the SAX pass keeps.
struct TorchRawTrace {
  std::vector<std::string> names;  ///< interned op and kernel names
  std::vector<TorchRawOp> ops;
  std::vector<TorchRawKernel> kernels;
  std::vector<TorchRawLaunch> runtime, flows;
  std::vector<TorchOpShapes> shapes;  ///< distinct shape records
  std::vector<TorchRawDevice> devices;
  int64_t schema_version = -1;
  bool has_trace_events = false;
  int64_t events = 0;
  int64_t min_ts_ns = INT64_MAX;
  int64_t kineto_events = 0, legacy_events = 0;
  int64_t shapes_dropped = 0;                         ///< ops whose shapes exceeded the caps
  int64_t names_cut = 0;                              ///< names longer than kTorchMaxNameBytes
  int64_t missing_times = 0;                          ///< used events without ts or dur (skipped)
  std::map<std::string, int64_t> skipped_categories;  ///< up to 64 distinct names
};

/// The SAX handler. Any callback returning false stops the parse; `error()` then says why.
class TorchTraceSax {
 public:
  /// `buf` supplies byte positions for messages.
  TorchTraceSax(TorchRawTrace* out, const GzipFileBuf* buf) : out_(out), buf_(buf) {}

  bool null();
  bool boolean(bool v);
  bool number_integer(int64_t v);
  bool number_unsigned(uint64_t v);
  bool number_float(double v, const std::string& text);
  bool string(std::string& v);
  bool binary(std::vector<uint8_t>&) { return true; }
  bool start_object(std::size_t);
  bool key(std::string& k);
  bool end_object();
  bool start_array(std::size_t);
  bool end_array();
  template <typename Exception>
  bool parse_error(std::size_t position, const std::string&, const Exception& ex) {
    return ParseError(position, ex.what());
  }

  /// Why parsing stopped ("" when it did not stop early).
  const std::string& error() const { return error_; }
  /// True when it stopped because the JSON text ended early.
  bool truncated() const { return truncated_; }

 private:
  enum class Frame : uint8_t {
    kTop,
    kEvents,
    kEvent,
    kArgs,
    kDevices,
    kDevice,
    kDims,
    kDimsInput,
    kDimsMember,
    kTypes,
    kConcrete,
    kSkip
  };
  enum class Key : uint8_t {
    kNone,
    kTraceEvents,
    kDeviceProps,
    kSchema,
    kPh,
    kCat,
    kName,
    kPid,
    kTid,
    kTs,
    kDur,
    kId,
    kArgs,
    kExtId,
    kCorrelation,
    kDevice,
    kDims,
    kTypes,
    kConcrete,
    kDevId,
    kDevName,
    kMajor,
    kMinor,
    kSms,
    kMem
  };
  /// A scalar value as the callbacks see it.
  struct Value {
    bool is_int = false, is_num = false, is_str = false;
    int64_t i = 0;
    double d = 0;
    std::string_view text;  ///< the string, or the number as written
  };
  /// The event being read.
  struct Event {
    std::string ph, cat, name;
    uint64_t pid = 0, tid = 0;
    bool has_ts = false, has_dur = false, bad_time = false, shapes_overflow = false;
    int64_t ts_ns = 0, dur_ns = 0, id = -1, ext = -1, corr = -1, device = -1;
    bool has_shapes = false;
    TorchOpShapes shapes;
  };

  bool OnValue(const Value& v);
  bool OnContainer(bool is_object);
  bool EndEvent();
  bool Fail(std::string what);
  bool ParseError(std::size_t position, std::string_view what);
  uint32_t Intern(const std::string& name);
  /// The index of an identical shape record in TorchRawTrace::shapes (added when new): traces
  /// repeat the same shapes every iteration, so memory follows the distinct ones.
  int32_t InternShapes(TorchOpShapes* shapes);
  std::string Where() const;

  TorchRawTrace* out_;
  const GzipFileBuf* buf_;
  std::vector<Frame> frames_;
  Key key_ = Key::kNone;
  Event ev_;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::unordered_map<std::string, int32_t> shape_ids_;
  std::string key_buf_;
  std::string error_;
  bool truncated_ = false;
};

/// Joins GPU events to the ops that launched them, costs the ops and converts times to seconds
/// (torch_trace_join.cc states the join rule).
TorchTrace BuildTorchTrace(TorchRawTrace raw);

}  // namespace roofline

#endif  // ROOFLINE_SRC_PROFILE_TORCH_TRACE_SAX_H_
