// Plain-or-gzip file stream: 256 KiB of compressed input and 256 KiB of output at a time.
#include "src/profile/torch_gzip_stream.h"

#include <cerrno>
#include <cstring>

namespace roofline {
namespace {

constexpr size_t kChunkBytes = 256 * 1024;

bool IsGzipMagic(const unsigned char* p, size_t n) {
  return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/// A zlib header: CMF 0x78 (deflate, 32 KiB window) with a valid check value.
bool IsZlibMagic(const unsigned char* p, size_t n) {
  return n >= 2 && p[0] == 0x78 && ((p[0] << 8) | p[1]) % 31 == 0;
}

}  // namespace

GzipFileBuf::~GzipFileBuf() {
  if (zinit_) inflateEnd(&z_);
  if (file_) std::fclose(file_);
}

bool GzipFileBuf::Open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) {
    error_ = std::strerror(errno);
    return false;
  }
  in_.resize(kChunkBytes);
  out_.resize(kChunkBytes);
  if (!ReadInput()) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(z_.next_in);
  compressed_ = IsGzipMagic(p, z_.avail_in) || IsZlibMagic(p, z_.avail_in);
  if (compressed_) {
    if (inflateInit2(&z_, 15 + 32) != Z_OK) {  // 15 + 32: zlib or gzip header, detected
      error_ = "zlib initialisation failed";
      return false;
    }
    zinit_ = true;
  }
  setg(out_.data(), out_.data(), out_.data());
  return true;
}

bool GzipFileBuf::ReadInput() {
  const size_t n = std::fread(in_.data(), 1, in_.size(), file_);
  if (n == 0 && std::ferror(file_)) {
    error_ = std::string("read error: ") + std::strerror(errno);
    return false;
  }
  file_bytes_ += static_cast<int64_t>(n);
  z_.next_in = reinterpret_cast<Bytef*>(in_.data());
  z_.avail_in = static_cast<uInt>(n);
  return true;
}

size_t GzipFileBuf::Fill() {
  if (!compressed_) {
    if (z_.avail_in == 0 && (!ReadInput() || z_.avail_in == 0)) return 0;
    const size_t n = z_.avail_in;
    std::memcpy(out_.data(), z_.next_in, n);
    z_.avail_in = 0;
    return n;
  }
  z_.next_out = reinterpret_cast<Bytef*>(out_.data());
  z_.avail_out = static_cast<uInt>(out_.size());
  while (z_.avail_out == out_.size()) {  // until some output
    if (z_.avail_in == 0) {
      if (!ReadInput()) return 0;
      if (z_.avail_in == 0) {  // end of file
        if (!stream_ended_) {
          error_ = "truncated gzip: the compressed data ends (at file byte " +
                   std::to_string(file_bytes_) + ") before the end of its stream";
        }
        return 0;
      }
    }
    if (stream_ended_) {  // another gzip member follows, or trailing bytes (ignored)
      const auto* p = reinterpret_cast<const unsigned char*>(z_.next_in);
      if (!IsGzipMagic(p, z_.avail_in)) return 0;
      inflateReset(&z_);
      stream_ended_ = false;
    }
    const int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      stream_ended_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error_ = std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : "inflate failed") +
               " (near file byte " + std::to_string(file_bytes_ - z_.avail_in) + ")";
      return 0;
    }
  }
  return out_.size() - z_.avail_out;
}

GzipFileBuf::int_type GzipFileBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (eof_ || !error_.empty()) return traits_type::eof();
  const size_t n = Fill();
  if (n == 0) {
    eof_ = true;
    return traits_type::eof();
  }
  delivered_ += static_cast<int64_t>(n);
  setg(out_.data(), out_.data(), out_.data() + n);
  return traits_type::to_int_type(*gptr());
}

}  // namespace roofline
