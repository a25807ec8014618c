#include "transport.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ss::lsp {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

constexpr std::string_view kMarker = "Content-Length:";

// A header line `Content-Length: <digits>\r\n` at `at`. Raw CR LF cannot occur inside a JSON
// string, so finding this inside a body means the body's declared length was too long.
enum class Marker { no, yes, incomplete };
Marker header_at(std::string_view text, size_t at) {
  size_t i = at + kMarker.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  size_t digits = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return Marker::incomplete;
  if (i == digits) return Marker::no;
  if (text[i] != '\r') return Marker::no;
  if (i + 1 == text.size()) return Marker::incomplete;
  return text[i + 1] == '\n' ? Marker::yes : Marker::no;
}

}  // namespace

void FrameReader::feed(std::string_view bytes) {
  buffer_.append(bytes);
  while (step()) {
  }
  // Drop what was consumed, at most once per feed, so a large body arriving in chunks is not
  // copied again and again.
  if (position_ > 0) {
    buffer_.erase(0, position_);
    marker_scan_ -= std::min(marker_scan_, position_);
    position_ = 0;
  }
}

void FrameReader::consume_to(size_t position) { position_ = position; }

bool FrameReader::step() { return in_body_ ? read_body() : read_header(); }

bool FrameReader::read_header() {
  std::string_view rest = std::string_view(buffer_).substr(position_);
  if (rest.empty()) return false;
  size_t end = rest.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (rest.size() > 65536) {  // no header this long: junk, keep only a possible partial marker
      handler_.warning("skipped " + std::to_string(rest.size() - 32) + " bytes that are not a message header");
      consume_to(buffer_.size() - 32);
    }
    return false;
  }
  std::string_view block = rest.substr(0, end);
  consume_to(position_ + end + 4);
  // The last Content-Length in the block wins; anything before its line is junk left over from a
  // frame whose declared length was too short.
  size_t found = std::string_view::npos;
  for (size_t i = 0; i + kMarker.size() <= block.size(); ++i)
    if (equals_ignoring_case(block.substr(i, kMarker.size()), kMarker)) found = i;
  if (found == std::string_view::npos) {
    handler_.bad_frame("a message header without Content-Length");
    return true;
  }
  size_t line_start = block.rfind('\n', found);
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  if (found != line_start) handler_.warning("skipped " + std::to_string(found) + " bytes before a message header");
  std::string_view value = block.substr(found + kMarker.size());
  value = value.substr(0, value.find('\r'));
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  size_t length = 0;
  bool valid = !value.empty() && value.size() <= 12;
  for (char c : value) {
    if (!std::isdigit(static_cast<unsigned char>(c))) valid = false;
    else length = length * 10 + static_cast<size_t>(c - '0');
  }
  if (!valid || length > kMaxBody) {
    handler_.bad_frame("Content-Length `" + std::string(value.substr(0, 40)) + "` is not a usable length");
    return true;
  }
  in_body_ = true;
  body_length_ = length;
  marker_scan_ = position_;
  return true;
}

bool FrameReader::read_body() {
  size_t body_start = position_;
  size_t available = buffer_.size() - body_start;
  size_t window_end = body_start + std::min(available, body_length_);
  // Search what arrived of this body for the start of the next message.
  std::string_view all(buffer_);
  for (size_t at = all.find(kMarker, marker_scan_); at != std::string_view::npos && at < window_end;
       at = all.find(kMarker, at + 1)) {
    Marker m = header_at(all, at);
    if (m == Marker::incomplete) {
      marker_scan_ = at;
      return false;
    }
    if (m == Marker::yes) {
      handler_.warning("Content-Length " + std::to_string(body_length_) + " runs into the next message; cut at " +
                       std::to_string(at - body_start) + " bytes");
      in_body_ = false;
      consume_to(at);
      handler_.message(all.substr(body_start, at - body_start));
      return true;
    }
  }
  marker_scan_ = window_end > kMarker.size() ? std::max(marker_scan_, window_end - kMarker.size()) : marker_scan_;
  if (available < body_length_) return false;
  in_body_ = false;
  consume_to(body_start + body_length_);
  handler_.message(all.substr(body_start, body_length_));
  return true;
}

// ---------------------------------------------------------------------------------------------

char StdioTransport::read_buffer_[65536];

StdioTransport::StdioTransport(uv_loop_t* loop, FrameReader::Handler handler, std::function<void()> on_end, int input_fd, int output_fd)
    : loop_(loop), input_fd_(input_fd), output_fd_(output_fd), reader_(std::move(handler)), on_end_(std::move(on_end)) {}

StdioTransport::~StdioTransport() = default;

