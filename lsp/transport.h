// JSON-RPC's base protocol over stdio: Content-Length framing, read and written with libuv.
#pragma once
#include <uv.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ss::lsp {

// Splits a byte stream into message bodies. Never gives up: a header without a usable
// Content-Length is reported and skipped, and a Content-Length that runs into the next message's
// header is cut short there, so one bad frame costs only itself.
class FrameReader {
 public:
  struct Handler {
    std::function<void(std::string_view body)> message;
    std::function<void(std::string_view problem)> bad_frame;  // the peer should get a ParseError
    std::function<void(std::string_view problem)> warning;    // logged only
  };
  explicit FrameReader(Handler handler) : handler_(std::move(handler)) {}
  void feed(std::string_view bytes);

  static constexpr size_t kMaxBody = size_t{1} << 30;

 private:
  bool step();  // false: needs more bytes
  bool read_header();
  bool read_body();
  void consume_to(size_t position);

  Handler handler_;
  std::string buffer_;
  size_t position_ = 0;  // consumed bytes at the front of buffer_
  bool in_body_ = false;
  size_t body_length_ = 0;
  size_t marker_scan_ = 0;  // how far the body has been searched for a next header
};

// Frames bodies onto stdout and feeds stdin into a FrameReader. stdin and stdout may be pipes,
// terminals or files; other descriptors may stand for them (a test's pipes).
class StdioTransport {
 public:
  StdioTransport(uv_loop_t* loop, FrameReader::Handler handler, std::function<void()> on_end, int input_fd = 0, int output_fd = 1);
  ~StdioTransport();
  bool start();
  void send(std::string_view body);
  void close();  // stops reading and closes the handles once queued writes are done

 private:
  static void on_alloc(uv_handle_t*, size_t, uv_buf_t*);
  static void on_read(uv_stream_t*, ssize_t, const uv_buf_t*);
  static void on_file_read(uv_fs_t*);
  void read_file_chunk();
  void end_of_input();

  uv_loop_t* loop_;
  int input_fd_, output_fd_;
  FrameReader reader_;
  std::function<void()> on_end_;
  uv_handle_type in_type_ = UV_UNKNOWN_HANDLE, out_type_ = UV_UNKNOWN_HANDLE;
  union Stream {
    uv_pipe_t pipe;
    uv_tty_t tty;
  };
  Stream* in_ = nullptr;
  Stream* out_ = nullptr;
  uv_fs_t file_read_{};
  char file_buffer_[65536];
  bool reading_ = false, ended_ = false, closed_ = false;
  static char read_buffer_[65536];
};

}  // namespace ss::lsp
