// A read-only stream over a file that is either plain or gzip / zlib compressed (detected from
// its first bytes), decompressed on the fly in fixed-size chunks: memory does not grow with the
// file.
#ifndef ROOFLINE_SRC_PROFILE_TORCH_GZIP_STREAM_H_
#define ROOFLINE_SRC_PROFILE_TORCH_GZIP_STREAM_H_

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

/// Plain-or-gzip file as a std::streambuf (for nlohmann::json's stream input).
class GzipFileBuf : public std::streambuf {
 public:
  GzipFileBuf() = default;
  ~GzipFileBuf() override;
  GzipFileBuf(const GzipFileBuf&) = delete;
  GzipFileBuf& operator=(const GzipFileBuf&) = delete;

  /// Opens `path`; false with error() set when it cannot be read.
  bool Open(const std::string& path);
  /// True when the content is gzip or zlib compressed.
  bool compressed() const { return compressed_; }
  /// Decompressed bytes handed out so far (the parser's position, up to one buffer ahead).
  int64_t consumed() const { return delivered_ - (egptr() - gptr()); }
  /// The decompressed bytes buffered ahead of the reader (after an underflow: the next chunk).
  std::string_view Window() const { return {gptr(), static_cast<size_t>(egptr() - gptr())}; }
  /// Compressed (file) bytes read so far.
  int64_t file_bytes() const { return file_bytes_; }
  /// Set when reading stopped for a reason other than a clean end: truncated or corrupt
  /// compressed data, or a read error. Empty otherwise.
  const std::string& error() const { return error_; }
  /// True once the whole input was read to its clean end.
  bool at_clean_end() const { return eof_ && error_.empty(); }

 protected:
  int_type underflow() override;

 private:
  /// Fills `out_` with the next decompressed bytes; returns how many (0 at the end or on error).
  size_t Fill();
  bool ReadInput();

  FILE* file_ = nullptr;
  bool compressed_ = false;
  bool zinit_ = false;
  bool stream_ended_ = false;  ///< the current gzip member ended (another may follow)
  bool eof_ = false;
  z_stream z_{};
  std::vector<char> in_, out_;
  int64_t delivered_ = 0, file_bytes_ = 0;
  std::string error_;
};

}  // namespace roofline

#endif  // ROOFLINE_SRC_PROFILE_TORCH_GZIP_STREAM_H_
