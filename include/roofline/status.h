// Status and Result<T>: the error model at the library boundary.
#ifndef ROOFLINE_STATUS_H_
#define ROOFLINE_STATUS_H_

#include <string>
#include <utility>
#include <variant>

namespace roofline {

/// What kind of failure a Status reports.
enum class StatusCode {
  kOk,
  kInvalidArgument,  ///< a value is out of range, malformed or inconsistent
  kNotFound,         ///< an id or file that does not exist
  kParseError,       ///< a file is not valid JSON / not the expected format
  kIoError,          ///< a file could not be read or written
  kUnsupported,      ///< a valid request the tool does not model
};

/// Success, or a failure with a location ("file.json: memory[0].bandwidth") and a message
/// that says what is wrong and what was expected. The CLI prints `error: <where>: <what>`.
class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Invalid(std::string where, std::string what) {
    return Status(StatusCode::kInvalidArgument, std::move(where), std::move(what));
  }
  static Status NotFound(std::string where, std::string what) {
    return Status(StatusCode::kNotFound, std::move(where), std::move(what));
  }
  static Status Parse(std::string where, std::string what) {
    return Status(StatusCode::kParseError, std::move(where), std::move(what));
  }
  static Status Io(std::string where, std::string what) {
    return Status(StatusCode::kIoError, std::move(where), std::move(what));
  }
  static Status Unsupported(std::string where, std::string what) {
    return Status(StatusCode::kUnsupported, std::move(where), std::move(what));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  /// Where the problem is: a file, a file and a field, or a command-line option.
  const std::string& where() const { return where_; }
  /// What is wrong and what was expected.
  const std::string& what() const { return what_; }
  /// "<where>: <what>" on one line (or "ok").
  std::string ToString() const;
  /// Returns a copy whose location is "<prefix>: <where>" (or prefix alone if where is empty).
  Status WithPrefix(const std::string& prefix) const;
  /// Returns a copy located at `where` instead (same code and message).
  Status At(std::string where) const;

 private:
  Status(StatusCode code, std::string where, std::string what)
      : code_(code), where_(std::move(where)), what_(std::move(what)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string where_;
  std::string what_;
};

/// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}         // NOLINT(runtime/explicit)
  Result(Status status) : data_(std::move(status)) {}  // NOLINT(runtime/explicit)

  bool ok() const { return std::holds_alternative<T>(data_); }
  /// The failure; Status::Ok() when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace roofline

#endif  // ROOFLINE_STATUS_H_