bool StdioTransport::start() {
  in_type_ = uv_guess_handle(input_fd_);
  out_type_ = uv_guess_handle(output_fd_);
  spdlog::debug("stdin is {}, stdout is {}", uv_handle_type_name(in_type_) ? uv_handle_type_name(in_type_) : "?",
                uv_handle_type_name(out_type_) ? uv_handle_type_name(out_type_) : "?");
  if (in_type_ == UV_NAMED_PIPE || in_type_ == UV_TTY) {
    in_ = new Stream;
    int rc = in_type_ == UV_TTY ? uv_tty_init(loop_, &in_->tty, input_fd_, 1) : uv_pipe_init(loop_, &in_->pipe, 0);
    if (rc == 0 && in_type_ == UV_NAMED_PIPE) rc = uv_pipe_open(&in_->pipe, input_fd_);
    if (rc != 0) {
      spdlog::error("can't open stdin: {}", uv_strerror(rc));
      return false;
    }
    in_->pipe.data = this;
    rc = uv_read_start(reinterpret_cast<uv_stream_t*>(in_), on_alloc, on_read);
    if (rc != 0) {
      spdlog::error("can't read stdin: {}", uv_strerror(rc));
      return false;
    }
  } else {
    read_file_chunk();  // a regular file, or something libuv can't poll: read it on the thread pool
  }
  reading_ = true;
  if (out_type_ == UV_NAMED_PIPE || out_type_ == UV_TTY) {
    out_ = new Stream;
    int rc = out_type_ == UV_TTY ? uv_tty_init(loop_, &out_->tty, output_fd_, 0) : uv_pipe_init(loop_, &out_->pipe, 0);
    if (rc == 0 && out_type_ == UV_NAMED_PIPE) rc = uv_pipe_open(&out_->pipe, output_fd_);
    if (rc != 0) {
      spdlog::warn("can't open stdout as a stream ({}); writing synchronously", uv_strerror(rc));
      delete out_;
      out_ = nullptr;
    } else {
      out_->pipe.data = this;
    }
  }
  return true;
}

void StdioTransport::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) { *buf = uv_buf_init(read_buffer_, sizeof read_buffer_); }

void StdioTransport::on_read(uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
  auto* self = static_cast<StdioTransport*>(stream->data);
  if (n > 0) {
    self->reader_.feed(std::string_view(buf->base, static_cast<size_t>(n)));
  } else if (n < 0) {
    if (n != UV_EOF) spdlog::error("reading stdin: {}", uv_strerror(static_cast<int>(n)));
    self->end_of_input();
  }
}

void StdioTransport::read_file_chunk() {
  file_read_.data = this;
  uv_buf_t buf = uv_buf_init(file_buffer_, sizeof file_buffer_);
  int rc = uv_fs_read(loop_, &file_read_, input_fd_, &buf, 1, -1, on_file_read);
  if (rc != 0) {
    spdlog::error("can't read stdin: {}", uv_strerror(rc));
    end_of_input();
  }
}

void StdioTransport::on_file_read(uv_fs_t* req) {
  auto* self = static_cast<StdioTransport*>(req->data);
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  if (self->closed_) return;
  if (n > 0) {
    self->reader_.feed(std::string_view(self->file_buffer_, static_cast<size_t>(n)));
    if (!self->closed_) self->read_file_chunk();
    return;
  }
  if (n < 0) spdlog::error("reading stdin: {}", uv_strerror(static_cast<int>(n)));
  self->end_of_input();
}

void StdioTransport::end_of_input() {
  if (ended_) return;
  ended_ = true;
  if (on_end_) on_end_();
}

namespace {
struct WriteRequest {
  uv_write_t req;
  std::string data;
};
}  // namespace

void StdioTransport::send(std::string_view body) {
  std::string frame = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  frame.append(body);
  if (out_ && !closed_) {
    auto* w = new WriteRequest;
    w->data = std::move(frame);
    uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(out_), &buf, 1, [](uv_write_t* req, int status) {
      if (status < 0) spdlog::error("writing stdout: {}", uv_strerror(status));
      delete reinterpret_cast<WriteRequest*>(req);
    });
    if (rc != 0) {
      spdlog::error("writing stdout: {}", uv_strerror(rc));
      delete w;
    }
    return;
  }
  // A file or an unknown kind of stdout: write it all now.
  const char* p = frame.data();
  size_t left = frame.size();
  while (left > 0) {
    ssize_t n = ::write(output_fd_, p, left);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      spdlog::error("writing stdout: {}", std::strerror(errno));
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void StdioTransport::close() {
  if (closed_) return;
  closed_ = true;
  if (in_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(in_));
    uv_close(reinterpret_cast<uv_handle_t*>(in_), [](uv_handle_t* h) { delete reinterpret_cast<Stream*>(h); });
    in_ = nullptr;
  } else if (reading_ && !ended_) {
    uv_cancel(reinterpret_cast<uv_req_t*>(&file_read_));
  }
  if (out_) {
    // uv_close runs after queued writes have been handed to the kernel; shutdown waits for them.
    auto* shutdown = new uv_shutdown_t;
    Stream* out = out_;
    out_ = nullptr;
    int rc = uv_shutdown(shutdown, reinterpret_cast<uv_stream_t*>(out), [](uv_shutdown_t* req, int) {
      uv_close(reinterpret_cast<uv_handle_t*>(req->handle), [](uv_handle_t* h) { delete reinterpret_cast<Stream*>(h); });
      delete req;
    });
    if (rc != 0) {
      delete shutdown;
      uv_close(reinterpret_cast<uv_handle_t*>(out), [](uv_handle_t* h) { delete reinterpret_cast<Stream*>(h); });
    }
  }
}

}  // namespace ss::lsp
