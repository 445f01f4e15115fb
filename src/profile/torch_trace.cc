// LoadTorchTrace: PyTorch profiler Chrome traces (kineto and the PyTorch 1.8 / 1.9 legacy
// categories), plain or gzip, streamed through a SAX handler with bounded memory.
#include <cstdio>
#include <istream>
#include <new>
#include <nlohmann/json.hpp>

#include "roofline/profile.h"
#include "src/profile/torch_gzip_stream.h"
#include "src/profile/torch_trace_sax.h"

namespace roofline {
namespace {

std::string Hex(std::string_view bytes) {
  std::string s;
  char b[8];
  for (unsigned char c : bytes.substr(0, 4)) {
    std::snprintf(b, sizeof b, "%s0x%02x", s.empty() ? "" : " ", c);
    s += b;
  }
  return s;
}

/// Checks the first non-blank byte: a trace is a JSON object.
Status CheckStart(GzipFileBuf* buf, const std::string& path) {
  if (buf->sgetc() == std::char_traits<char>::eof()) {
    if (!buf->error().empty()) return Status::Parse(path, buf->error());
    return Status::Parse(path, buf->compressed() ? "empty gzip content" : "empty file");
  }
  const std::string_view w = buf->Window();
  const size_t first = w.find_first_not_of(" \t\r\n\xef\xbb\xbf");
  if (first == std::string_view::npos || w[first] == '{') return Status::Ok();
  if (w[first] == '[') {
    return Status::Parse(path, "a JSON array, not a PyTorch profiler trace (no traceEvents)");
  }
  if (buf->compressed()) {
    return Status::Parse(path, "the gzip content is not JSON (starts with " + Hex(w) + ")");
  }
  return Status::Parse(path, "neither gzip nor JSON (starts with " + Hex(w) + ")");
}

}  // namespace

Result<TorchTrace> LoadTorchTrace(const std::string& path) {
  GzipFileBuf buf;
  if (!buf.Open(path)) return Status::Io(path, "cannot read: " + buf.error());
  if (Status s = CheckStart(&buf, path); !s.ok()) return s;
  TorchRawTrace raw;
  TorchTraceSax sax(&raw, &buf);
  try {
    std::istream in(&buf);
    const bool ok = nlohmann::json::sax_parse(in, &sax, nlohmann::json::input_format_t::json,
                                              /*strict=*/false);
    if (!buf.error().empty()) return Status::Parse(path, buf.error());
    if (!ok) return Status::Parse(path, sax.error());
  } catch (const std::bad_alloc&) {
    return Status::Parse(path, "out of memory while reading the trace");
  } catch (const std::exception& e) {
    return Status::Parse(path, std::string("unreadable trace: ") + e.what());
  }
  if (!raw.has_trace_events) {
    return Status::Parse(path, "JSON without a traceEvents array: not a PyTorch profiler trace");
  }
  return BuildTorchTrace(std::move(raw));
}

}  // namespace roofline
