#include "roofline/status.h"

namespace roofline {

std::string Status::ToString() const {
  if (ok()) return "ok";
  if (where_.empty()) return what_;
  return where_ + ": " + what_;
}

Status Status::WithPrefix(const std::string& prefix) const {
  if (ok()) return *this;
  Status s = *this;
  s.where_ = where_.empty() ? prefix : prefix + ": " + where_;
  return s;
}

Status Status::At(std::string where) const {
  if (ok()) return *this;
  Status s = *this;
  s.where_ = std::move(where);
  return s;
}

}  // namespace roofline
